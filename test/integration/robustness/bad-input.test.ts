import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, remove, snapshot, tempDir, write } from '../../helpers/repo.js';
import { commands } from '../../../core/cli/commands.js';
import { expectRefused, fullSnapshot, MAKE_ONLY, pool, recordsDir, testFlume, treeDigest, type Run, type StatusReport } from './helpers.js';

// Issue: "bad input gets a clear error and changes nothing". Every command is walked through bad
// names, bad flags, bad repositories, bad configs and a broken state file; each run must exit 1
// (a FlumeError) or 2 (bad usage) with the right code, and leave worktrees, branches, state files,
// info/exclude and the host list exactly as they were.

const scratch = tempDir('flume-bad-');
// The catalogue runs as the suite runs flume (in this process by default); a sample runs as processes.
const { stateDir, cli, spawned: run } = testFlume({ limit: 2, cwd: scratch });
const sampled: Array<{ args: string[]; result: Run }> = [];
const MARK = join(scratch, 'pwned');
let repo: string;
let baseline: string;

const ok = (result: Run) => expect(result.code, result.stdout + result.stderr).toBe(0);

beforeAll(async () => {
  repo = makeRepo();
  ok(await run(['launch', ...MAKE_ONLY, '--repo', repo, '--kind', 'fix', '--name', 'live', '--brief', 'keep me']));
  // A dropped place: any command that tidied by mistake would remove it and show in the snapshot.
  ok(await run(['launch', ...MAKE_ONLY, '--repo', repo, '--kind', 'fix', '--name', 'over', '--brief', 'drop me']));
  ok(await run(['drop', '--repo', repo, 'fix/over']));
  baseline = fullSnapshot(repo, stateDir);
});
afterAll(() => {
  expect(existsSync(MARK), 'something a user typed reached a shell').toBe(false);
  remove(repo);
  remove(scratch);
  remove(stateDir);
});

/** One bad run: its arguments, the exit code and error codes that fit. */
interface Case {
  what: string;
  args: string[];
  exit: 1 | 2;
  codes: string[];
}

/** Runs every case (two at a time) and expects each refused with the repository unchanged. */
async function refuseAll(cases: Case[], root = () => repo, before = () => baseline): Promise<void> {
  const quiet = fullSnapshot(root(), stateDir, { locks: false, quick: true });
  await pool(cases, 2, async (c, index) => {
    const result = await cli(c.args);
    if (root() === repo && index % 19 === 0) sampled.push({ args: c.args, result });
    expectRefused(result, c.exit, c.codes, `${c.what}: flume ${c.args.map((a) => JSON.stringify(a)).join(' ')}`);
    // Each run changed nothing (the lock of a run still going beside it aside) ...
    expect(fullSnapshot(root(), stateDir, { locks: false, quick: true }), c.what).toBe(quiet);
  });
  // ... and once all have ended, not even a lock is left behind.
  expect(fullSnapshot(root(), stateDir)).toBe(before());
}

const BAD_NAMES: Array<[string, string]> = [
  ['a parent path', '../x'],
  ['a space', 'a b'],
  ['a leading dash', '-x'],
  ['two dots', 'x..y'],
  ['a reflog expression', '@{'],
  ['a .lock suffix', 'x.lock'],
  ['empty', ''],
  ['very long', 'a'.repeat(300)],
  ['a control character', 'a\x01b'],
  ['a newline', 'a\nb'],
  ['an escape sequence', 'a\x1b[31mb'],
  ['a command substitution', `$(touch ${MARK})`],
  ['a shell list', `x; touch ${MARK}`],
];

// Names refused by launch only: each form git or a file system would choke on.
const MORE_NAMES = ['x/y', '.x', 'x.', 'X', 'é', 'x*', 'x:y', 'x~1', 'x^', 'x?', 'x[', 'x\\y', 'x-', 'a--b', '`touch ' + MARK + '`', 'a'.repeat(65)];

/** How each command is handed a PLACE; the commands that take none are listed apart. */
const PLACE_FORMS: Record<string, (place: string) => string[]> = {
  drop: (place) => ['drop', place],
  tidy: (place) => ['tidy', place],
  status: (place) => ['status', place],
  tell: (place) => ['tell', place, 'hello'],
  stop: (place) => ['stop', place],
  retry: (place) => ['retry', place],
  'go-on': (place) => ['go-on', place],
  stage: (place) => ['stage', place, 'code'],
  next: (place) => ['next', place],
  wait: (place) => ['wait', place, '--timeout', '1s'],
  events: (place) => ['events', place],
};
const NO_PLACE = ['launch', 'kinds', 'plugins', 'trust', 'watch', 'doctor', 'version', 'hosts'];
const withRepo = (args: string[]) => [args[0], '--repo', repo, ...args.slice(1)];

