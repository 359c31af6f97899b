/**
 * docs/writing-a-plugin.md, run: every code block of the page is written into a real repository
 * (the files it names), type-checked against flume's published types (`import … from 'flume'`
 * resolving through the package's own `exports`), and loaded by the built CLI from the page's config.
 * Then each example is shown to work: `flume plugins --json` lists each registration from its file;
 * `flume kinds` shows the kind; a launch runs the kind's stage with the page's driver (its options
 * reaching the agent's command line) on the fake agent in tmux, and the page's reader sees the
 * agent's commit; the page's driver written from nothing passes the conformance kit 8 of 8 on
 * `testHost()` (flume imported as an installed package) and runs from the CLI, a process for each of
 * launch, status, tell and stop; the page's host, loaded as a config loads it, runs a program and
 * reads its screen across processes.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import AjvModule from 'ajv';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { processRunning } from '../../../core/support/process.js';
import { git, PROJECT, write } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/wait.js';

const PAGE = join(PROJECT, 'docs', 'writing-a-plugin.md');

/** The page's code blocks, by the file each names (`<!-- file: acme/kind.ts -->` before the block). */
function blocks(): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of readFileSync(PAGE, 'utf8').matchAll(/<!-- file: (\S+) -->\n```(?:ts|js)\n([\s\S]*?)```/g)) found.set(match[1], match[2]);
  return found;
}

/**
 * A repository holding every block of the page as the file it names, with the page's config given
 * the test's agent settings (the fake agent, tmux on the test's socket) and `config` beside them,
 * committed, and flume installed in it (linked): what a newcomer has after copying the page.
 */
function pageRepo(config: Record<string, unknown> = {}, script: Parameters<typeof agentRepo>[0] = {}): AgentRepo {
  const t = agentRepo(script);
  // The page's config takes the place of the one the helper wrote (.flumerc.json would be found first).
  const settings = { ...JSON.parse(readFileSync(join(t.repo, '.flumerc.json'), 'utf8')), ...config };
  git(t.repo, 'rm', '-q', '.flumerc.json');
  for (const [file, code] of blocks()) {
    write(t.repo, file, file === 'flume.config.ts' ? code.replace('({\n  plugins:', `({\n  ...${JSON.stringify(settings)},\n  plugins:`) : code);
  }
  write(t.repo, 'package.json', JSON.stringify({ type: 'module', private: true }));
  write(t.repo, '.gitignore', 'node_modules\n');
  git(t.repo, 'add', '-A');
  git(t.repo, 'commit', '-qm', 'acme plugins');
  mkdirSync(join(t.repo, 'node_modules'));
  symlinkSync(PROJECT, join(t.repo, 'node_modules', 'flume'), 'dir');
  return t;
}

