import { afterAll, describe, expect, it } from 'vitest';
import { flume, flumeEnv, makeRepo, remove, tempDir, write, git } from '../../helpers/repo.js';
import { launchedRecord } from '../../helpers/result-schema.js';

const state = tempDir('flume-state-');
const env = flumeEnv(state);
afterAll(() => remove(state));

describe('config', () => {
  it('loads flume.config.ts, importing flume\'s own defineConfig, and lists declared kinds with the built-ins', async () => {
    const repo = makeRepo({
      config: `import { defineConfig, defineKind } from 'flume';
const unit = defineKind({ name: 'unit', description: 'crew unit', branch: 'crew/{name}', stages: [
  { name: 'settle', prompt: 'Settle {name}', deliverable: 'commit' },
  { name: 'merge', prompt: 'Merge {branch}', deliverable: { type: 'landing' } },
]});
export default defineConfig({ kinds: [unit] });
`,
    });
    const result = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(result.code).toBe(0);
    const kinds = JSON.parse(result.stdout).kinds;
    expect(kinds.map((k: { name: string }) => k.name)).toEqual(['fix', 'change', 'question', 'unit']);
    expect(kinds[3]).toMatchObject({ branch: 'crew/{name}', stages: [{ name: 'settle', deliverable: 'commit' }, { name: 'merge', deliverable: 'landing' }] });
    expect(kinds[1].stages.map((s: { deliverable: string }) => s.deliverable)).toEqual(['openspec-change', 'openspec-tasks', 'report', 'landing']);
    remove(repo);
  });

  it('finds .flumerc.json and the package.json key', async () => {
    const rc = makeRepo({ config: JSON.stringify({ kinds: [{ name: 'rc', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] }), configFile: '.flumerc.json' });
    const pkg = makeRepo({ config: JSON.stringify({ name: 'x', flume: { kinds: [{ name: 'pkg', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] } }), configFile: 'package.json' });
    for (const [repo, name] of [[rc, 'rc'], [pkg, 'pkg']]) {
      const result = await flume(['kinds', '--repo', repo, '--json'], { env });
      expect(JSON.parse(result.stdout).kinds.map((k: { name: string }) => k.name)).toContain(name);
      remove(repo);
    }
  });

  it('reports every problem in a config at once, each with its path and a fix', async () => {
    const repo = makeRepo({
      config: `export default { target: 3, limits: { stuckAfter: 'soon' }, kinds: [{ name: 'Bad Name', stages: [] }, { name: 'ok', stages: [{ name: 's', prompt: 'p' }] }], extra: true };`,
    });
    const result = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe('BAD_CONFIG');
    const paths = error.details.problems.map((p: { path: string }) => p.path).sort();
    expect(paths).toEqual(['extra', 'kinds[0].name', 'kinds[0].stages', 'kinds[1].stages[0].deliverable', 'limits.stuckAfter', 'target'].sort());
    for (const problem of error.details.problems) expect(problem.fix).toBeTruthy();
    remove(repo);
  });

  it('checks what plugins provide against the registry: a host by its key, a driver\'s own options, a driver missing methods', async () => {
    const repo = makeRepo({
      config: `export default {
  agent: { host: 'paper' },
  agents: { 'claude-code': { binary: 'claude', colour: 'blue' } },
  kinds: [{ name: 'k', stages: [{ name: 's', prompt: 'p', deliverable: 'commit', agent: 'half' }] }],
  plugins: [{ name: 'acme:half', apply(flume) { flume.agents.register('acme:half', { key: 'half', start: async () => undefined }); } }],
};`,
    });
    const result = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe('BAD_CONFIG');
    const byPath = Object.fromEntries(error.details.problems.map((p: { path: string; message: string }) => [p.path, p.message]));
    // A host no plugin provides is refused by name; one a plugin provides is chosen as a built-in is (below).
    expect(byPath['agent.host']).toBe('no plugin provides the pane host "paper"');
    // The Claude Code driver's optionsSchema refuses what it does not know.
    expect(byPath['agents.claude-code']).toMatch(/additional properties \("colour"\)/);
    // A driver that only registers part of itself is refused before any place is made, naming its plugin.
    expect(byPath['agent half']).toMatch(/registered by acme:half has no waitForInput, send, resend, confirm, read, hasDraft, stop, watchPaths/);
    write(repo, 'flume.config.ts', `import { definePaneHost } from 'flume';
const paper = definePaneHost({ key: 'paper', canType: false, available: async () => true, open: async () => ({}), identity: async () => undefined, capture: async () => undefined, type: async () => {}, keys: async () => {}, alive: async () => false, close: async () => {} });
export default { agent: { host: 'paper' }, plugins: [{ name: 'acme:paper', apply(flume) { flume.hosts.register('acme:paper', paper); } }] };`);
    const chosen = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(chosen.code, chosen.stdout + chosen.stderr).toBe(0);
    remove(repo);
  });

  it('names the deliverable no plugin reads, and the plugin that failed', async () => {
    const repo = makeRepo({ config: `export default { kinds: [{ name: 'k', stages: [{ name: 's', prompt: 'p', deliverable: 'telepathy' }] }] };` });
    const result = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'BAD_CONFIG' });
    expect(result.stdout).toContain('telepathy');
    write(repo, 'flume.config.ts', `export default { plugins: [{ name: 'acme:broken', apply() { throw new Error('boom'); } }] };`);
    const broken = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(JSON.parse(broken.stdout).error).toMatchObject({ code: 'PLUGIN_FAILED', plugin: 'acme:broken' });
    remove(repo);
  });
});