describe('the commands under test', () => {
  it('are every command the CLI has', () => {
    // A new command must join the catalogue here; this fails until it does.
    expect(commands.map((c) => c.command.split(' ')[0]).sort()).toEqual([...Object.keys(PLACE_FORMS), ...NO_PLACE].sort());
  });
});

describe('bad names', () => {
  it('are refused as --name and --kind by launch, and as PLACE by every command that takes one', async () => {
    const cases: Case[] = BAD_NAMES.flatMap(([label, name]) => [
      { what: `--name ${label}`, args: ['launch', '--repo', repo, '--kind', 'fix', `--name=${name}`, '--brief', 'b'], exit: 1 as const, codes: ['BAD_NAME'] },
      { what: `--kind ${label}`, args: ['launch', '--repo', repo, `--kind=${name}`, '--name', 'fresh', '--brief', 'b'], exit: 1 as const, codes: ['UNKNOWN_KIND'] },
      ...Object.entries(PLACE_FORMS).map(([command, form]) => ({
        what: `${command} fix/${label}`,
        args: withRepo(form(`fix/${name}`)),
        exit: 1 as const,
        codes: ['BAD_NAME', 'UNKNOWN_PLACE'],
      })),
    ]);
    await refuseAll(cases);
  });

  it('are refused as a bare PLACE, and with no --repo', async () => {
    const cases: Case[] = BAD_NAMES.flatMap(([label, name]): Case[] => [
      // A PLACE that starts with "-" is taken for a flag: bad usage.
      { what: `drop ${label}`, args: ['drop', '--repo', repo, name], ...(name.startsWith('-') ? { exit: 2, codes: ['BAD_USAGE'] } : { exit: 1, codes: ['BAD_NAME', 'UNKNOWN_PLACE'] }) },
      { what: `drop fix/${label} (host-wide)`, args: ['drop', `fix/${name}`], exit: 1, codes: ['BAD_NAME', 'UNKNOWN_PLACE'] },
    ]);
    for (const name of ['', '../x', 'a'.repeat(300)]) {
      cases.push(
        { what: `tidy ${JSON.stringify(name.slice(0, 8))}`, args: ['tidy', '--repo', repo, name], exit: 1, codes: ['BAD_NAME', 'UNKNOWN_PLACE'] },
        { what: `status ${JSON.stringify(name.slice(0, 8))}`, args: ['status', '--repo', repo, name], exit: 1, codes: ['UNKNOWN_PLACE', 'BAD_NAME'] },
      );
    }
    await refuseAll(cases);
  });

  it('are refused by launch in every other form git or a file system would choke on', async () => {
    await refuseAll(
      MORE_NAMES.map((name) => ({ what: `--name ${JSON.stringify(name)}`, args: ['launch', '--repo', repo, '--kind', 'fix', `--name=${name}`, '--brief', 'b'], exit: 1, codes: ['BAD_NAME'] })),
    );
  });
});

