/**
 * A config that is data alone (JSON naming no plugin) runs no code, so no child process probes it
 * before it loads; a JSON config naming a plugin, and any config that is code, is probed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flume, flumeEnv, makeRepo, remove, tempDir, trustMade, write } from '../../helpers/repo.js';

const state = tempDir('flume-state-');
const env = flumeEnv(state);
const repos: string[] = [];
afterAll(() => [state, ...repos].forEach(remove));

const UNIT = { name: 'unit', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] };

/** The repositories the host's probe record names. */
function probed(): string[] {
  const file = join(state, 'config-probes.json');
  return existsSync(file) ? Object.keys(JSON.parse(readFileSync(file, 'utf8')).repositories ?? {}) : [];
}

function repo(config: string, configFile: string, files: Record<string, string> = {}): string {
  const root = makeRepo({ config, configFile });
  for (const [name, text] of Object.entries(files)) write(root, name, text);
  repos.push(root);
  return root;
}

describe('a config that is data alone', () => {
  it('loads without a probe; a JSON config naming a plugin and a TypeScript config are probed', async () => {
    const json = repo(JSON.stringify({ kinds: [UNIT] }), '.flumerc.json');
    const pkg = repo(JSON.stringify({ name: 'x', flume: { kinds: [UNIT] } }), 'package.json');
    const plugin = repo(JSON.stringify({ plugins: ['./acme.mjs'] }), '.flumerc.json', {
      'acme.mjs': `export default { name: 'acme:kind', apply(flume) { flume.kinds.register('acme:kind', ${JSON.stringify({ ...UNIT, name: 'acme' })}); } };\n`,
    });
    const code = repo(`export default ${JSON.stringify({ kinds: [UNIT] })};\n`, 'flume.config.ts');
    await trustMade(state);
    for (const [root, kind] of [[json, 'unit'], [pkg, 'unit'], [plugin, 'acme'], [code, 'unit']]) {
      const result = await flume(['kinds', '--repo', root, '--json'], { env });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).kinds.map((k: { name: string }) => k.name)).toContain(kind);
    }
    expect(probed().sort()).toEqual([plugin, code].sort());
  });
});
