/**
 * No secret leaks. An agent's environment (ANTHROPIC_API_KEY, GITHUB_TOKEN) never
 * stands in any process's argv, on any pane host: every `/proc/<pid>/cmdline` of the machine is read
 * while the agent runs. The agent still gets exactly the environment flume built, the script that
 * carried it is gone once the agent runs, and neither the place's state files nor its event log hold
 * a secret. Claude Code's `.claude.json` keeps its mode and owner through the pre-seed, and flume's
 * state folders are 700 (narrowed from an older flume's 755), its files 600.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { preseed } from '../../../agents/claude-code/preseed.js';
import { which } from '../../../core/support/exec.js';
import { rememberRepository } from '../../../core/state/host.js';
import { appendEvent, placesStateDir, withPlaceLock } from '../../../core/state/store.js';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { fakeHerdr, HERDR_PLUGIN_JS, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { herdrLaunch, launchLine } from '../../../plugins/herdr/launch-script.js';
import { git, makeRepo, remove } from '../../helpers/repo.js';
import { environOf, everyArgv, filesHolding, leaks, mode, watchArgv } from '../../helpers/proc.js';
import { launchedRecord } from '../../helpers/result-schema.js';

const hasTmux = which('tmux') !== undefined;

/** Fresh secrets per run, so a value found anywhere can only have come from this test. */
function secrets(): Record<string, string> {
  return {
    ANTHROPIC_API_KEY: `sk-ant-flume-secret-${randomBytes(12).toString('hex')}`,
    GITHUB_TOKEN: `ghp_flumesecret${randomBytes(12).toString('hex')}`,
  };
}

const commonDir = (repo: string) => git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');

let cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe.skipIf(!hasTmux)('the tmux host', () => {
  it('puts no value of the environment in any argv, and the program gets exactly that environment', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flume-secrets-')));
    const socket = join(dir, 'state', 'tmux', 'flume.sock');
    cleanups.push(() => remove(dir), () => killTmuxServer(socket));
    const secret = secrets();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TERM: 'xterm-256color',
      ...secret,
      // Every character sh could trip on, and a newline, must arrive as it was.
      FLUME_ODD: `it's "quoted" $HOME \`id\` \\ ; #{pane_id}\nsecond line`,
      EMPTY: '',
    };
    const program = join(dir, 'program.mjs');
    writeFileSync(program, "process.stdout.write('READY\\r\\n'); setInterval(() => {}, 1000);\n");
    const host = tmuxHost({ socket });
    const { pane, pid } = await host.open({ title: 'secrets', cwd: dir, argv: [process.execPath, program], env });
    await waitFor(async () => (await host.capture(pane!))?.includes('READY'), 'the program to start');

    // The scan sees the pane's program and the tmux server, so it reads what `ps` would.
    const all = everyArgv();
    expect(all.find((p) => p.pid === pid)?.argv).toContain(program);
    expect(all.some((p) => p.argv.startsWith('tmux') && p.argv.includes(socket))).toBe(true);
    expect(leaks(Object.values(secret))).toEqual([]);
    expect(environOf(pid!)).toEqual(env);
    // The script that carried the values is gone; its folder is the user's alone.
    expect(readdirSync(join(dir, 'state', 'tmux')).filter((name) => name.startsWith('env-'))).toEqual([]);
    expect(mode(join(dir, 'state', 'tmux'))).toBe('700');
    await host.close(pane!);
  });
});

/** A launch with the fake agent, the secrets in the caller's environment; `config` merged into the flume config. */
async function launchWithSecrets(config: Record<string, unknown> = {}, options: { env?: Record<string, string>; binary?: string } = {}) {
  const repo: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 30_000 }] }] }, config, options);
  cleanups.push(() => repo.cleanup());
  const secret = secrets();
  Object.assign(repo.env, secret);
  // Claude Code's config file exists, private, as it is on a machine where an API key was approved.
  const claudeJson = join(repo.configDir, '.claude.json');
  writeFileSync(claudeJson, JSON.stringify({ primaryApiKey: 'sk-ant-stored-key', projects: {} }), { mode: 0o600 });
  chmodSync(claudeJson, 0o600);
  return { repo, secret, claudeJson };
}

/** Launches the fix `name`, watching every argv on the machine while it does. */
async function launched(repo: AgentRepo, name: string, secret: Record<string, string>) {
  const stop = watchArgv(Object.values(secret));
  // A process of its own: flume's own argv is among those watched.
  const result = await repo.flume(['launch', '--kind', 'fix', '--name', name, '--brief', `Work ${name}.`, '--no-watch', '--json'], { process: true });
  expect(stop()).toEqual([]);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return launchedRecord(result.stdout);
}