describe('bad flags', () => {
  it('are refused with exit 2 (usage) or 1 (a FlumeError), changing nothing', async () => {
    const briefDir = join(scratch, 'a-folder');
    mkdirSync(briefDir, { recursive: true });
    writeFileSync(join(scratch, 'nul.txt'), 'a\0b');
    const launch = (...args: string[]) => ['launch', '--repo', repo, ...args];
    const good = ['--kind', 'fix', '--name', 'fresh'];
    const blob = git(repo, 'rev-parse', 'HEAD:README.md');
    const usage = (what: string, args: string[]): Case => ({ what, args, exit: 2, codes: ['BAD_USAGE'] });
    const cases: Case[] = [
      usage('no command', []),
      usage('an unknown command', ['lunch']),
      usage('launch: an unknown flag', launch(...good, '--brief', 'b', '--bogus')),
      usage('launch: an unknown flag, --json', launch(...good, '--brief', 'b', '--bogus', '--json')),
      usage('launch: --name missing its value (last)', launch('--kind', 'fix', '--brief', 'b', '--name')),
      usage('launch: --name missing its value (a flag follows)', launch('--kind', 'fix', '--name', '--brief', 'b')),
      usage('launch: --name -x (taken for a flag)', launch('--kind', 'fix', '--name', '-x', '--brief', 'b')),
      usage('launch: --brief missing its value', launch(...good, '--brief')),
      usage('launch: --from missing its value', launch(...good, '--brief', 'b', '--from')),
      usage('launch: --repo missing its value', ['launch', ...good, '--brief', 'b', '--repo']),
      usage('launch: no --kind', launch('--name', 'fresh', '--brief', 'b')),
      usage('launch: no --name', launch('--kind', 'fix', '--brief', 'b')),
      usage('launch: --brief and --brief-file', launch(...good, '--brief', 'b', '--brief-file', join(scratch, 'nul.txt'))),
      usage('launch: --brief twice', launch(...good, '--brief', 'a', '--brief', 'b')),
      usage('launch: --kind twice', launch('--kind', 'fix', '--kind', 'change', '--name', 'fresh', '--brief', 'b')),
      usage('launch: --name twice', launch('--kind', 'fix', '--name', 'fresh', '--name', 'other', '--brief', 'b')),
      usage('launch: a stray positional', launch(...good, '--brief', 'b', 'stray')),
      { what: 'launch: a brief file holding NUL', args: launch(...good, '--brief-file', join(scratch, 'nul.txt')), exit: 1, codes: ['BAD_TEXT'] },
      { what: 'launch: a brief holding ESC', args: launch(...good, '--brief', 'a\x1b[201~b'), exit: 1, codes: ['BAD_TEXT'] },
      { what: 'tell: a text holding ESC', args: ['tell', '--repo', repo, 'fix/live', 'a\x1bb'], exit: 1, codes: ['BAD_TEXT'] },
      { what: 'go-on: a note holding BEL', args: ['go-on', '--repo', repo, 'fix/live', '--note', 'a\x07b'], exit: 1, codes: ['BAD_TEXT'] },
      usage('launch: --auto-name and --name', launch('--kind', 'fix', '--auto-name', '--name', 'fresh', '--brief', 'b')),
      { what: 'launch: --auto-name with no brief', args: launch('--kind', 'fix', '--auto-name'), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: --auto-name of an unknown kind', args: launch('--kind', 'nope', '--auto-name', '--brief', 'b'), exit: 1, codes: ['UNKNOWN_KIND'] },
      { what: 'launch: no brief', args: launch(...good), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: an empty brief', args: launch(...good, '--brief='), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: a blank brief', args: launch(...good, '--brief', ' \n\t '), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: the brief file missing', args: launch(...good, '--brief-file', join(scratch, 'no-such-brief.md')), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: the brief file a folder', args: launch(...good, '--brief-file', briefDir), exit: 1, codes: ['BRIEF_MISSING'] },
      { what: 'launch: --from a missing ref', args: launch(...good, '--brief', 'b', '--from', 'no-such-branch'), exit: 1, codes: ['BAD_REF'] },
      { what: 'launch: --from past the root', args: launch(...good, '--brief', 'b', '--from', 'HEAD~99'), exit: 1, codes: ['BAD_REF'] },
      { what: 'launch: --from a blob', args: launch(...good, '--brief', 'b', '--from', blob), exit: 1, codes: ['BAD_REF'] },
      { what: 'launch: --from an option', args: launch(...good, '--brief', 'b', `--from=--output=${MARK}`), exit: 1, codes: ['BAD_REF'] },
      { what: 'launch: --from a shell line', args: launch(...good, '--brief', 'b', '--from', `main; touch ${MARK}`), exit: 1, codes: ['BAD_REF'] },
      { what: 'launch: an existing place', args: launch('--kind', 'fix', '--name', 'live', '--brief', 'b'), exit: 1, codes: ['PLACE_EXISTS'] },
      usage('status: an unknown flag', ['status', '--repo', repo, '--bogus']),
      usage('status: --repo missing its value', ['status', '--repo']),
      usage('status: two places', ['status', '--repo', repo, 'fix/live', 'fix/over']),
      usage('kinds: an unknown flag', ['kinds', '--repo', repo, '--bogus']),
      usage('kinds: a stray positional', ['kinds', '--repo', repo, 'fix']),
      usage('plugins: an unknown flag', ['plugins', '--repo', repo, '--bogus']),
      usage('plugins: a stray positional', ['plugins', '--repo', repo, 'fix']),
      usage('trust: an unknown flag', ['trust', '--repo', repo, '--all']),
      usage('trust: a stray positional', ['trust', '--repo', repo, 'fix/live']),
      usage('trust: --repo missing its value', ['trust', '--repo']),
      usage('drop: no place', ['drop', '--repo', repo]),
      usage('drop: --reason missing its value', ['drop', '--repo', repo, 'fix/live', '--reason']),
      usage('drop: two places', ['drop', '--repo', repo, 'fix/live', 'fix/over']),
      usage('drop: an unknown flag', ['drop', '--repo', repo, 'fix/live', '--force']),
      { what: 'drop: an unknown place', args: ['drop', '--repo', repo, 'fix/nothing'], exit: 1, codes: ['UNKNOWN_PLACE'] },
      usage('tidy: an unknown flag', ['tidy', '--repo', repo, '--force']),
      usage('tidy: two places', ['tidy', '--repo', repo, 'fix/live', 'fix/over']),
      usage('tidy: --repo missing its value', ['tidy', '--repo']),
      { what: 'tidy: an unknown place', args: ['tidy', '--repo', repo, 'fix/nothing'], exit: 1, codes: ['UNKNOWN_PLACE'] },
      usage('tell: no text and no --file', ['tell', '--repo', repo, 'fix/live']),
      usage('tell: text and --file', ['tell', '--repo', repo, 'fix/live', 'hi', '--file', join(scratch, 'nul.txt')]),
      usage('tell: an empty text', ['tell', '--repo', repo, 'fix/live', ' ']),
      usage('tell: --file missing', ['tell', '--repo', repo, 'fix/live', '--file', join(scratch, 'no-such-file')]),
      usage('tell: --file missing its value', ['tell', '--repo', repo, 'fix/live', '--file']),
      { what: 'tell: a place with no agent', args: ['tell', '--repo', repo, 'fix/live', 'hi'], exit: 1, codes: ['AGENT_NOT_UP'] },
      { what: 'tell: an unknown place', args: ['tell', '--repo', repo, 'fix/nothing', 'hi'], exit: 1, codes: ['UNKNOWN_PLACE'] },
      usage('stop: no place', ['stop', '--repo', repo]),
      usage('stop: an unknown flag', ['stop', '--repo', repo, 'fix/live', '--now']),
      { what: 'stop: an unknown place', args: ['stop', '--repo', repo, 'fix/nothing'], exit: 1, codes: ['UNKNOWN_PLACE'] },
      usage('retry: no place', ['retry', '--repo', repo]),
      usage('retry: an unknown flag', ['retry', '--repo', repo, 'fix/live', '--force']),
      { what: 'retry: a dropped place', args: ['retry', '--repo', repo, 'fix/over'], exit: 1, codes: ['PLACE_OVER'] },
      usage('go-on: --note missing its value', ['go-on', '--repo', repo, 'fix/live', '--note']),
      { what: 'go-on: a fix (go-on is a question\'s)', args: ['go-on', '--repo', repo, 'fix/live', '--note', 'more'], exit: 1, codes: ['CANNOT_GO_ON'] },
      usage('stage: no stage', ['stage', '--repo', repo, 'fix/live']),
      { what: 'stage: an unknown stage', args: ['stage', '--repo', repo, 'fix/live', 'nope'], exit: 1, codes: ['UNKNOWN_STAGE'] },
      { what: 'stage: a stage named like a path', args: ['stage', '--repo', repo, 'fix/live', '../code'], exit: 1, codes: ['UNKNOWN_STAGE'] },
      { what: 'stage: a dropped place', args: ['stage', '--repo', repo, 'fix/over', 'code'], exit: 1, codes: ['PLACE_OVER'] },
      usage('watch: an unknown flag', ['watch', '--bogus']),
      usage('watch: a stray positional', ['watch', 'now']),
      usage('watch: --poll not a duration', ['watch', '--poll', 'soon']),
      usage('watch: --poll missing its value', ['watch', '--poll']),
      usage('watch: --linger negative', ['watch', '--linger=-1']),
    ];
    await refuseAll(cases);
  });

  it('print the error as JSON on stdout with --json', async () => {
    const result = await run(['launch', '--repo', repo, '--json', '--kind', 'fix', '--name', 'fresh', '--brief', 'b', '--from', 'nowhere']);
    expect(result.code).toBe(1);
    expect(result.json).toEqual({ error: expect.objectContaining({ code: 'BAD_REF', message: expect.any(String), fix: expect.any(String) }) });
    const text = await run(['launch', '--repo', repo, '--kind', 'fix', '--name', 'fresh', '--brief', 'b', '--from', 'nowhere']);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^BAD_REF .+\n {2}fix: .+\n$/);
  });
});

