/**
 * What a third party meets first, through the built CLI on real repositories: `defineConfig` in each
 * form (object, promise, function, async function), typed precisely; plugins with options
 * (`['./x.ts', { … }]`) and a bad entry named; `flume/<subpath>` imports in a config; an import that
 * cannot be found named as such (not "syntax"); `flume plugins` refusing an untrusted config as
 * `flume kinds` does.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flume, flumeEnv, makeRepo, PROJECT, remove, tempDir, write } from '../../helpers/repo.js';

const state = tempDir('flume-state-');
const env = flumeEnv(state);
const made: string[] = [];
afterAll(() => [state, ...made].forEach(remove));

const KIND = `{ name: 'unit', description: 'from the config', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }`;

/** A trusted repository with `files` written before its first commit (the config among them). */
function repoWith(config: string, files: Record<string, string> = {}, trusted = true): string {
  const repo = makeRepo({ config, trusted });
  for (const [path, content] of Object.entries(files)) write(repo, path, content);
  made.push(repo);
  return repo;
}

async function kinds(repo: string): Promise<Array<{ name: string; description: string }>> {
  const result = await flume(['kinds', '--repo', repo, '--json'], { env });
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout).kinds;
}

async function failure(args: string[]): Promise<{ code: string; message: string; fix: string }> {
  const result = await flume([...args, '--json'], { env });
  expect(result.code).toBe(1);
  return JSON.parse(result.stdout).error;
}

describe('defineConfig', () => {
  it.each([
    ['an object', `defineConfig({ kinds: [${KIND}] })`],
    ['a promise', `defineConfig(Promise.resolve({ kinds: [${KIND}] }))`],
    ['a function', `defineConfig(() => ({ kinds: [${KIND}] }))`],
    ['an async function', `defineConfig(async () => { await new Promise((r) => setTimeout(r, 10)); return { kinds: [${KIND}] }; })`],
  ])('takes %s', async (_what, call) => {
    const repo = repoWith(`import { defineConfig } from 'flume';\nexport default ${call};\n`);
    expect(await kinds(repo)).toContainEqual(expect.objectContaining({ name: 'unit', description: 'from the config' }));
  });

  it('is typed precisely in every form: a misspelt key, a host that is no key and a bad plugin entry are compile errors', () => {
    // test/fixtures/define-config/forms.ts holds each form and, under @ts-expect-error, each mistake.
    const dir = tempDir('flume-types-');
    made.push(dir);
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(PROJECT, join(dir, 'node_modules', 'flume'), 'dir');
    write(dir, 'package.json', JSON.stringify({ type: 'module' }));
    write(dir, 'tsconfig.json', JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(PROJECT, 'node_modules', '@types')] },
      files: [join(PROJECT, 'test', 'fixtures', 'define-config', 'forms.ts')],
    }));
    const tsc = spawnSync(process.execPath, [join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});

describe('plugins with options', () => {
  const FACTORY = `import { definePlugin } from 'flume';
export default (options: { word?: string } = {}) => definePlugin({
  name: 'acme:kind:say',
  apply: (flume) => flume.kinds.register('acme:kind:say', { name: 'say', description: 'says ' + (options.word ?? 'nothing'), stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }),
});
`;

  it('hands a [module, options] entry\'s options to the function the module exports', async () => {
    const repo = repoWith(`export default { plugins: [['./acme/say.ts', { word: 'hello' }]] };\n`, { 'acme/say.ts': FACTORY });
    expect(await kinds(repo)).toContainEqual(expect.objectContaining({ name: 'say', description: 'says hello' }));
    const plain = repoWith(`export default { plugins: ['./acme/say.ts'] };\n`, { 'acme/say.ts': FACTORY });
    expect(await kinds(plain)).toContainEqual(expect.objectContaining({ name: 'say', description: 'says nothing' }));
  });

  it('names a malformed entry, and options given to a module that exports no function', async () => {
    const bad = repoWith(`export default { plugins: ['./acme/say.ts', ['./acme/say.ts', 'hello'], ['./acme/say.ts']] };\n`, { 'acme/say.ts': FACTORY });
    const error = await failure(['kinds', '--repo', bad]);
    expect(error.code).toBe('BAD_CONFIG');
    expect(error.message).toContain('plugins[1]: is not of an accepted form');
    expect(error.message).toContain('plugins[2]: is not of an accepted form');
    expect(error.message).not.toContain('plugins[0]');
    expect(error.fix + error.message).toContain('["./x.ts", { …options }]');

    const object = repoWith(`export default { plugins: [['./acme/plain.ts', { word: 'hello' }]] };\n`, {
      'acme/plain.ts': `import { definePlugin } from 'flume';\nexport default definePlugin({ name: 'acme:plain', apply() {} });\n`,
    });
    const given = await failure(['kinds', '--repo', object]);
    expect(given.message).toContain('plugins[0]: "./acme/plain.ts" is given options but exports no function to hand them to');
  });
});