/** What every launch must leave: no secret in any argv, state file or log; private folders and files. */
function expectNoSecretLeft(repo: AgentRepo, secret: Record<string, string>) {
  expect(leaks(Object.values(secret))).toEqual([]);
  expect(filesHolding(repo.state, Object.values(secret))).toEqual([]);
  expect(filesHolding(join(commonDir(repo.repo), 'flume'), Object.values(secret))).toEqual([]);
  expect(mode(repo.state)).toBe('700');
  expect(mode(join(commonDir(repo.repo), 'flume'))).toBe('700');
  const places = placesStateDir(commonDir(repo.repo));
  expect(mode(places)).toBe('700');
  const files = readdirSync(places).filter((name) => name.endsWith('.json') || name.endsWith('.jsonl'));
  expect(files.length).toBeGreaterThanOrEqual(2);
  for (const name of files) expect([name, mode(join(places, name))]).toEqual([name, '600']);
}

describe.skipIf(!hasTmux)('a launch on the tmux host', () => {
  it('hands the agent its secrets in its environment only: not in any argv, state file or event log', async () => {
    const { repo, secret, claudeJson } = await launchWithSecrets();
    const place = await launched(repo, 'secret', secret);
    const agent = place.stage.agent;
    expect(agent.pid).toBeGreaterThan(0);
    const environ = environOf(agent.pid);
    expect(environ).toMatchObject({ ...secret, CLAUDE_CONFIG_DIR: repo.configDir, CLAUDE_CODE_FORCE_SESSION_PERSISTENCE: '1' });
    // Nothing of the tmux server's own environment.
    expect(environ.TMUX).toBeUndefined();
    expect(environ.TMUX_PANE).toBeUndefined();
    expect(readdirSync(join(repo.state, 'tmux')).filter((name) => name.startsWith('env-'))).toEqual([]);
    expect(mode(join(repo.state, 'tmux'))).toBe('700');
    expectNoSecretLeft(repo, secret);
    // The pre-seed merged its keys into Claude Code's private file and left it private.
    const seeded = JSON.parse(readFileSync(claudeJson, 'utf8'));
    expect(seeded).toMatchObject({ primaryApiKey: 'sk-ant-stored-key', hasCompletedOnboarding: true });
    expect(mode(claudeJson)).toBe('600');
  });
});

describe.skipIf(!hasTmux)("the supervisor's own files", () => {
  it('are 600 in the 700 state folder, under a umask that would make them 644: its lock, its pass note, its log', async () => {
    const repo: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 30_000 }] }] });
    cleanups.push(() => repo.cleanup());
    const umask = process.umask(0o022);
    try {
      // Launched with a supervisor (no --no-watch): its files are the host state folder's.
      const result = await repo.flume(['launch', '--kind', 'fix', '--name', 'watched', '--brief', 'Work.', '--json'], { process: true });
      expect(result.code, result.stdout + result.stderr).toBe(0);
    } finally {
      process.umask(umask);
    }
    const files = ['watch.lock', 'watch.json', 'watch.log'];
    await waitFor(() => files.every((name) => existsSync(join(repo.state, name))), "the supervisor's files");
    expect(files.map((name) => [name, mode(join(repo.state, name))])).toEqual(files.map((name) => [name, '600']));
    expect(mode(repo.state)).toBe('700');
  });
});

describe.skipIf(!hasTmux)('a launch on the printed host', () => {
  it('prints a secret the config sets as a reference to the variable, never its value', async () => {
    const configSecret = `sk-ant-config-secret-${randomBytes(8).toString('hex')}`;
    const { repo, secret } = await launchWithSecrets({ agent: { host: 'printed' } }, { env: { ANTHROPIC_API_KEY: configSecret, FLUME_PLAIN: 'shown' } });
    const place = await launched(repo, 'printed', { ...secret, configSecret });
    const command: string[] = place.stage.agent.command;
    expect(command).toContain('ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"');
    expect(command).toContain('FLUME_PLAIN=shown');
    const human = await repo.flume(['status', 'fix/printed', '--repo', repo.repo]);
    expect(human.stdout).toContain(' ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY" ');
    // Its value is the config's, which the operator's shell lacks: the note under the command says to set it.
    expect(human.stdout).toMatch(/^ {2}note: set ANTHROPIC_API_KEY in the shell that runs it first/m);
    for (const text of [JSON.stringify(command), human.stdout]) expect(text).not.toContain(configSecret);
    expectNoSecretLeft(repo, { ...secret, configSecret });
  });
});

describe('the herdr launch plan', () => {
  it('puts secrets only in the sourced script, every other variable in --env, and neither in the line typed', () => {
    const secret = secrets();
    const plan = herdrLaunch({ title: 't', cwd: '/tmp', argv: ['/usr/bin/claude', '--session-id', 'x'], env: { PATH: '/usr/bin', PLAIN: 'shown', ...secret } }, '/state/herdr/launch-1.sh');
    expect(plan).toMatchObject({ kind: 'claude', env: ['PATH=/usr/bin:/usr/bin', 'PLAIN=shown'], args: ['--session-id', 'x'] });
    const holding = plan.script!.split('\n').filter((line) => Object.values(secret).some((value) => line.includes(value)));
    expect(holding).toEqual(Object.entries(secret).map(([name, value]) => `export ${name}=${value}`));
    expect(launchLine('/state/herdr/launch-1.sh', 'source')).toBe(" . '/state/herdr/launch-1.sh'");
    // A program herdr knows no kind of is exec'd by a script holding its whole environment, as before.
    expect(herdrLaunch({ title: 't', cwd: '/tmp', argv: ['/usr/bin/other'], env: secret }, '/s.sh')).toMatchObject({ env: [], args: [] });
    expect(launchLine('/state/herdr/launch-1.sh')).toBe(" exec env -i /bin/sh '/state/herdr/launch-1.sh'");
  });
});