describe('bad repositories', () => {
  it('are refused by every command, and nothing is written in them', async () => {
    const notFolder = join(scratch, 'a-file');
    writeFileSync(notFolder, 'x');
    const notRepo = join(scratch, 'not-a-repo');
    mkdirSync(notRepo, { recursive: true });
    const bare = join(scratch, 'bare.git');
    git(scratch, 'init', '-q', '--bare', bare);
    const empty = join(scratch, 'no-commit');
    git(scratch, 'init', '-q', '-b', 'main', empty);
    const targets: Array<[string, string, string]> = [
      ['no folder', join(scratch, 'nowhere'), 'NOT_A_REPOSITORY'],
      ['a file', notFolder, 'NOT_A_REPOSITORY'],
      ['not a repository', notRepo, 'NOT_A_REPOSITORY'],
      ['a bare repository', bare, 'NOT_A_REPOSITORY'],
    ];
    const before = treeDigest(scratch);
    const hostBefore = treeDigest(stateDir);
    const cases: Case[] = targets.flatMap(([label, path, code]) => [
      { what: `launch in ${label}`, args: ['launch', '--repo', path, '--kind', 'fix', '--name', 'x', '--brief', 'b'], exit: 1, codes: [code] },
      { what: `status of ${label}`, args: ['status', '--repo', path], exit: 1, codes: [code] },
      { what: `kinds of ${label}`, args: ['kinds', '--repo', path], exit: 1, codes: [code] },
      { what: `plugins of ${label}`, args: ['plugins', '--repo', path], exit: 1, codes: [code] },
      { what: `trust of ${label}`, args: ['trust', '--repo', path], exit: 1, codes: [code] },
      { what: `drop in ${label}`, args: ['drop', '--repo', path, 'fix/x'], exit: 1, codes: [code] },
      { what: `tidy of ${label}`, args: ['tidy', '--repo', path], exit: 1, codes: [code] },
    ]);
    // Every command that takes a PLACE opens its repository the same way; walk them all once.
    for (const [command, form] of Object.entries(PLACE_FORMS)) {
      const args = form('fix/x');
      cases.push({ what: `${command} in a bare repository`, args: [args[0], '--repo', bare, ...args.slice(1)], exit: 1, codes: ['NOT_A_REPOSITORY'] });
    }
    cases.push(
      { what: 'launch in a repository with no commit', args: ['launch', '--repo', empty, '--kind', 'fix', '--name', 'x', '--brief', 'b'], exit: 1, codes: ['NO_COMMIT'] },
      { what: 'drop in a repository with no commit', args: ['drop', '--repo', empty, 'fix/x'], exit: 1, codes: ['UNKNOWN_PLACE'] },
      { what: 'tidy of a place in a repository with no commit', args: ['tidy', '--repo', empty, 'fix/x'], exit: 1, codes: ['UNKNOWN_PLACE'] },
    );
    await pool(cases, 2, async (c) => {
      expectRefused(await cli(c.args), c.exit, c.codes, c.what);
    });
    // Reads of a repository with no commit have nothing to report, and say so.
    for (const args of [['status', '--json', '--repo', empty], ['kinds', '--json', '--repo', empty], ['tidy', '--json', '--repo', empty]]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(0);
    }
    expect(treeDigest(scratch)).toBe(before);
    expect(treeDigest(stateDir)).toBe(hostBefore);
    expect(fullSnapshot(repo, stateDir)).toBe(baseline);
  });
});

