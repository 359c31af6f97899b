/**
 * `flume launch --dry-run` makes every check a launch makes and changes nothing.
 * - Every bad input the launch refuses, the dry run refuses alike: the same exit code, error code,
 *   message and fix, with --json and without (both run through the CLI, the dry run first).
 * - A good dry run changes nothing on disk (worktrees, every ref and HEAD, the repository's state
 *   folder, info/exclude, the host's state folder with its list and trust record, Claude Code's
 *   config folder, no tmux server), and what it printed is what the launch then does: the place,
 *   branch and base, and the prompt the fake agent's transcript receives, character for character.
 * - Its --json validates against the published launch-dry-run.schema.json, and no secret's value
 *   is printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { commit, FLUME_BIN, git, makeRepo, PROJECT, remove, tempDir, trustMade, write } from '../../helpers/repo.js';
import { agentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { promptsOf } from '../stages/helpers.js';
import { commonDir, fullSnapshot, MAKE_ONLY, testFlume, treeDigest, type Run } from '../robustness/helpers.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';

const LONG = 300_000;

/** True for a repository with a working tree and a commit (what fullSnapshot reads). */
function hasCommit(repo: string): boolean {
  try {
    return existsSync(join(repo, '.git')) && Boolean(git(repo, 'rev-parse', '--verify', '-q', 'HEAD'));
  } catch {
    return false;
  }
}

/** The published schema, compiled once from the file (not the source). */
function dryRunValidator(): ValidateFunction {
  const ajv = createRequire(import.meta.url)('ajv') as { default: new (options: object) => { compile(schema: object): ValidateFunction } };
  return new ajv.default({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(join(PROJECT, 'schemas', 'launch-dry-run.schema.json'), 'utf8')));
}

/** Parses a dry run's --json and validates it against launch-dry-run.schema.json. */
function validDryRun(stdout: string): any {
  const report = JSON.parse(stdout);
  const validate = dryRunValidator();
  if (!validate(report)) throw new Error(`launch --dry-run --json does not match launch-dry-run.schema.json:\n${JSON.stringify(validate.errors, null, 2)}`);
  return report;
}