describe('the "Writing a plugin" page', { timeout: 120_000 }, () => {
  it('has a kind, a reader, two drivers (one of a program written from nothing) and a host, each in 40 lines, and a config loading them', ({ expect }) => {
    const files = blocks();
    expect([...files.keys()]).toEqual(['acme/kind.ts', 'acme/reader.ts', 'acme/driver.ts', 'acme/agent.mjs', 'acme/echo.ts', 'acme/host.ts', 'flume.config.ts']);
    for (const [file, code] of files) {
      const lines = code.trimEnd().split('\n');
      expect(lines.length, file).toBeLessThanOrEqual(40);
      // The program and its driver, at 100 columns too.
      if (file === 'acme/agent.mjs' || file === 'acme/echo.ts') expect(lines.filter((line) => line.length > 100), file).toEqual([]);
      // The public entry only: no path into flume's own files.
      for (const [, from] of code.matchAll(/from '([^']+)'/g)) expect(from === 'flume' || from.startsWith('node:'), `${file} imports ${from}`).toBe(true);
    }
    expect(readFileSync(join(PROJECT, 'README.md'), 'utf8')).toContain('docs/writing-a-plugin.md');
  });

  it('compiles, registers each example from its file, and runs them: a launch with its kind, driver and reader', async ({ expect, onTestFinished }) => {
    const t = pageRepo({}, {
      onPrompt: [{ match: 'Review what this brief names', actions: [{ run: ['sh', '-c', 'printf "# Looks fine\\n" > NOTES.md && git add NOTES.md && git commit -qm notes'] }, { say: 'Committed NOTES.md.' }] }],
    });
    onTestFinished(() => t.cleanup());
    expect(readFileSync(join(t.repo, 'flume.config.ts'), 'utf8')).toContain('"agents"');
    const files = blocks();

    // Compiled as a third party compiles it: flume installed (linked), its published types, strict.
    write(t.repo, 'tsconfig.json', JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(PROJECT, 'node_modules', '@types')] },
      include: [...files.keys()].filter((file) => file.endsWith('.ts')),
    }));
    const tsc = spawnSync(process.execPath, [join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(t.repo, 'tsconfig.json')], { cwd: t.repo, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const listed = await t.flume(['plugins', '--json']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const report = JSON.parse(listed.stdout);
    const validate = new AjvModule.default({ strict: false }).compile(JSON.parse(readFileSync(join(PROJECT, 'schemas', 'plugins.schema.json'), 'utf8')));
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    const from = (file: string) => join(t.repo, file);
    expect(report.kinds).toContainEqual({ name: 'review', plugin: 'acme:kind:review', from: from('acme/kind.ts') });
    expect(report.deliverables).toContainEqual({ type: 'notes', plugin: 'acme:deliverable:notes', from: from('acme/reader.ts') });
    expect(report.agents).toContainEqual({ key: 'claude-reviewer', plugin: 'acme:agent:claude-reviewer', from: from('acme/driver.ts') });
    expect(report.agents).toContainEqual({ key: 'acme-echo', plugin: 'acme:agent:echo', from: from('acme/echo.ts') });
    expect(report.hosts).toContainEqual({ key: 'background', plugin: 'acme:host:background', from: from('acme/host.ts') });
    expect(report.hooks).toContainEqual({ hook: 'startAgent', key: 'claude-reviewer', plugin: 'acme:agent:claude-reviewer', from: from('acme/driver.ts') });
    expect(report.hosts).toContainEqual({ key: 'tmux', plugin: 'flume:host:tmux', from: 'built-in' });
    expect(report.config).toBe(from('flume.config.ts'));

    const kinds = JSON.parse((await t.flume(['kinds', '--json'])).stdout).kinds;
    expect(kinds).toContainEqual(expect.objectContaining({ name: 'review', declaredBy: 'acme:kind:review', stages: [{ name: 'notes', deliverable: 'notes', agent: 'claude-reviewer' }] }));

    // The driver's options reach what it starts: its plan carries the system prompt the config gave.
    const dry = await t.flume(['launch', '--kind', 'review', '--name', 'one', '--brief', 'Review README.md.', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('You review for acme; you never edit code.');

    const launched = await t.flume(['launch', '--kind', 'review', '--name', 'one', '--brief', 'Review README.md.', '--no-watch']);
    expect(launched.code, launched.stderr + launched.stdout).toBe(0);
    let place = await t.place('review/one');
    expect(place.stage.agent.driver).toBe('claude-reviewer');
    expect(place.stage.delivery).toBe('taken');
    // The page's reader sees the agent's commit of NOTES.md (status reads each stage's deliverable).
    expect(place.stage.deliverable).toBe('notes');
    place = await waitFor(async () => ((p) => (p.stage.state === 'delivered' ? p : undefined))(await t.place('review/one')), 'the review stage delivered');
    expect(place.stage).toMatchObject({ state: 'delivered', delivered: { what: 'NOTES.md: Looks fine' } });
  });

  it('passes the conformance kit 8 of 8 with the driver written from nothing, on testHost(), flume installed as a package', async ({ expect, onTestFinished }) => {
    const t = pageRepo();
    onTestFinished(() => t.cleanup());
    // The harness the page describes: each scenario's args, a records folder of its own that taken() reads.
    write(t.repo, 'kit.ts', `import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl } from 'flume';
import { driverConformance, testHost, type ConformanceScenario } from 'flume/testing';
import echo from './acme/echo.ts';

const ARGS: Record<ConformanceScenario, string[]> = { answers: [], asks: ['--ask'], 'drops-first': ['--drop', '1'], 'drops-all': ['--drop', '99'], 'never-up': ['--no-such-option'] };
const suite = driverConformance({
  agent: 'acme-echo',
  host: testHost(),
  async scenario(scenario, { root }) {
    const dir = join(root, 'acme-' + scenario);
    mkdirSync(dir, { recursive: true });
    const taken = () => readdirSync(dir).flatMap((file) => readJsonl<{ type: string; text: string }>(join(dir, file))).filter((entry) => entry.type === 'prompt').map((entry) => entry.text);
    return { plugins: [echo({ args: ARGS[scenario], dir })], taken };
  },
  timeouts: { startMs: 15_000, promptMs: 4_000, settleMs: 10_000, draftMs: 1_500 },
});
const results: Array<{ id: string; error?: string }> = [];
for (const check of suite.checks) results.push(await check.run().then(() => ({ id: check.id }), (error: Error) => ({ id: check.id, error: error.message })));
await suite.close();
process.stdout.write(JSON.stringify(results));
`);
    // Loaded as a TypeScript test file is (jiti), \`flume\` and \`flume/testing\` resolved through the installed package.
    write(t.repo, 'run.mjs', `import { createJiti } from ${JSON.stringify(join(PROJECT, 'node_modules', 'jiti', 'lib', 'jiti.mjs'))};
await createJiti(import.meta.url).import('./kit.ts');
`);
    // Not spawnSync: the test's own writes (its repository's trust) go on meanwhile.
    const run = await promisify(execFile)(process.execPath, ['run.mjs'], { cwd: t.repo, env: t.env, encoding: 'utf8', timeout: 100_000 });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(['taken', 'screen', 'characters', 'resend', 'never-started', 'never-up', 'tell', 'stop'].map((id) => ({ id })));
  });

  it('runs the driver written from nothing from the CLI: launched by one process, read, told and stopped by others', async ({ expect, onTestFinished }) => {
    // A kind of the repository's own whose stage names the page's driver; its deliverable never comes, so the agent stays.
    const kind = { name: 'echo', stages: [{ name: 'notes', prompt: 'Notes on {brief}', deliverable: { type: 'notes', path: 'DONE.md' }, agent: 'acme-echo' }] };
    const t = pageRepo({ kinds: [kind] });
    onTestFinished(() => t.cleanup());
    const heading = async (text: string) => {
      let shown = '';
      await waitFor(() => {
        try {
          shown = git(t.repo, 'show', 'echo/one:NOTES.md');
        } catch {
          shown = '(no NOTES.md on echo/one)';
        }
        return shown === `# ${text}`;
      }, `NOTES.md to read "# ${text}"`).catch(() => undefined);
      return shown;
    };
    const launched = await t.flume(['launch', '--kind', 'echo', '--name', 'one', '--brief', 'the README', '--no-watch']);
    expect(launched.code, launched.stderr + launched.stdout).toBe(0);
    let place = await t.place('echo/one');
    expect(place.stage.agent).toMatchObject({ driver: 'acme-echo', host: 'tmux' });
    expect(place.stage.delivery).toBe('taken');
    // The agent took the prompt typed into its pane and committed it on the place's branch.
    expect(await heading('Notes on the README')).toBe('# Notes on the README');
    place = await waitFor(async () => ((p) => (p.stage.agent.state === 'idle' ? p : undefined))(await t.place('echo/one')), 'the echo agent idle');

    // A tell of two lines: the driver sends it as the one line the program reads, and confirms that line in the record.
    const told = await t.flume(['tell', 'echo/one', 'Now the LICENSE\nand the NOTICE', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: true, sends: 1 });
    expect(await heading('Now the LICENSE and the NOTICE')).toBe('# Now the LICENSE and the NOTICE');

    // Its process, as tmux knows it (status names the pane, not the pid).
    const socket = join(t.state, 'tmux', 'flume.sock');
    const pid = Number(execFileSync('tmux', ['-S', socket, 'display-message', '-p', '-t', place.stage.agent.pane, '#{pane_pid}'], { encoding: 'utf8' }));
    expect(processRunning(pid)).toBe(true);
    const stopped = await t.flume(['stop', 'echo/one', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    // Gone when stop returned (a zombie tmux has yet to reap does not run).
    expect(processRunning(pid)).toBe(false);
    expect((await t.place('echo/one')).stage.agent.state).toBe('exited');
  });

  it('runs the page\'s host across processes: opened by one, its screen read, typing refused and closed by others', async ({ expect, onTestFinished }) => {
    const t = agentRepo();
    onTestFinished(() => t.cleanup());
    write(t.repo, 'acme/host.ts', blocks().get('acme/host.ts')!);
    // Each step a process of its own, as launch, status and stop are: the page's host loaded as a
    // config's plugin is (jiti, `flume` resolved to the built flume), the state folder the test's own.
    write(t.repo, 'step.mjs', `import { createJiti } from ${JSON.stringify(join(PROJECT, 'node_modules', 'jiti', 'lib', 'jiti.mjs'))};
const jiti = createJiti(import.meta.url, { alias: { flume: ${JSON.stringify(join(PROJECT, 'dist', 'core', 'index.js'))} }, moduleCache: false, fsCache: false });
const { backgroundHost: host } = await jiti.import(${JSON.stringify(join(t.repo, 'acme', 'host.ts'))});
const [method, ...args] = process.argv.slice(2).map((arg) => JSON.parse(arg));
const answer = await host[method](...args).then((value) => ({ value }), (error) => ({ error: error.code ?? error.message }));
process.stdout.write(JSON.stringify(answer ?? null));
`);
    const step = (method: string, ...args: unknown[]) => {
      const out = spawnSync(process.execPath, [join(t.repo, 'step.mjs'), JSON.stringify(method), ...args.map((arg) => JSON.stringify(arg))], { cwd: t.repo, env: t.env, encoding: 'utf8' });
      expect(out.stderr).toBe('');
      return JSON.parse(out.stdout) as { value?: any; error?: string };
    };
    expect(step('available').value).toBe(true);
    const opened = step('open', { title: 'acme', cwd: t.repo, argv: ['/bin/sh', '-c', 'echo "hello from $ACME"; exec sleep infinity'], env: { ACME: 'the host', PATH: process.env.PATH ?? '' } }).value;
    expect(opened.pane).toBe(String(opened.pid));
    expect(step('identity', opened.pane).value).toBe(opened.identity);
    let screen: string | undefined;
    await waitFor(() => (screen = step('capture', opened.pane).value)?.includes('hello'), 'the pane to show its greeting').catch(() => undefined);
    expect(screen).toBe('hello from the host\n');
    expect(step('alive', opened.pane).value).toBe(true);
    expect(step('type', opened.pane, 'x').error).toBe('AGENT_NOT_UP');
    expect(step('identity', '1').value).toBeUndefined();
    expect(step('close', opened.pane).error).toBeUndefined();
    expect(step('alive', opened.pane).value).toBe(false);
    // Gone when close returned (a zombie whoever inherited it has yet to reap does not run), and no longer a pane.
    expect(processRunning(opened.pid)).toBe(false);
    expect(step('identity', opened.pane).value).toBeUndefined();

    // A pane whose program ended by itself is forgotten when closed all the same.
    const brief = step('open', { title: 'acme', cwd: t.repo, argv: ['/bin/true'], env: { PATH: process.env.PATH ?? '' } }).value;
    await waitFor(() => step('alive', brief.pane).value === false, 'the brief program to end');
    expect(step('identity', brief.pane).value).toBe(brief.identity);
    expect(step('close', brief.pane).error).toBeUndefined();
    expect(step('identity', brief.pane).value).toBeUndefined();
  });
});