describe('a launch git refuses', () => {
  it('leaves no record, branch or worktree behind', async () => {
    // places/ is a file, so git cannot add the worktree; it has made the branch by then.
    const root = makeRepo();
    writeFileSync(join(root, 'places'), 'not a folder\n');
    // The empty state folder a launch makes before it takes the place's lock is no trace.
    mkdirSync(recordsDir(root), { recursive: true });
    const before = snapshot(root);
    expectRefused(await cli(['launch', ...MAKE_ONLY, '--repo', root, '--kind', 'fix', '--name', 'blocked', '--brief', 'b']), 1, ['GIT_FAILED'], 'a launch into a file');
    expect(snapshot(root)).toBe(before);
    expect(readdirSync(recordsDir(root))).toEqual([]);
    remove(root);
  });
});

describe('bad configs', () => {
  // One repository with a place, its config replaced case by case: every command must refuse with
  // the config's code and name every problem with its path; status reports the problem and exits 0.
  let root: string;
  beforeAll(async () => {
    root = makeRepo();
    ok(await run(['launch', ...MAKE_ONLY, '--repo', root, '--kind', 'fix', '--name', 'live', '--brief', 'b']));
  });
  afterAll(() => remove(root));

  const stage = (name: string, deliverable: unknown = 'commit') => ({ name, prompt: 'p', deliverable });
  const ts = (value: unknown) => `export default ${JSON.stringify(value, null, 2)};\n`;
  const cases: Array<{ what: string; files: Record<string, string>; code?: string; paths?: string[] }> = [
    { what: 'a syntax error in flume.config.ts', files: { 'flume.config.ts': 'export default { kinds: [ \n' } },
    { what: 'flume.config.ts throwing as it loads', files: { 'flume.config.ts': 'throw new Error("no");\n' } },
    { what: 'a config function that throws', files: { 'flume.config.ts': 'export default () => { throw new Error("no"); };\n' } },
    {
      what: 'unknown keys at several depths',
      files: { 'flume.config.ts': ts({ bogus: 1, kinds: [{ name: 'unit', zz: 2, stages: [{ ...stage('code'), extra: 3 }] }], limits: { nope: 4 }, agent: { drivr: 'x' } }) },
      paths: ['bogus', 'kinds[0].zz', 'kinds[0].stages[0].extra', 'limits.nope', 'agent.drivr'],
    },
    {
      what: 'wrong types',
      files: { 'flume.config.ts': ts({ target: 3, kinds: 'fix', limits: { fixRounds: 'two', stuckAfter: 'soon' }, worktreeTool: 'svn', ready: { setup: [{ run: [] }] } }) },
      paths: ['target', 'kinds', 'limits.fixRounds', 'limits.stuckAfter', 'worktreeTool', 'ready.setup[0].run'],
    },
    {
      what: 'kinds without stages, or with a bad name or branch',
      files: { 'flume.config.ts': ts({ kinds: [{ name: 'unit' }, { name: 'empty', stages: [] }, { name: 'Bad Name', stages: [stage('a')] }, { name: 'br', branch: 'br/fixed', stages: [stage('a')] }] }) },
      paths: ['kinds[0].stages', 'kinds[1].stages', 'kinds[2].name', 'kinds[3].branch'],
    },
    {
      what: 'duplicate kinds and stages beside a schema mistake (3 mistakes, 3 paths)',
      files: { 'flume.config.ts': ts({ kinds: [{ name: 'unit', stages: [stage('code')] }, { name: 'unit', stages: [stage('code'), stage('code')] }], target: 3 }) },
      paths: ['kinds[1].name', 'kinds[1].stages[1].name', 'target'],
    },
    {
      what: 'stages naming deliverables no plugin reads',
      files: { 'flume.config.ts': ts({ kinds: [{ name: 'unit', stages: [stage('a', 'nope'), stage('b', { type: 'zilch' })] }] }) },
      paths: ['kinds[0].stages[0].deliverable', 'kinds[0].stages[1].deliverable'],
    },
    {
      what: 'a plugin that throws in apply',
      files: { 'flume.config.ts': 'export default { plugins: [{ name: "acme:boom", apply() { throw new Error("boom"); } }] };\n' },
      code: 'PLUGIN_FAILED',
    },
    {
      what: 'plugins that cannot be found or are not plugins',
      files: { 'flume.config.ts': 'export default { plugins: ["./no-such-plugin.js", "no-such-package", { name: "acme:half" }, 42] };\n' },
      paths: ['plugins[0]', 'plugins[1]', 'plugins[2]', 'plugins[3]'],
    },
    {
      what: 'a plugin module that throws as it loads',
      files: { 'flume.config.ts': 'export default { plugins: ["./plugin.ts"] };\n', 'plugin.ts': 'throw new Error("broken plugin");\n' },
      paths: ['plugins[0]'],
    },
    { what: 'a .flumerc.json that is not JSON', files: { '.flumerc.json': '{ "kinds": [ ' } },
    { what: 'a .flumerc.json with junk', files: { '.flumerc.json': '{ "kinds": 3, "junk": true }' }, paths: ['kinds', 'junk'] },
    { what: 'package.json key flume a number', files: { 'package.json': '{ "name": "x", "flume": 42 }' }, paths: [''] },
    {
      what: 'package.json key flume with junk',
      files: { 'package.json': JSON.stringify({ name: 'x', flume: { kinds: 'x', ready: { setup: [{}] }, zz: 1 } }) },
      paths: ['kinds', 'ready.setup[0].run', 'zz'],
    },
  ];

  it.each(cases)('$what: every command refuses it, naming every problem', async ({ files, code = 'BAD_CONFIG', paths }) => {
    for (const [file, text] of Object.entries(files)) write(root, file, text);
    try {
      const before = fullSnapshot(root, stateDir);
      const runs: Array<[string, string[]]> = [
        ['launch', ['launch', '--json', '--repo', root, '--kind', 'fix', '--name', 'fresh', '--brief', 'b']],
        ['kinds', ['kinds', '--repo', root]],
        ['drop', ['drop', '--json', '--repo', root, 'fix/live']],
        ['tidy', ['tidy', '--json', '--repo', root]],
        ['status', ['status', '--json', '--repo', root]],
        ['doctor', ['doctor', '--json', '--repo', root]],
      ];
      const results = await pool(runs, 2, ([, args]) => cli(args));
      for (const [index, [command]] of runs.entries()) {
        const result = results[index];
        if (command === 'status') {
          // A read reports the problem beside what it can still show, and exits 0.
          expect(result.code, result.stderr).toBe(0);
          expect((result.json as StatusReport).repositories[0].error?.code).toBe(code);
          continue;
        }
        if (command === 'doctor') {
          // Doctor reports it as its failing `config` check, with the config's own fix, and exits 1.
          expect(result.code, result.stdout).toBe(1);
          const check = (result.json as { checks: Array<{ name: string; ok: boolean; detail: string; fix?: string }> }).checks.find((c) => c.name === 'config');
          expect(check, result.stdout).toMatchObject({ ok: false });
          expect(check!.detail.startsWith(`${code} `), check!.detail).toBe(true);
          continue;
        }
        expectRefused(result, 1, [code], command);
        if (command === 'kinds') expect(result.stderr).toMatch(new RegExp(`^${code} [^]+\\n {2}fix: .+\\n$`));
        if (!paths) continue;
        const problems = (result.error?.details?.problems ?? []) as Array<{ path: string; fix: string }>;
        if (command !== 'kinds') {
          expect(problems.map((p) => p.path).sort(), command).toEqual([...paths].sort());
          for (const problem of problems) expect(problem.fix, problem.path).toBeTruthy();
        }
        const text = command === 'kinds' ? result.stderr : result.error!.message;
        expect(text).toContain(`has ${paths.length} problem`);
        for (const path of paths) expect(text, command).toContain(`  ${path || '(root)'}: `);
      }
      expect(fullSnapshot(root, stateDir)).toBe(before);
    } finally {
      for (const file of Object.keys(files)) rmSync(join(root, file), { force: true });
    }
  });
});

