/**
 * What runs of a repository's config is exactly what was trusted and probed: a data config follows
 * no `$import`, every module a config loads (by any loader, inside the repository or not) is part of
 * what the probe checked, and a config file swapped between two texts never runs the one not
 * trusted. Each module here leaves a line in a marker file when it runs, so "it did not run" is read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flume, flumeEnv, makeRepo, remove, tempDir, write } from '../../helpers/repo.js';

const marks = tempDir('flume-marks-');
const made: string[] = [marks];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  made.forEach(remove);
});

const UNIT = { name: 'unit', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] };

function fresh(extra: Record<string, string> = {}): Record<string, string> {
  const state = tempDir('flume-state-');
  made.push(state);
  return flumeEnv(state, { FLUME_CONFIG_TIMEOUT_MS: '3000', ...extra });
}

function repo(config: string, configFile: string, files: Record<string, string> = {}, trusted = true): string {
  const root = makeRepo({ config, configFile, trusted });
  for (const [name, text] of Object.entries(files)) write(root, name, text);
  made.push(root);
  return root;
}

/** A module that appends `line` to the marker `name` when it runs, then (with `loop`) never finishes. */
function marking(name: string, line: string, body = '', loop = false): string {
  return `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(join(marks, name))}, ${JSON.stringify(line + '\n')});\n${loop ? 'while (true) {}\n' : ''}${body}`;
}

const marked = (name: string) => (existsSync(join(marks, name)) ? readFileSync(join(marks, name), 'utf8') : '');

async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = Date.now();
  const result = await fn();
  return { result, ms: Date.now() - start };
}