describe('readying', () => {
  it('runs toolchain then setup in the place with a clean environment, and records a failed step', async () => {
    const repo = makeRepo({
      config: `export default {
  ready: {
    toolchain: [{ name: 'toolchain', run: ['sh', '-c', 'echo "tool $STEP_VAR ${'$'}{CALLER_SECRET:-none} $(pwd)" >> ready.log'], env: { STEP_VAR: 'given' } }],
    setup: [{ run: 'echo setup >> ready.log' }, { name: 'breaks', run: 'echo something went wrong; exit 3' }, { run: 'echo never >> ready.log' }],
  },
};`,
    });
    git(repo, 'add', '-A');
    const result = await flume(['launch', '--repo', repo, '--kind', 'question', '--name', 'q', '--brief', 'why?', '--no-start', '--json'], { env: { ...env, CALLER_SECRET: 'leaked' } });
    // The place is made, but a step failed: launch's "made, not going" code.
    expect(result.code).toBe(3);
    const place = launchedRecord(result.stdout);
    expect(place.ready).toMatchObject({ state: 'failed', failed: { step: 'breaks', exitCode: 3 } });
    expect(place.ready.failed.tail).toContain('something went wrong');
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(`${place.path}/ready.log`, 'utf8')).toBe(`tool given none ${place.path}\nsetup\n`);
    const status = JSON.parse((await flume(['status', '--repo', repo, '--json'], { env })).stdout);
    expect(status.places[0].ready.failed).toMatchObject({ step: 'breaks', exitCode: 3 });
    remove(repo);
  });

  it('runs nothing for a repository that declares nothing, and lets a beforeReady plugin add a step', async () => {
    const plain = makeRepo();
    const made = JSON.parse((await flume(['launch', '--repo', plain, '--kind', 'fix', '--name', 'a', '--brief', 'b', '--no-start', '--json'], { env })).stdout);
    expect(made.place.ready.state).toBe('none');
    remove(plain);
    const repo = makeRepo({
      config: `export default { plugins: [{ name: 'acme:ready', apply(flume) { flume.hooks.beforeReady.tapPromise('acme:ready', async (ctx) => { ctx.setup.push({ name: 'added', run: 'touch added-by-plugin' }); }); } }] };`,
    });
    const result = JSON.parse((await flume(['launch', '--repo', repo, '--kind', 'fix', '--name', 'a', '--brief', 'b', '--no-start', '--json'], { env })).stdout);
    expect(result.place.ready.state).toBe('ready');
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${result.place.path}/added-by-plugin`)).toBe(true);
    remove(repo);
  });
});