describe('a bad launch', () => {
  const scratch = tempDir('flume-dry-');
  const { stateDir, cli } = testFlume({ cwd: scratch });
  const repos: Record<string, string> = {};

  beforeAll(async () => {
    const r = (repos.main = makeRepo());
    expect((await cli(['launch', ...MAKE_ONLY, '--repo', r, '--kind', 'fix', '--name', 'live', '--brief', 'keep me'])).code).toBe(0);
    git(r, 'branch', 'fix/taken');
    mkdirSync(join(r, 'places', 'fix--folder'), { recursive: true });
    symlinkSync(join(scratch, 'nowhere'), join(r, 'places', 'fix--link'));
    git(r, 'worktree', 'add', '-q', '-b', 'elsewhere', join(r, 'places', 'fix--wt'));
    // A launch of fix/busy under way: its lock held by a live process (this one).
    writeFileSync(join(commonDir(r), 'flume', 'places', 'fix--busy.lock'), `${process.pid} ${hostname()} ${randomUUID()}`);
    writeFileSync(join(scratch, 'nul.txt'), 'a\0b');
    mkdirSync(join(scratch, 'a-folder'));

    repos.symlinked = makeRepo();
    symlinkSync(scratch, join(repos.symlinked, 'places'));
    repos.tracked = makeRepo();
    commit(repos.tracked, 'places/mine.txt', 'mine\n');
    repos.empty = join(scratch, 'no-commit');
    git(scratch, 'init', '-q', '-b', 'main', repos.empty);
    repos.bare = join(scratch, 'bare.git');
    git(scratch, 'init', '-q', '--bare', repos.bare);
    repos.notRepo = join(scratch, 'not-a-repo');
    mkdirSync(repos.notRepo);
    // A main checkout on no branch, in a repository with no branch flume could take for its target.
    repos.detached = makeRepo();
    git(repos.detached, 'checkout', '-q', '--detach');
    git(repos.detached, 'branch', '-m', 'main', 'work');
    repos.untrusted = makeRepo({ config: 'export default {};\n', trusted: false });
    repos.changed = makeRepo({ config: 'export default {};\n', trusted: false });
    expect((await cli(['trust', '--repo', repos.changed])).code).toBe(0);
    write(repos.changed, 'flume.config.ts', 'export default { limits: { stuckAfter: "5m" } };\n');
    repos.broken = makeRepo({ config: 'export default { ;\n' });
    repos.invalid = makeRepo({ config: 'export default { bogus: 1, agent: { host: "moon" } };\n' });
    repos.controlPrompt = makeRepo({ config: `export default { kinds: [{ name: 'unit', stages: [{ name: 'code', prompt: 'Do \\x1b[201~ this', deliverable: 'commit' }] }] };\n` });
    repos.sharedBranch = makeRepo({ config: `export default { kinds: [{ name: 'crew', branch: 'fix/{name}', stages: [{ name: 'code', prompt: 'Do {brief}', deliverable: 'commit' }] }] };\n` });
    // A kind whose prompt is the brief alone: a brief starting with `/` would be Claude Code's command.
    repos.commandBrief = makeRepo({ config: `export default { kinds: [{ name: 'ask', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit' }] }] };\n` });
    // A fix round's prompt that would be its command: refused at launch too, not at the fix round.
    repos.commandFix = makeRepo({ config: `export default { kinds: [{ name: 'ask', stages: [{ name: 'code', prompt: 'Do {brief}', fixPrompt: '/compact {brief}', deliverable: 'commit' }] }] };\n` });
    repos.pluginThrows = makeRepo({ config: `export default { plugins: [{ name: 'acme:boom', apply() { throw new Error('boom'); } }] };\n` });
    repos.oddBranch = makeRepo({ config: `export default { kinds: [{ name: 'odd', branch: 'odd/{name}.lock', stages: [{ name: 'code', prompt: 'Do {brief}', deliverable: 'commit' }] }] };\n` });
    // The agent's program is looked for on its own PATH, where there is none.
    repos.noProgram = makeRepo({ config: `export default { agent: { host: 'tmux' }, agents: { 'claude-code': { binary: 'claude', env: { PATH: '/nonexistent/flume-test-bin' } } } };\n` });
    repos.notExecutable = makeRepo({ config: `export default { agent: { host: 'tmux' }, agents: { 'claude-code': { binary: ${JSON.stringify(join(scratch, 'nul.txt'))} } } };\n` });
    // herdr is not installed here (nor running): the host the config names is not available.
    repos.noHost = makeRepo({ config: `export default { agent: { host: 'herdr' } };\n` });
    // The harness trusts what makeRepo made before each run: done now, so no run below sees it write.
    await trustMade(stateDir);
  }, LONG);
  afterAll(() => {
    remove(scratch);
    remove(stateDir);
    for (const root of Object.values(repos)) remove(root);
  });

  /** One refused launch: its arguments (the dry run adds --dry-run), and whether the launch acts before it fails. */
  interface Case {
    what: string;
    args: () => string[];
    code: string;
    /** The launch makes its place before it fails (the agent's start): each run gets its own name. */
    acts?: boolean;
  }
  const launch = (repo: string, ...args: string[]) => () => ['launch', '--no-watch', '--repo', repos[repo] ?? repo, ...args];
  const fix = (name: string, ...args: string[]) => ['--kind', 'fix', '--name', name, ...args];
  const CASES: Case[] = [
    { what: 'no name and no --auto-name', args: launch('main', '--kind', 'fix', '--brief', 'b'), code: 'BAD_USAGE' },
    { what: 'an unknown flag', args: launch('main', ...fix('fresh', '--brief', 'b', '--bogus')), code: 'BAD_USAGE' },
    { what: '--brief and --brief-file', args: () => launch('main', ...fix('fresh', '--brief', 'b', '--brief-file', join(scratch, 'nul.txt')))(), code: 'BAD_USAGE' },
    { what: 'a name with a space', args: launch('main', ...fix('a b', '--brief', 'b')), code: 'BAD_NAME' },
    { what: 'a parent path as name', args: launch('main', ...fix('../x', '--brief', 'b')), code: 'BAD_NAME' },
    { what: 'a name with "--"', args: launch('main', ...fix('a--b', '--brief', 'b')), code: 'BAD_NAME' },
    { what: 'a name too long', args: launch('main', ...fix('a'.repeat(65), '--brief', 'b')), code: 'BAD_NAME' },
    { what: 'a name with a control character', args: launch('main', ...fix('a\x1bb', '--brief', 'b')), code: 'BAD_NAME' },
    { what: 'a kind whose branch git refuses', args: launch('oddBranch', '--kind', 'odd', '--name', 'x', '--brief', 'b'), code: 'BAD_NAME' },
    { what: 'an unknown kind', args: launch('main', '--kind', 'nope', '--name', 'fresh', '--brief', 'b'), code: 'UNKNOWN_KIND' },
    { what: 'an unknown kind, auto-named', args: launch('main', '--kind', 'nope', '--auto-name', '--brief', 'b'), code: 'UNKNOWN_KIND' },
    { what: 'no brief', args: launch('main', ...fix('fresh')), code: 'BRIEF_MISSING' },
    { what: 'a blank brief', args: launch('main', ...fix('fresh', '--brief', ' \n\t ')), code: 'BRIEF_MISSING' },
    { what: 'no brief, auto-named', args: launch('main', '--kind', 'fix', '--auto-name'), code: 'BRIEF_MISSING' },
    { what: 'a brief file missing', args: () => launch('main', ...fix('fresh', '--brief-file', join(scratch, 'no-such.md')))(), code: 'BRIEF_MISSING' },
    { what: 'a brief file that is a folder', args: () => launch('main', ...fix('fresh', '--brief-file', join(scratch, 'a-folder')))(), code: 'BRIEF_MISSING' },
    { what: 'a brief holding ESC', args: launch('main', ...fix('fresh', '--brief', 'a\x1b[201~b')), code: 'BAD_TEXT' },
    { what: 'a brief file holding NUL', args: () => launch('main', ...fix('fresh', '--brief-file', join(scratch, 'nul.txt')))(), code: 'BAD_TEXT' },
    { what: '--from a missing ref', args: launch('main', ...fix('fresh', '--brief', 'b', '--from', 'no-such-branch')), code: 'BAD_REF' },
    { what: '--from a blob', args: () => launch('main', ...fix('fresh', '--brief', 'b', '--from', git(repos.main, 'rev-parse', 'HEAD:README.md')))(), code: 'BAD_REF' },
    { what: 'a place that exists', args: launch('main', ...fix('live', '--brief', 'b')), code: 'PLACE_EXISTS' },
    { what: 'a folder at the place', args: launch('main', ...fix('folder', '--brief', 'b')), code: 'PLACE_EXISTS' },
    { what: 'a dangling symlink at the place', args: launch('main', ...fix('link', '--brief', 'b')), code: 'PLACE_EXISTS' },
    { what: 'a launch of the name under way', args: launch('main', ...fix('busy', '--brief', 'b')), code: 'PLACE_EXISTS' },
    { what: 'a worktree flume did not make at the place', args: launch('main', ...fix('wt', '--brief', 'b')), code: 'WORKTREE_EXISTS' },
    { what: 'a branch of the name', args: launch('main', ...fix('taken', '--brief', 'b')), code: 'BRANCH_EXISTS' },
    { what: 'places/ a symlink', args: launch('symlinked', ...fix('x', '--brief', 'b')), code: 'PLACES_UNSAFE' },
    { what: 'places/ tracked', args: launch('tracked', ...fix('x', '--brief', 'b')), code: 'PLACES_UNSAFE' },
    { what: 'a main checkout on no branch, no target', args: launch('detached', ...fix('x', '--brief', 'b')), code: 'NO_TARGET' },
    { what: 'a repository with no commit', args: launch('empty', ...fix('x', '--brief', 'b')), code: 'NO_COMMIT' },
    { what: 'a folder that is no repository', args: launch('notRepo', ...fix('x', '--brief', 'b')), code: 'NOT_A_REPOSITORY' },
    { what: 'a bare repository', args: launch('bare', ...fix('x', '--brief', 'b')), code: 'NOT_A_REPOSITORY' },
    { what: 'no such folder', args: () => launch(join(scratch, 'nowhere'), ...fix('x', '--brief', 'b'))(), code: 'NOT_A_REPOSITORY' },
    { what: 'an untrusted config', args: launch('untrusted', ...fix('x', '--brief', 'b')), code: 'UNTRUSTED_CONFIG' },
    { what: 'a config changed since it was trusted', args: launch('changed', ...fix('x', '--brief', 'b')), code: 'UNTRUSTED_CONFIG' },
    { what: 'a config that does not parse', args: launch('broken', ...fix('x', '--brief', 'b')), code: 'BAD_CONFIG' },
    { what: 'a config the schema refuses', args: launch('invalid', ...fix('x', '--brief', 'b')), code: 'BAD_CONFIG' },
    { what: 'a stage prompt holding ESC in the config', args: launch('controlPrompt', '--kind', 'unit', '--name', 'x', '--brief', 'b'), code: 'BAD_CONFIG' },
    { what: "a prompt its agent reads as its own command (a brief starting with '/')", args: launch('commandBrief', '--kind', 'ask', '--name', 'x', '--brief', '  /init the repository'), code: 'BAD_TEXT' },
    { what: "a fix round's prompt its agent reads as its own command", args: launch('commandFix', '--kind', 'ask', '--name', 'x', '--brief', 'b'), code: 'BAD_TEXT' },
    { what: 'two kinds that can make one branch', args: launch('sharedBranch', ...fix('x', '--brief', 'b')), code: 'BAD_CONFIG' },
    { what: 'a config plugin that throws', args: launch('pluginThrows', ...fix('x', '--brief', 'b')), code: 'PLUGIN_FAILED' },
    { what: "the agent's program missing", args: launch('noProgram', '--kind', 'fix', '--brief', 'b'), code: 'AGENT_START_FAILED', acts: true },
    { what: "the agent's program not executable", args: launch('notExecutable', '--kind', 'fix', '--brief', 'b'), code: 'AGENT_START_FAILED', acts: true },
    { what: 'the pane host unavailable', args: launch('noHost', '--kind', 'fix', '--brief', 'b'), code: 'NO_PANE_HOST', acts: true },
  ];

  /** What a refusal is, for comparing two: the exit code, and the error's code, message and fix. */
  const refusal = (result: Run, json: boolean) => {
    if (json) {
      const error = (JSON.parse(result.stdout) as { error?: { code: string; message: string; fix?: string } }).error;
      if (!error) return { exit: result.code, refused: false };
      return { exit: result.code, code: error.code, message: error.message, fix: error.fix };
    }
    // Without --json the error is on stderr (a launch that acted printed its progress on stdout first).
    return { exit: result.code, stderr: result.stderr };
  };
  /** What a dry run must leave as it was: the repository (when it is one) and the host's state folder. */
  const untouched = (args: string[]) => {
    const repo = args[args.indexOf('--repo') + 1];
    const host = treeDigest(stateDir)
      .split('\n')
      .filter((line) => !line.startsWith('config-probes.json '))
      .join('\n');
    const own = hasCommit(repo) ? fullSnapshot(repo, stateDir) : treeDigest(repo);
    return [own, host].join('\n--\n');
  };

  it('is refused by the dry run exactly as by the launch, with --json and without, and the dry run changes nothing', { timeout: LONG }, async () => {
    let n = 0;
    for (const [i, c] of CASES.entries()) {
      // Every case with --json; one in four as text too (the same refusal printed the other way: the
      // suite's time is spent on runs of the CLI, and the printing is one function for all).
      for (const json of i % 4 === 0 ? [true, false] : [true]) {
        // A launch that acts before it fails makes its place: each run has a name of its own.
        const args = [...c.args(), ...(json ? ['--json'] : []), ...(c.acts ? ['--name', `run-${++n}`] : [])];
        const what = `${c.what}${json ? ' (--json)' : ''}`;
        const before = untouched(args);
        const dry = await cli([...args, '--dry-run']);
        expect(untouched(args), `${what}: the dry run changed something`).toBe(before);
        // The name a run made its place under (acts) is in neither message: the next launch's own is its run's.
        const real = await cli(c.acts ? [...args.slice(0, -1), `run-${++n}`] : args);
        expect(refusal(dry, json), what).toEqual(refusal(real, json));
        expect(dry.error?.code, `${what}\n${dry.stdout}${dry.stderr}`).toBe(c.code);
      }
    }
  });

  it('with --auto-name, takes the name the launch takes when the first is taken', async () => {
    const args = ['launch', '--no-watch', '--no-start', '--repo', repos.main, '--kind', 'fix', '--auto-name', '--brief', 'Live'];
    const dry = validDryRun((await cli([...args, '--dry-run', '--json'])).stdout);
    expect(dry.place.name).toBe('live-2');
    const real = await cli([...args, '--json']);
    expect((JSON.parse(real.stdout) as { place: { name: string } }).place.name).toBe(dry.place.name);
  });
});