describe('a broken state file', () => {
  let root: string;
  let records: string;
  beforeAll(async () => {
    root = makeRepo();
    ok(await run(['launch', ...MAKE_ONLY, '--repo', root, '--kind', 'fix', '--name', 'live', '--brief', 'b']));
    records = recordsDir(root);
  });
  afterAll(() => remove(root));

  it.each([
    ['garbage', '{ not json'],
    ['empty', ''],
    ['JSON of another shape', '[1, 2, 3]'],
    ['a record of another version', JSON.stringify({ version: 99, id: 'fix/x' })],
  ])('(%s) is refused by the commands that need it and shown by status, never overwritten', async (_label, garbage) => {
    writeFileSync(join(records, 'fix--x.json'), garbage);
    try {
      const before = fullSnapshot(root, stateDir);
      const cases: Case[] = [
        { what: 'launch of it', args: ['launch', '--repo', root, '--kind', 'fix', '--name', 'x', '--brief', 'b'], exit: 1, codes: ['BAD_STATE'] },
        { what: 'drop of it', args: ['drop', '--repo', root, 'fix/x'], exit: 1, codes: ['BAD_STATE'] },
        // tidy reads the records it can and leaves the unreadable one alone (see the report).
        { what: 'tidy of it', args: ['tidy', '--repo', root, 'fix/x'], exit: 1, codes: ['BAD_STATE', 'UNKNOWN_PLACE'] },
      ];
      await refuseAll(cases, () => root, () => before);
      const status = await cli(['status', '--json', '--repo', root]);
      expect(status.code).toBe(0);
      const report = status.json as StatusReport;
      expect(report.repositories[0].broken.map((b) => b.file)).toEqual([join(records, 'fix--x.json')]);
      expect(report.places.map((p) => p.id)).toEqual(['fix/live']);
      const tidy = await cli(['tidy', '--json', '--repo', root]);
      expect(tidy.code).toBe(0);
      expect(fullSnapshot(root, stateDir)).toBe(before);
      expect(readFileSync(join(records, 'fix--x.json'), 'utf8')).toBe(garbage);
    } finally {
      rmSync(join(records, 'fix--x.json'), { force: true });
    }
  });
});