describe('loading a config', () => {
  it('a JSON or YAML config (package.json key too) that asks to "$import" a module is refused, naming it, and the module never runs', async () => {
    // The imported module would loop; refused before loading, each answer comes well inside the limit (a wide
    // one, since a loaded machine spends seconds on flume's own start).
    const env = fresh({ FLUME_CONFIG_TIMEOUT_MS: '8000' });
    const looping = { 'inc.mjs': marking('import', 'ran', 'export default {};\n', true) };
    const roots = [
      repo(JSON.stringify({ $import: './inc.mjs', kinds: [UNIT] }), '.flumerc.json', looping),
      repo(JSON.stringify({ name: 'x', flume: { $import: ['./inc.mjs'] } }), 'package.json', looping),
      repo('$import: ./inc.mjs\nkinds: []\n', '.flumerc.yaml', looping),
      repo('$import: ./inc.mjs\n', '.flumerc', looping),
    ];
    for (const root of roots) {
      const kinds = await timed(() => flume(['kinds', '--repo', root, '--json'], { env }));
      expect(kinds.result.code, kinds.result.stdout + kinds.result.stderr).toBe(1);
      const error = JSON.parse(kinds.result.stdout).error;
      expect(error.code).toBe('BAD_CONFIG');
      expect(error.message).toContain('"$import" "./inc.mjs"');
      expect(error.fix).toContain(`flume trust --repo ${root}`);
      // Refused as it reads, never run: the looping module marks nothing (below), so nothing waited for a limit.
      const status = await timed(() => flume(['status', '--repo', root, '--json'], { env }));
      expect(status.result.code).toBe(0);
      expect(JSON.parse(status.result.stdout).repositories[0].error?.code ?? 'no places').toMatch(/BAD_CONFIG|no places/);
    }
    expect(marked('import')).toBe('');
  });

  it('a module the config imports, and a plugin outside the repository, are part of what was probed: once either hangs, kinds names it within the limit', async () => {
    // A limit the two configs that load well meet on a loaded machine too (3 s did not, beside the whole suite).
    const env = fresh({ FLUME_CONFIG_TIMEOUT_MS: '8000' });
    const outside = tempDir('flume-plugin-');
    made.push(outside);
    const plugin = join(outside, 'plugin.mjs');
    const kindPlugin = (body: string) => `${body}export default { name: 'acme:kind', apply(flume) { flume.kinds.register('acme:kind', ${JSON.stringify({ ...UNIT, name: 'acme' })}); } };\n`;
    writeFileSync(plugin, kindPlugin("import { helper } from './helper.mjs';\n"));
    writeFileSync(join(outside, 'helper.mjs'), 'export const helper = 1;\n');
    const imports = repo("import { kinds } from './inc.mjs';\nexport default { kinds };\n", 'flume.config.mjs', { 'inc.mjs': `export const kinds = ${JSON.stringify([UNIT])};\n` });
    const absolute = repo(JSON.stringify({ plugins: [plugin] }), '.flumerc.json');
    for (const [root, kind] of [[imports, 'unit'], [absolute, 'acme']]) {
      const ok = await flume(['kinds', '--repo', root, '--json'], { env });
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).kinds.map((k: { name: string }) => k.name)).toContain(kind);
    }
    // Each turns into a module that never finishes: the one the config imports, the one the plugin imports.
    write(imports, 'inc.mjs', marking('inc', 'ran', `export const kinds = [];\n`, true));
    writeFileSync(join(outside, 'helper.mjs'), marking('helper', 'ran', 'export const helper = 1;\n', true));
    for (const root of [imports, absolute]) {
      const hung = await timed(() => flume(['kinds', '--repo', root, '--json'], { env }));
      expect(hung.result.code, hung.result.stdout + hung.result.stderr).toBe(1);
      const error = JSON.parse(hung.result.stdout).error;
      expect(error.code).toBe('CONFIG_HUNG');
      expect(error.fix).toContain('flume trust --repo');
      expect(hung.ms).toBeGreaterThanOrEqual(8000);
    }
    // They ran in the probe only (once each), never in flume's own process, which would not have answered.
    expect(marked('inc')).toBe('ran\n');
    expect(marked('helper')).toBe('ran\n');
  });

  it('a config file swapped between its trusted text and another never runs the other', async () => {
    // The file's 3 s probe limit is for the configs that hang; on a loaded machine the probe of a
    // config being swapped as fast as it goes can take longer, which is no part of what this guards.
    const env = fresh({ FLUME_CONFIG_TIMEOUT_MS: '30000' });
    const trusted = marking('swap', 'trusted', `export default { kinds: ${JSON.stringify([UNIT])} };\n`);
    const other = marking('swap', 'UNTRUSTED', `export default { kinds: ${JSON.stringify([UNIT])} };\n`);
    const root = repo(trusted, 'flume.config.mjs', {}, false);
    const { trustRepository } = await import('../../../core/config/trust.js');
    await trustRepository(root, env.FLUME_STATE_DIR);
    // Two whole texts, each renamed over the config in turn, as a checkout does, as fast as it goes.
    writeFileSync(join(marks, 'a.mjs'), trusted);
    writeFileSync(join(marks, 'b.mjs'), other);
    const swapper = spawn(process.execPath, ['-e', `
      const { copyFileSync, renameSync } = require('node:fs');
      const [a, b, to] = process.argv.slice(1);
      for (let i = 0; ; i++) { copyFileSync(i % 2 ? b : a, to + '.tmp'); renameSync(to + '.tmp', to); }
    `, join(marks, 'a.mjs'), join(marks, 'b.mjs'), join(root, 'flume.config.mjs')], { stdio: 'ignore' });
    children.push(swapper);
    const codes: string[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        // Half the time afresh, so the probe runs too, not only flume's own load.
        if (i % 2 === 0) rmSync(join(env.FLUME_STATE_DIR, 'config-probes.json'), { force: true });
        // Processes: run in the test's own process beside the swapper, the probe of this config was
        // found hung (CONFIG_HUNG) in two runs of three on a loaded machine, and never as processes.
        const result = await flume(['kinds', '--repo', root, '--json'], { env, process: true });
        codes.push(result.code === 0 ? 'ok' : JSON.parse(result.stdout).error.code);
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    // Both outcomes came up (the swap raced every run), and the other text never ran.
    expect(codes.every((code) => code === 'ok' || code === 'UNTRUSTED_CONFIG'), codes.join(' ')).toBe(true);
    expect(codes, codes.join(' ')).toContain('ok');
    expect(marked('swap')).toContain('trusted');
    expect(marked('swap')).not.toContain('UNTRUSTED');
  });
});