describe('a good launch', () => {
  it('changes nothing, then the launch makes the place the dry run named and sends the prompt it printed', { timeout: LONG }, async ({ onTestFinished }) => {
    const secret = `ghp_dryrunsecret${randomUUID().slice(0, 8)}`;
    const t = agentRepo(
      { onPrompt: [{ actions: [{ say: 'On it.' }] }] },
      { ready: { toolchain: [{ name: 'tools', run: ['true'], env: { API_TOKEN: secret, MODE: 'ci' } }], setup: [{ run: 'true' }] } },
      { env: { GITHUB_TOKEN: secret } },
    );
    onTestFinished(() => t.cleanup());
    const socket = join(t.state, 'tmux', 'flume.sock');
    // What every command writes when it loads a config (the load guard's note of it) is written now.
    expect((await t.flume(['kinds', '--repo', t.repo])).code).toBe(0);
    const snapshot = () =>
      [
        fullSnapshot(t.repo, t.state),
        git(t.repo, 'rev-parse', 'HEAD'),
        git(t.repo, 'symbolic-ref', '-q', 'HEAD'),
        git(t.repo, 'for-each-ref'),
        treeDigest(t.state),
        treeDigest(t.configDir),
        String(existsSync(socket)),
      ].join('\n--\n');
    const before = snapshot();
    const args = ['launch', '--repo', t.repo, '--kind', 'fix', '--name', 'good', '--brief', 'Mend the parser.\nKeep the tests green.', '--no-watch'];
    const json = await t.flume([...args, '--dry-run', '--json']);
    expect(json.code, json.stdout + json.stderr).toBe(0);
    const text = await t.flume([...args, '--dry-run']);
    expect(text.code, text.stderr).toBe(0);
    expect(snapshot(), 'the dry run changed something').toBe(before);
    expect(existsSync(socket)).toBe(false);
    for (const out of [json.stdout, text.stdout]) expect(out).not.toContain(secret);

    const dry = validDryRun(json.stdout);
    expect(dry.ready.steps.map((step: { label: string; env: Record<string, string> }) => [step.label, step.env.API_TOKEN, step.env.MODE])).toEqual([
      ['tools', '(hidden)', 'ci'],
      ['true', undefined, undefined],
    ]);
    expect(dry.stage.agent).toMatchObject({ driver: 'claude-code', host: 'tmux' });
    expect(dry.stage.agent.plan.command).toContain('GITHUB_TOKEN="$GITHUB_TOKEN"');
    expect(text.stdout).toContain(`-----\n${dry.stage.prompt}\n-----\n`);

    const launched = await t.flume(args);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const place = await t.place('fix/good');
    expect({ path: place.path, branch: place.branch, base: place.base, target: place.target }).toEqual({ path: dry.place.path, branch: dry.place.branch, base: dry.place.base.commit, target: dry.place.target });
    expect(dry.place.base.commit).toBe(git(t.repo, 'rev-parse', 'main'));
    const record = JSON.parse(readFileSync(join(commonDir(t.repo), 'flume', 'places', 'fix--good.json'), 'utf8'));
    expect(record.stage.prompt).toBe(dry.stage.prompt);
    const prompts = await waitFor(() => (promptsOf(place.stage.agent.transcript).length ? promptsOf(place.stage.agent.transcript) : undefined), 'the prompt in the transcript');
    expect(prompts[0]).toBe(dry.stage.prompt);
    // The command shown is the one started, but for the session id a launch makes afresh.
    expect(dry.stage.agent.plan.command.slice(-record.stage.agent.command.length).map((word: string) => word.replace(dry.stage.agent.sessionId, record.stage.agent.sessionId))).toEqual(record.stage.agent.command);
  });

  it('on the printed host, shows the command the launch prints, prompt and all', { timeout: LONG }, async ({ onTestFinished }) => {
    const t = agentRepo({}, { agent: { host: 'printed' } });
    onTestFinished(() => t.cleanup());
    const args = ['launch', '--repo', t.repo, '--kind', 'question', '--name', 'why', '--brief', 'Why is the build slow?', '--no-watch', '--json'];
    const dry = validDryRun((await t.flume([...args, '--dry-run'])).stdout);
    expect(dry.stage.agent.host).toBe('printed');
    const launched = await t.flume(args);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const agent = launchedRecord(launched.stdout).stage.agent;
    expect(dry.stage.agent.plan.command.map((word: string) => word.replace(dry.stage.agent.sessionId, agent.sessionId))).toEqual(agent.command);
    expect(agent.command).toContain(dry.stage.prompt);
  });

  it('with --no-start, plans no stage and checks no agent', async ({ onTestFinished }) => {
    const t = agentRepo({}, {}, { binary: 'claude', env: { PATH: '/nonexistent/flume-test-bin' } });
    onTestFinished(() => t.cleanup());
    const result = await t.flume(['launch', '--repo', t.repo, '--kind', 'fix', '--name', 'later', '--brief', 'b', '--no-start', '--dry-run', '--json']);
    expect(result.code, result.stdout).toBe(0);
    const dry = validDryRun(result.stdout);
    expect(dry.stage).toBeNull();
    expect(dry.supervisor.starts).toBe(false);
    expect(dry.notes.join('\n')).toContain('--no-start');
  });
});