describe('imports of flume in a config', () => {
  it('resolves every subpath flume exports', async () => {
    const repo = repoWith(`import { defineConfig } from 'flume';
import { countTasks } from 'flume/deliverables';
import { herdrPlugin } from 'flume/plugins/herdr';
import { driverConformance } from 'flume/testing';
import pkg from 'flume/package.json';
export default defineConfig({ kinds: [{ ...${KIND}, description: [typeof countTasks, typeof herdrPlugin, typeof driverConformance, pkg.name].join(' ') }] });
`);
    expect(await kinds(repo)).toContainEqual(expect.objectContaining({ name: 'unit', description: 'function function function flume' }));
  });

  it('names an import that cannot be found, not "syntax"', async () => {
    const repo = repoWith(`import { nothing } from 'acme-not-installed';\nexport default { kinds: [], target: String(nothing) };\n`);
    const error = await failure(['kinds', '--repo', repo]);
    expect(error.code).toBe('BAD_CONFIG');
    expect(error.message).toContain('imports "acme-not-installed", which cannot be found');
    expect(error.fix).not.toMatch(/syntax/i);
    expect(error.fix).toContain('flume/deliverables');
  });
});

describe('flume plugins', () => {
  it('refuses an untrusted config as flume kinds does, running none of it', async () => {
    const repo = repoWith(`throw new Error('ran');\n`, {}, false);
    const plugins = await failure(['plugins', '--repo', repo]);
    const kindsError = await failure(['kinds', '--repo', repo]);
    expect(plugins.code).toBe('UNTRUSTED_CONFIG');
    expect(plugins).toEqual(kindsError);
  });

  it('lists the built-ins of a repository without a config, as text too', async () => {
    const repo = repoWith(`export default {};\n`);
    const text = await flume(['plugins', '--repo', repo], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^kinds:\n  fix  flume:kind:fix  built-in$/m);
    expect(text.stdout).toMatch(/^hooks:\n  startAgent\(claude-code\)  flume:agent:claude-code  built-in$/m);
  });
});

describe('the logger handed to plugins', () => {
  it('writes a plugin\'s warnings to stderr, info and debug by FLUME_LOG, leaving --json output whole', async () => {
    const repo = repoWith(`export default { plugins: [{ name: 'acme:talk', apply(flume) {
  flume.logger.warn('acme warns'); flume.logger.info('acme informs'); flume.logger.debug('acme debugs');
} }] };\n`);
    const quiet = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(JSON.parse(quiet.stdout).kinds.length).toBeGreaterThan(0);
    expect(quiet.stderr).toBe('warn: acme warns\n');
    const loud = await flume(['kinds', '--repo', repo, '--json'], { env: { ...env, FLUME_LOG: 'debug' } });
    expect(loud.stderr).toBe('warn: acme warns\ninfo: acme informs\ndebug: acme debugs\n');
  });
});