describe.skipIf(!hasTmux)('a launch on the herdr host', () => {
  it('hands the agent its secrets through a sourced script only, which is gone once herdr has started the agent by name', async () => {
    const herdr: FakeHerdr = fakeHerdr({ running: true });
    cleanups.push(() => herdr.cleanup());
    const { repo, secret } = await launchWithSecrets({ agent: { host: 'auto' }, plugins: [HERDR_PLUGIN_JS] }, { binary: herdr.claude });
    Object.assign(repo.env, herdr.env);
    const place = await launched(repo, 'herdr', secret);
    expect(place.stage.agent.host).toBe('herdr');
    expect(herdr.callsOf('agent', 'start')).toHaveLength(1);
    const pid = await waitFor(() => readdirSync(join(repo.configDir, 'sessions')).map((name) => Number(name.replace('.json', '')))[0], 'the fake agent state file');
    const environ = environOf(pid);
    expect(environ).toMatchObject({ ...secret, CLAUDE_CONFIG_DIR: repo.configDir });
    // herdr's pane variables are kept, so herdr's own Claude Code integration can report from the agent.
    expect(environ.HERDR_PANE_ID).toBe(place.stage.agent.pane);
    for (const call of herdr.calls()) for (const value of Object.values(secret)) expect(call.argv.join(' ')).not.toContain(value);
    expect(readdirSync(join(repo.state, 'herdr')).filter((name) => name.startsWith('launch-'))).toEqual([]);
    expect(mode(join(repo.state, 'herdr'))).toBe('700');
    expectNoSecretLeft(repo, secret);
  });
});

describe("Claude Code's config file through the pre-seed", () => {
  function configDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'flume-preseed-'));
    cleanups.push(() => remove(dir));
    return dir;
  }
  const seed = (dir: string) => preseed(dir, { trust: ['/somewhere'], apiKey: 'sk-ant-0123456789abcdefghijklmnop', explicit: true });

  it('keeps the mode of an existing file (600, 640) and makes a new one 600', async () => {
    for (const wanted of [0o600, 0o640]) {
      const dir = configDir();
      const file = join(dir, '.claude.json');
      writeFileSync(file, '{"primaryApiKey":"sk-ant-kept"}');
      chmodSync(file, wanted);
      await seed(dir);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ primaryApiKey: 'sk-ant-kept', hasCompletedOnboarding: true });
      expect(mode(file)).toBe(wanted.toString(8));
    }
    const fresh = configDir();
    await seed(fresh);
    expect(mode(join(fresh, '.claude.json'))).toBe('600');
    expect(readdirSync(fresh).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)('keeps the owner of a file when flume runs as root', async () => {
    const dir = configDir();
    const file = join(dir, '.claude.json');
    writeFileSync(file, '{}', { mode: 0o600 });
    chownSync(file, 4321, 4322);
    await seed(dir);
    expect(statSync(file)).toMatchObject({ uid: 4321, gid: 4322 });
    expect(mode(file)).toBe('600');
  });
});

describe("flume's state folders", () => {
  it('are narrowed to 700 when an older flume made them 755, the next time flume writes there; new files are 600', async () => {
    const repo = makeRepo();
    const state = mkdtempSync(join(tmpdir(), 'flume-state-'));
    cleanups.push(() => remove(repo), () => remove(state));
    const common = commonDir(repo);
    const places = placesStateDir(common);
    mkdirSync(places, { recursive: true });
    for (const folder of [state, join(common, 'flume'), places]) chmodSync(folder, 0o755);

    await appendEvent(common, 'fix--old', { event: 'noted', brief: 'a brief' });
    expect([mode(join(common, 'flume')), mode(places)]).toEqual(['700', '700']);
    expect(mode(join(places, 'fix--old.events.jsonl'))).toBe('600');

    for (const folder of [join(common, 'flume'), places]) chmodSync(folder, 0o755);
    await withPlaceLock(common, 'fix--old', async () => undefined);
    expect([mode(join(common, 'flume')), mode(places)]).toEqual(['700', '700']);

    const before = process.env.FLUME_STATE_DIR;
    process.env.FLUME_STATE_DIR = state;
    try {
      await rememberRepository({ root: repo, commonDir: common });
    } finally {
      if (before === undefined) delete process.env.FLUME_STATE_DIR;
      else process.env.FLUME_STATE_DIR = before;
    }
    expect(mode(state)).toBe('700');
    expect(mode(join(state, 'repositories.json'))).toBe('600');
  });
});