describe('on a terminal', () => {
  it('a dry run of an untrusted config refuses without asking, and records no trust; the launch asks', { timeout: LONG }, async ({ onTestFinished }) => {
    const state = tempDir('flume-state-');
    const dir = tempDir('flume-tty-');
    const repo = makeRepo({ config: 'export default {};\n', trusted: false });
    const socket = join(dir, 'sock');
    onTestFinished(async () => {
      await killTmuxServer(socket);
      for (const path of [state, dir, repo]) remove(path);
    });
    const host = tmuxHost({ socket });
    const env = { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state, TERM: 'xterm-256color' };
    const run = async (extra: string) => {
      const line = `'${process.execPath}' '${FLUME_BIN}' launch --repo '${repo}' --kind fix --name x --brief b --no-watch ${extra}; echo "EXIT=$?"; sleep 60`;
      return (await host.open({ title: 'launch', cwd: repo, argv: ['sh', '-c', line], env })).pane!;
    };
    const screenOf = (pane: string, until: RegExp) => waitFor(async () => {
      const text = (await host.capture(pane)) ?? '';
      return until.test(text) ? text : undefined;
    }, `${until}`);
    const before = treeDigest(state);
    // Whichever comes first: its end, or a question it must not ask.
    const dry = await screenOf(await run('--dry-run'), /EXIT=\d|\[y\/N\]/);
    expect(dry).not.toContain('[y/N]');
    expect(dry).toContain('UNTRUSTED_CONFIG');
    expect(dry).toContain('EXIT=1');
    expect(treeDigest(state)).toBe(before);
    // The launch itself asks, once; answered no, it refuses alike.
    const pane = await run('');
    await screenOf(pane, /\[y\/N\]/);
    await host.type(pane, 'n');
    await host.keys(pane, ['Enter']);
    expect(await screenOf(pane, /EXIT=\d/)).toMatch(/UNTRUSTED_CONFIG[^]*EXIT=1/);
  });
});
