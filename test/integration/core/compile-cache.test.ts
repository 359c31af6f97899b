/**
 * A config is compiled once per source text: the same config in another repository (a new checkout,
 * a place, a test's temp repository) loads without jiti's TypeScript compiler, and a config reading
 * `import.meta` still sees its own file.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRepo, PROJECT, remove, tempDir } from '../../helpers/repo.js';

const cache = tempDir('flume-cache-');
const repos: string[] = [];
afterAll(() => [cache, ...repos].forEach(remove));

/** Loads the config at `repo` in a process of its own; answers whether the compiler was loaded, and the kinds' descriptions. */
function load(repo: string): { compiled: boolean; descriptions: string[] } {
  const script = `
    import { createRequire } from 'node:module';
    const { loadConfig } = await import(${JSON.stringify(join(PROJECT, 'dist', 'core', 'config', 'load.js'))});
    const loaded = await loadConfig(${JSON.stringify(repo)});
    const compiled = Object.keys(createRequire(import.meta.url).cache).some((file) => file.endsWith('babel.cjs'));
    console.log(JSON.stringify({ compiled, descriptions: (loaded.config.kinds ?? []).map((kind) => kind.description) }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, FLUME_CACHE_DIR: cache }, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

const entries = () => readdirSync(join(cache, 'jiti', 'by-source')).length;

function repoWith(config: string): string {
  const repo = makeRepo({ config });
  repos.push(repo);
  return repo;
}

const KIND = (description: string) =>
  `import { defineConfig } from 'flume';
const description: string = ${description};
export default defineConfig({ kinds: [{ name: 'unit', description, stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] });
`;

describe('the compile cache', () => {
  it('compiles a config once per source text, in whichever repository it is found', () => {
    const first = load(repoWith(KIND("'one'")));
    expect(first).toEqual({ compiled: true, descriptions: ['one'] });
    expect(entries()).toBe(1);
    // The same text in another repository: taken from the cache, the compiler never loaded.
    expect(load(repoWith(KIND("'one'")))).toEqual({ compiled: false, descriptions: ['one'] });
    expect(entries()).toBe(1);
    // Another text is compiled afresh.
    expect(load(repoWith(KIND("'two'")))).toEqual({ compiled: true, descriptions: ['two'] });
    expect(entries()).toBe(2);
  });

  it('keeps a config that reads import.meta apart per file, so each sees its own path', () => {
    const a = repoWith(KIND('import.meta.url'));
    const b = repoWith(KIND('import.meta.url'));
    expect(load(a).descriptions).toEqual([`file://${a}/flume.config.ts`]);
    expect(load(b).descriptions).toEqual([`file://${b}/flume.config.ts`]);
  });
});
