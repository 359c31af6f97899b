/**
 * flume as a third party meets it: the package `npm pack` makes of this built checkout, unpacked
 * into a temp repository's node_modules (its dependencies linked from this checkout's, so nothing
 * is fetched), with a reader, a driver and a pane host written there against it. The plugins are
 * type-checked by tsc against the packed `.d.ts` (the root entry and the `flume/deliverables`
 * subpath), loaded by the packed CLI from the repository's `flume.config.ts`, and run a launch end
 * to end: the driver starts a tiny agent program through the host (flume's tmux host, wrapped, on
 * the test's own socket), its prompt is confirmed in the program's own record, the program commits
 * NOTE.md, and the third-party reader reads that commit as the stage's deliverable.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer } from '../../../agents/panes/tmux.js';
import { git, makeRepo, PROJECT, remove, tempDir, write, type CliResult } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/wait.js';

const PLUGINS: Record<string, string> = {
  'acme/reader.ts': `import { defineDeliverable, definePlugin, type DeliverableReading } from 'flume';
import { countTasks } from 'flume/deliverables';

const NAME = 'acme:deliverable:note';

/** \`acme-note\`: present once NOTE.md is committed with a heading; its ticked lines are its progress. */
export default definePlugin({
  name: NAME,
  apply(flume) {
    flume.deliverables.add(defineDeliverable({ type: 'acme-note', async read(request): Promise<DeliverableReading> {
      const text = await request.file('NOTE.md');
      const heading = text?.split('\\n').find((line) => line.startsWith('# '));
      if (!text || !heading) return { present: false };
      return { present: true, what: \`NOTE.md: \${heading.slice(2)}\`, progress: countTasks(text) };
    } }));
  },
});
`,
  'acme/host.ts': `import { appendFileSync } from 'node:fs';
import { definePaneHost, definePlugin, FlumeError } from 'flume';

/** \`acme-tmux\`: flume's tmux host, every pane it opens noted in ACME_HOST_LOG. */
export default definePlugin({
  name: 'acme:host:noted',
  apply(flume) {
    const tmux = flume.hosts.get('tmux');
    if (!tmux) throw new FlumeError('BAD_CONFIG', 'acme:host:noted wraps the tmux host.', { fix: 'Keep flume\\'s built-in plugins.' });
    flume.hosts.add(definePaneHost({
      key: 'acme-tmux',
      available: () => tmux.available(),
      async open(spec) {
        const opened = await tmux.open(spec);
        if (process.env.ACME_HOST_LOG) appendFileSync(process.env.ACME_HOST_LOG, \`\${spec.title} \${opened.pane}\\n\`);
        return opened;
      },
      identity: (pane) => tmux.identity(pane),
      capture: (pane, options) => tmux.capture(pane, options),
      type: (pane, text) => tmux.type(pane, text),
      keys: (pane, keys) => tmux.keys(pane, keys),
      alive: (pane) => tmux.alive(pane),
      close: (pane) => tmux.close(pane),
    }));
  },
});
`,
  'acme/driver.ts': `import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineDriver, definePlugin, FlumeError, type AgentHandle, type PaneHost } from 'flume';

const KEY = 'acme-echo';
const NAME = 'acme:agent:echo';
type Entry = { type: 'started' | 'prompt' | 'done'; text?: string };
const entries = (handle: AgentHandle): Entry[] =>
  existsSync(handle.transcriptPath!) ? readFileSync(handle.transcriptPath!, 'utf8').trim().split('\\n').map((line) => JSON.parse(line)) : [];

/** \`acme-echo\`: acme/agent.mjs in a pane of the acme-tmux host; its record is a JSONL file of its own. */
export default definePlugin({
  name: NAME,
  apply(flume) {
    const host = (): PaneHost => flume.hosts.get('acme-tmux') ?? (() => { throw new FlumeError('AGENT_START_FAILED', 'acme-echo runs on acme-tmux.', { fix: 'Add acme/host.ts.' }); })();
    const send = async (handle: AgentHandle, text: string) => { await host().type(handle.pane!, text); await host().keys(handle.pane!, ['Enter']); };
    const driver = defineDriver({
      key: KEY,
      async start(request, on) {
        const folder = join(request.place.repo, '.git', 'acme-echo');
        mkdirSync(folder, { recursive: true });
        const transcriptPath = join(folder, \`\${request.sessionId}.jsonl\`);
        const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ACME_TRANSCRIPT: transcriptPath };
        const opened = await on.open({ title: request.place.id, cwd: request.place.path, argv: [process.execPath, join(request.place.path, 'acme', 'agent.mjs')], env });
        return { driver: KEY, host: on.key, sessionId: request.sessionId, pane: opened.pane, pid: opened.pid, paneIdentity: opened.identity, transcriptPath, cwd: request.place.path, startedAt: new Date().toISOString() };
      },
      async waitForInput(handle, timeoutMs) {
        for (const until = Date.now() + timeoutMs; ; await sleep(100)) {
          if (!(await host().alive(handle.pane!))) return 'exited';
          if ((await host().capture(handle.pane!))?.trimEnd().endsWith('acme>')) return 'ready';
          if (Date.now() >= until) return 'slow';
        }
      },
      send,
      resend: send,
      confirm: async ({ handle, text }) => (entries(handle).some((e) => e.type === 'prompt' && e.text === text) ? 'taken' : 'not-yet'),
      async read(handle) {
        if (!(await host().alive(handle.pane!))) return { state: 'exited' };
        const last = entries(handle).at(-1);
        return last?.type === 'done' ? { state: 'idle', turnEnded: true } : last?.type === 'prompt' ? { state: 'working' } : { state: 'idle' };
      },
      hasDraft: async () => false,
      stop: (handle) => host().close(handle.pane!),
      watchPaths: (handle) => [handle.transcriptPath!],
    });
    flume.agents.register(NAME, driver);
  },
});
`,
  'acme/kind.ts': `import { defineKind, definePlugin } from 'flume';

export default definePlugin({
  name: 'acme:kind:note',
  apply: (flume) => flume.kinds.register('acme:kind:note', defineKind({
    name: 'note',
    description: 'One stage: the acme agent commits NOTE.md.',
    stages: [{ name: 'write', prompt: 'Note {brief}', deliverable: 'acme-note', agent: 'acme-echo' }],
  })),
});
`,
  // The agent: shows a prompt, and for each line typed records it, commits NOTE.md and records its turn's end.
  'acme/agent.mjs': `import { execFileSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const record = (entry) => appendFileSync(process.env.ACME_TRANSCRIPT, JSON.stringify(entry) + '\\n');
record({ type: 'started' });
process.stdout.write('acme> ');
createInterface({ input: process.stdin }).on('line', (text) => {
  record({ type: 'prompt', text });
  writeFileSync('NOTE.md', '# ' + text + '\\n\\n- [x] written\\n- [ ] read\\n');
  execFileSync('git', ['add', 'NOTE.md']);
  execFileSync('git', ['-c', 'user.name=acme', '-c', 'user.email=acme@example.com', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'note']);
  record({ type: 'done' });
  process.stdout.write('done\\nacme> ');
});
`,
  'flume.config.ts': `import { defineConfig } from 'flume';

export default defineConfig({
  agent: { host: 'acme-tmux' },
  limits: { promptTimeout: '5s', startTimeout: '15s' },
  plugins: ['./acme/host.ts', './acme/driver.ts', './acme/reader.ts', './acme/kind.ts'],
});
`,
};

const made: string[] = [];
let repo: string;
let state: string;
let installed: string;
let env: Record<string, string>;

/** The packed CLI, run in the repository with the test's own state folder (and so its own tmux socket). */
function packed(args: string[]): CliResult {
  const result = spawnSync(process.execPath, [join(installed, 'dist', 'bin', 'flume.js'), ...args], { cwd: repo, env, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  // Packed once per run of this file, from the checkout the suite's global setup built.
  const packs = tempDir('flume-pack-');
  made.push(packs);
  const [{ filename, files }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs], { cwd: PROJECT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  expect(files.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(['dist/core/index.d.ts', 'dist/deliverables/index.d.ts', 'schemas/sluice-record.schema.json']));
  // The published schemas are packed from schemas/, none at the package's top level.
  expect(files.filter((f: { path: string }) => f.path.endsWith('.schema.json')).map((f: { path: string }) => f.path).sort()).toEqual(readdirSync(join(PROJECT, 'schemas')).map((name) => `schemas/${name}`).sort());
  expect(files.some((f: { path: string }) => f.path.startsWith('test/') || f.path === 'flume.config.ts')).toBe(false);

  repo = makeRepo({ config: PLUGINS['flume.config.ts'], trusted: false });
  made.push(repo);
  for (const [file, code] of Object.entries(PLUGINS)) write(repo, file, code);
  write(repo, 'package.json', JSON.stringify({ type: 'module', private: true }));
  write(repo, '.gitignore', 'node_modules\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'acme plugins');
  // Installed as npm would: the package unpacked, its dependencies beside it (linked: offline).
  installed = join(repo, 'node_modules', 'flume');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(packs, filename), '-C', installed, '--strip-components=1']);
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  // Nothing of the repository's own runs (or is warned about: npm 11 names `prepare` too) when a user installs it.
  expect(Object.keys(pkg.scripts ?? {}).filter((name) => /^(pre|post)?(install|prepare)$/.test(name))).toEqual([]);
  for (const dep of Object.keys(pkg.dependencies)) {
    mkdirSync(join(repo, 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(PROJECT, 'node_modules', dep), join(repo, 'node_modules', dep), 'dir');
  }
  state = tempDir('flume-state-');
  made.push(state);
  env = { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state, ACME_HOST_LOG: join(state, 'acme-host.log'), GIT_CONFIG_NOSYSTEM: '1' };
});

afterAll(async () => {
  await killTmuxServer(join(state, 'tmux', 'flume.sock'));
  made.forEach(remove);
});

describe('the packed package, used by a third party', { timeout: 120_000 }, () => {
  it('type-checks the plugins against its .d.ts, resolves its subpaths, and runs a launch with them', async () => {
    expect(existsSync(join(installed, 'dist', 'core', 'index.d.ts'))).toBe(true);
    // Its subpaths resolve through the package's own exports, from the third party's folder.
    const resolved = execFileSync(process.execPath, ['-e', `for (const s of ['flume', 'flume/deliverables', 'flume/sluice-record.schema.json', 'flume/plugins/herdr', 'flume/testing']) console.log(import.meta.resolve(s))`, '--input-type=module'], { cwd: repo, encoding: 'utf8' });
    for (const line of resolved.trim().split('\n')) expect(line.startsWith(`file://${installed}/`), line).toBe(true);
    // The sluice reader finds the schema it publishes from where the package is installed.
    const schemaId = execFileSync(process.execPath, ['--input-type=module', '-e', `import { sluiceRecordSchema } from 'flume/deliverables'; console.log(sluiceRecordSchema().$id)`], { cwd: repo, encoding: 'utf8' });
    expect(schemaId.trim()).toBe('https://flume.dev/sluice-record.schema.json');
    // Every published schema, imported as a third party would by its exported name, is the file of that name in schemas/.
    const schemaNames = Object.keys(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).exports).filter((key) => key.endsWith('.schema.json')).map((key) => key.slice(2));
    expect(schemaNames.sort()).toEqual(readdirSync(join(PROJECT, 'schemas')).sort());
    const imported = execFileSync(process.execPath, ['--input-type=module', '-e', `for (const name of ${JSON.stringify(schemaNames)}) { const { default: schema } = await import('flume/' + name, { with: { type: 'json' } }); console.log(name, import.meta.resolve('flume/' + name), schema.$id); }`], { cwd: repo, encoding: 'utf8' });
    expect(imported.trim().split('\n')).toEqual(schemaNames.map((name) => `${name} file://${installed}/schemas/${name} https://flume.dev/${name}`));
    // The conformance kit a driver's author runs, from the package as installed.
    const checks = execFileSync(process.execPath, ['--input-type=module', '-e', `import { driverConformance } from 'flume/testing'; console.log(driverConformance({ agent: 'x', host: {}, scenario: async () => ({ plugins: [], taken: () => [] }) }).checks.map((c) => c.id).join(' '))`], { cwd: repo, encoding: 'utf8' });
    expect(checks.trim()).toBe('taken screen characters resend never-started never-up tell stop');
    // The host the kit's checks run on, and the helpers a driver of a program in a pane is built on.
    const host = execFileSync(process.execPath, ['--input-type=module', '-e', `import { testHost } from 'flume/testing'; import * as flume from 'flume'; const host = testHost(); console.log(host.key, await host.available(), ['openAgent', 'submit', 'resendInBox', 'closeAgent', 'readJsonl', 'waitFor'].map((name) => typeof flume[name]).join(' ')); await host.end();`], { cwd: repo, encoding: 'utf8' });
    expect(host.trim()).toBe(`tmux true ${Array(6).fill('function').join(' ')}`);

    write(repo, 'tsconfig.json', JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(PROJECT, 'node_modules', '@types')] },
      include: ['acme/*.ts', 'flume.config.ts'],
    }));
    const tsc = spawnSync(process.execPath, [join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(repo, 'tsconfig.json')], { cwd: repo, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const trust = packed(['trust', '--repo', repo]);
    expect(trust.code, trust.stderr + trust.stdout).toBe(0);
    const listed = packed(['plugins', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const report = JSON.parse(listed.stdout);
    expect(report.deliverables).toContainEqual({ type: 'acme-note', plugin: 'acme:deliverable:note', from: join(repo, 'acme', 'reader.ts') });
    expect(report.agents).toContainEqual({ key: 'acme-echo', plugin: 'acme:agent:echo', from: join(repo, 'acme', 'driver.ts') });
    expect(report.hosts).toContainEqual({ key: 'acme-tmux', plugin: 'acme:host:noted', from: join(repo, 'acme', 'host.ts') });

    const launched = packed(['launch', '--kind', 'note', '--name', 'one', '--brief', 'the packed package', '--no-watch']);
    expect(launched.code, launched.stderr + launched.stdout).toBe(0);
    // The driver started its program through the third-party host.
    expect(readFileSync(join(state, 'acme-host.log'), 'utf8')).toMatch(/^note\/one \S+\n$/);
    let place = JSON.parse(packed(['status', 'note/one', '--json']).stdout).places[0];
    expect(place.stage).toMatchObject({ delivery: 'taken', agent: { driver: 'acme-echo', host: 'acme-tmux' } });
    place = await waitFor(() => ((p) => (p.stage.state === 'delivered' ? p : undefined))(JSON.parse(packed(['status', 'note/one', '--json']).stdout).places[0]), 'the note stage delivered');
    expect(place.stage).toMatchObject({ state: 'delivered', deliverable: 'acme-note', delivered: { what: 'NOTE.md: Note the packed package' }, progress: { done: 1, total: 2 } });
  });
});