describe('the executable', () => {
  it('refuses a sample of the catalogue exactly as the CLI run in-process did', async () => {
    expect(sampled.length).toBeGreaterThan(10);
    const before = fullSnapshot(repo, stateDir);
    await pool(sampled, 2, async ({ args, result }) => {
      const spawned = await run(args);
      const what = `flume ${args.map((a) => JSON.stringify(a)).join(' ')}`;
      expect({ exit: spawned.code, code: spawned.error?.code }, what).toEqual({ exit: result.code, code: result.error?.code });
      expect(spawned.stderr.split('\n')[0], what).toBe(result.stderr.split('\n')[0]);
    });
    expect(fullSnapshot(repo, stateDir)).toBe(before);
  });
});

describe('shell metacharacters', () => {
  it('in a brief are stored verbatim, never run, and quoted in the printed command', async () => {
    // The printed host: launch starts the first stage by printing the command for the operator.
    const root = makeRepo({ config: '{ "agent": { "host": "printed" } }\n', configFile: '.flumerc.json' });
    const keep = join(scratch, 'keep');
    mkdirSync(keep, { recursive: true });
    const brief = `$(touch ${MARK}) \`touch ${MARK}\` ; touch ${MARK}; rm -rf ${keep} && echo "$HOME" | tee ${MARK} > /dev/null '\\'' \n|| touch ${MARK} & !! *`;
    const file = join(scratch, 'brief.md');
    writeFileSync(file, brief);
    const launched = await run(['launch', '--no-watch', '--repo', root, '--kind', 'fix', '--name', 'shell', '--brief', brief]);
    ok(launched);
    ok(await run(['launch', ...MAKE_ONLY, '--repo', root, '--kind', 'fix', '--name', 'shell-file', '--brief-file', file]));
    ok(await run(['drop', '--repo', root, 'fix/shell-file', '--reason', `$(touch ${MARK})`]));
    const status = await run(['status', '--json', '--repo', root]);
    const places = (status.json as StatusReport).places;
    expect(places.map((p) => [p.id, p.brief])).toEqual([['fix/shell', brief], ['fix/shell-file', brief]]);
    const record = JSON.parse(readFileSync(join(recordsDir(root), 'fix--shell.json'), 'utf8'));
    expect(record.brief).toBe(brief);
    expect(JSON.parse(readFileSync(join(recordsDir(root), 'fix--shell-file.json'), 'utf8')).dropped.reason).toBe(`$(touch ${MARK})`);
    expect((await run(['status', '--repo', root, 'fix/shell'])).code).toBe(0);

    // The printed line, run by a shell, hands the agent exactly the argv flume recorded.
    const command: string[] = record.stage.agent.command;
    expect(command.join('\n')).toContain(brief);
    const line = /^run: ([^]*?)\nprompt: /m.exec(launched.stdout)?.[1];
    expect(line, launched.stdout).toBeTruthy();
    const bin = join(scratch, 'bin');
    const out = join(scratch, 'argv');
    write(bin, 'claude', '#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGV_OUT"\n');
    chmodSync(join(bin, 'claude'), 0o755);
    execFileSync('sh', ['-c', line!], { env: { PATH: `${bin}:${process.env.PATH}`, ARGV_OUT: out, HOME: scratch } });
    const argv = readFileSync(out, 'utf8').split('\0').slice(0, -1);
    expect(argv).toEqual(command.slice(command.indexOf('claude') + 1));
    expect(existsSync(MARK)).toBe(false);
    expect(existsSync(keep)).toBe(true);
    remove(root);
  });
});
