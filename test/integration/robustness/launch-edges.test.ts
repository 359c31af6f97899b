import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commit, git, makeRepo, remove, spawnFlume, tempDir, write } from '../../helpers/repo.js';
import { expectConsistent, expectRefused, fullSnapshot, KILLED, MAKE_ONLY, parse, recordsDir, testFlume, treeDigest, type Run } from './helpers.js';

// The launch's edges: a launch harms nothing it did not make. A rollback removes only the
// branch its own launch made; two kinds that could make one branch are refused when the config loads;
// `places` that points elsewhere, or that the repository tracks, is refused; control characters in
// text typed to an agent are refused up front; a detached main checkout gets a target it really has.

// No global git config (init.defaultBranch above all) may leak in from the machine running the tests.
const scratch = tempDir('flume-edges-');
// `run` is a process (its runs are killed at crash points); the rest runs as the suite runs flume.
const { stateDir, env, cli, spawned: run } = testFlume({ limit: 2, env: { GIT_CONFIG_GLOBAL: '/dev/null' }, cwd: scratch });
process.env.GIT_CONFIG_GLOBAL = '/dev/null';
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) remove(root);
  remove(scratch);
  remove(stateDir);
});

const repo = (options: { config?: string; configFile?: string } = {}) => {
  const root = makeRepo(options);
  roots.push(root);
  return root;
};
const launch = (root: string, kind: string, name: string, ...more: string[]) => ['launch', ...MAKE_ONLY, '--json', '--repo', root, '--kind', kind, '--name', name, ...(more.length ? more : ['--brief', `work on ${name}`])];
const ok = (result: Run) => expect(result.code, result.stdout + result.stderr).toBe(0);
const head = (root: string, ref: string) => git(root, 'rev-parse', '--verify', ref);
const records = (root: string) => (existsSync(recordsDir(root)) ? readdirSync(recordsDir(root)).filter((name) => name.endsWith('.json')) : []);
/** A kind of the config, as JSON: one stage ending on a commit. */
const kind = (name: string, branch?: string) => ({ name, ...(branch ? { branch } : {}), stages: [{ name: 'code', prompt: 'Do {brief}', deliverable: 'commit' }] });
const rc = (kinds: unknown[]) => ({ config: JSON.stringify({ kinds }), configFile: '.flumerc.json' });
const problemsOf = (result: Run) => (result.error?.details?.problems ?? []) as Array<{ path: string; message: string; fix: string }>;

describe('two kinds whose branch patterns can make one branch', () => {
  it('are refused when the config loads, so two launches at once make nothing', async () => {
    const root = repo(rc([kind('alpha', 'crew/{name}'), kind('beta', 'crew/{name}')]));
    const before = fullSnapshot(root, stateDir);
    // The race: alpha/y1 and beta/y1 at once, each a process of its own.
    const results = await Promise.all([launch(root, 'alpha', 'y1'), launch(root, 'beta', 'y1')].map(async (args) => parse(await spawnFlume(args, { env, timeoutMs: 60_000 }))));
    for (const result of results) {
      expectRefused(result, 1, ['BAD_CONFIG'], 'a launch of a kind sharing its branch pattern');
      const problems = problemsOf(result);
      expect(problems.map((p) => p.path)).toEqual(['kinds[1].branch']);
      expect(problems[0].message).toContain('"alpha"');
      expect(problems[0].message).toContain('"beta"');
      expect(problems[0].message).toContain('crew/a');
    }
    expect(fullSnapshot(root, stateDir)).toBe(before);
    expect(git(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/')).toBe('refs/heads/main');
  });

  it('are found however the patterns meet, the built-in kinds included; patterns that cannot meet load', async () => {
    const cases: Array<{ kinds: unknown[]; path?: string; names?: string[]; shared?: string }> = [
      { kinds: [kind('alpha', 'crew/{name}'), kind('beta', 'crew/x-{name}')], path: 'kinds[1].branch', names: ['alpha', 'beta'], shared: 'crew/x-a' },
      { kinds: [kind('alpha', 'a-{name}'), kind('beta', '{name}-b')], path: 'kinds[1].branch', names: ['alpha', 'beta'], shared: 'a-b' },
      // A declared kind whose branch a built-in kind makes: the path is the declared one.
      { kinds: [kind('hotfix', 'fix/{name}')], path: 'kinds[0].branch', names: ['fix', 'hotfix'], shared: 'fix/a' },
      { kinds: [kind('quick', 'question/q-{name}')], path: 'kinds[0].branch', names: ['question', 'quick'], shared: 'question/q-a' },
      // "-" never ends or doubles in a name, and "/" is never in one: these cannot meet.
      { kinds: [kind('alpha', 'crew/{name}'), kind('beta', 'crew/{name}--b')] },
      { kinds: [kind('alpha', 'crew/{name}'), kind('beta', 'crew/b/{name}')] },
      { kinds: [kind('alpha', 'a/{name}'), kind('beta', 'b/{name}')] },
      // A declared kind of a built-in's name replaces it: one kind, no pair.
      { kinds: [kind('fix', 'fix/{name}')] },
    ];
    const root = repo();
    for (const c of cases) {
      writeFileSync(join(root, '.flumerc.json'), JSON.stringify({ kinds: c.kinds }));
      const result = await cli(['kinds', '--json', '--repo', root]);
      const what = JSON.stringify(c.kinds.map((k) => (k as { branch: string }).branch));
      if (!c.path) {
        expect(result.code, `${what}: ${result.stdout}${result.stderr}`).toBe(0);
        continue;
      }
      expectRefused(result, 1, ['BAD_CONFIG'], what);
      const problems = problemsOf(result);
      expect(problems.map((p) => p.path), what).toEqual([c.path]);
      for (const name of c.names!) expect(problems[0].message, what).toContain(`"${name}"`);
      expect(problems[0].message, what).toContain(c.shared);
    }
  });
});

describe('a rolled-back launch', () => {
  it('leaves a branch of its name made elsewhere, and the place on it, as they were', async () => {
    const root = repo();
    const main = head(root, 'main');
    // The launch dies after recording its intent, before it makes its branch ...
    expect((await run(launch(root, 'fix', 'y1'), { env: { FLUME_CRASH_AT: 'launch:recorded' } })).code).toBe(KILLED);
    // ... and meanwhile another hand makes the branch, at the very commit the launch started from, with a place on it.
    const other = join(scratch, 'other-y1');
    git(root, 'worktree', 'add', '-q', '-b', 'fix/y1', other, 'main');
    // The next launch of the name rolls the interrupted one back: the other branch is no more its own than before.
    expectRefused(await cli(launch(root, 'fix', 'y1')), 1, ['BRANCH_EXISTS'], 'a launch whose branch another made');
    expect(head(root, 'refs/heads/fix/y1')).toBe(main);
    expect(git(other, 'symbolic-ref', 'HEAD')).toBe('refs/heads/fix/y1');
    expect(git(root, 'worktree', 'list', '--porcelain')).toContain(`worktree ${other}\n`);
    expect(records(root)).toEqual([]);

    // The same when the branch appears after the launch died and tidy is what finds the interrupted launch.
    expect((await run(launch(root, 'fix', 'y2'), { env: { FLUME_CRASH_AT: 'launch:recorded' } })).code).toBe(KILLED);
    git(root, 'branch', 'fix/y2', 'main');
    ok(await cli(['tidy', '--json', '--repo', root]));
    expect(head(root, 'refs/heads/fix/y2')).toBe(main);
    expect(records(root)).toEqual([]);

    // A branch of the name with work on it is not adopted either: the launch is forgotten, the work kept.
    expect((await run(launch(root, 'fix', 'y3'), { env: { FLUME_CRASH_AT: 'launch:recorded' } })).code).toBe(KILLED);
    const elsewhere = join(scratch, 'other-y3');
    git(root, 'worktree', 'add', '-q', '-b', 'fix/y3', elsewhere, 'main');
    const work = commit(elsewhere, 'y3.txt', 'y3\n', 'work made elsewhere');
    ok(await cli(['tidy', '--json', '--repo', root]));
    expect(head(root, 'refs/heads/fix/y3')).toBe(work);
    expect(records(root)).toEqual([]);
    const report = await expectConsistent(cli, root);
    expect(report.places).toEqual([]);
  });

  it('removes a branch only when its own launch made it, even one of its name at the same commit', async () => {
    const root = repo();
    const main = head(root, 'main');
    // The launch dies right after making its branch: the next launch rolls it back and makes it anew.
    expect((await run(launch(root, 'fix', 'own'), { env: { FLUME_CRASH_AT: 'launch:branch-made' } })).code).toBe(KILLED);
    expect(git(root, 'reflog', 'show', '--format=%gs', 'refs/heads/fix/own')).toMatch(/^flume: launch fix\/own [0-9a-f-]{36}$/);
    ok(await cli(launch(root, 'fix', 'own')));
    expect(git(root, 'reflog', 'show', '--format=%gs', 'refs/heads/fix/own').split('\n')).toHaveLength(1);

    // Dies after making its branch; the branch is then deleted and made again elsewhere, at the same commit.
    expect((await run(launch(root, 'fix', 'taken'), { env: { FLUME_CRASH_AT: 'launch:branch-made' } })).code).toBe(KILLED);
    git(root, 'branch', '-D', 'fix/taken');
    git(root, 'branch', 'fix/taken', 'main');
    expectRefused(await cli(launch(root, 'fix', 'taken')), 1, ['BRANCH_EXISTS'], 'a launch whose branch was made anew elsewhere');
    expect(head(root, 'refs/heads/fix/taken')).toBe(main);
    expect(git(root, 'reflog', 'show', '--format=%gs', 'refs/heads/fix/taken')).not.toContain('flume: launch');
    expect(records(root)).toEqual(['fix--own.json']);
  });
});

describe('a places folder that is not flume\'s', () => {
  it('is refused when it is a symlink into another repository, and nothing is made there', async () => {
    const root = repo();
    const victim = tempDir('flume-victim-');
    roots.push(victim);
    git(victim, 'init', '-q', '-b', 'main');
    symlinkSync(victim, join(root, 'places'));
    git(root, 'add', 'places');
    git(root, 'commit', '-q', '-m', 'places points elsewhere');
    const before = fullSnapshot(root, stateDir);
    const victimBefore = treeDigest(victim);
    const result = await cli(launch(root, 'fix', 'x'));
    expectRefused(result, 1, ['PLACES_UNSAFE'], 'a launch into a symlinked places');
    expect(result.error?.details).toMatchObject({ found: 'symlink', path: join(root, 'places') });
    expect(result.error?.fix).toBeTruthy();
    expect(treeDigest(victim)).toBe(victimBefore);
    expect(fullSnapshot(root, stateDir)).toBe(before);
  });

  it('is refused when the repository tracks files under it, and info/exclude is left as it was', async () => {
    const root = repo();
    commit(root, 'places/README.md', 'the repository\'s own places\n');
    const before = fullSnapshot(root, stateDir);
    const result = await cli(launch(root, 'fix', 'x'));
    expectRefused(result, 1, ['PLACES_UNSAFE'], 'a launch in a repository tracking places/');
    expect(result.error?.details).toMatchObject({ found: 'tracked', tracked: ['places/README.md'] });
    expect(fullSnapshot(root, stateDir)).toBe(before);
    expect(readFileSync(join(root, '.git', 'info', 'exclude'), 'utf8')).not.toContain('/places/');
    // Staged but not committed is tracked too.
    git(root, 'rm', '-q', '--cached', 'places/README.md');
    git(root, 'commit', '-q', '-m', 'untrack');
    write(root, 'places/new.txt', 'staged\n');
    git(root, 'add', 'places/new.txt');
    expectRefused(await cli(launch(root, 'fix', 'x')), 1, ['PLACES_UNSAFE'], 'a launch with places/ staged');
  });

  it('is refused at the place itself when a symlink stands at its path, dangling or not', async () => {
    const root = repo();
    ok(await cli(launch(root, 'fix', 'first')));
    const victim = tempDir('flume-victim-');
    roots.push(victim);
    symlinkSync(victim, join(root, 'places', 'fix--linked'));
    symlinkSync(join(scratch, 'nowhere'), join(root, 'places', 'fix--dangling'));
    const before = fullSnapshot(root, stateDir);
    for (const name of ['linked', 'dangling']) expectRefused(await cli(launch(root, 'fix', name)), 1, ['PLACE_EXISTS'], `a launch onto a symlink (${name})`);
    expect(readdirSync(victim)).toEqual([]);
    expect(existsSync(join(scratch, 'nowhere'))).toBe(false);
    expect(fullSnapshot(root, stateDir)).toBe(before);
  });
});

describe('control characters in text typed to an agent', () => {
  const root = repo();
  const CONTROLS: Array<[string, string, string]> = [
    ['ESC', '\x1b', 'U+001B'],
    ['a paste-end marker', '\x1b[201~', 'U+001B'],
    ['BEL', '\x07', 'U+0007'],
    ['NUL', '\0', 'U+0000'],
    ['a lone CR', '\r', 'U+000D'],
    ['backspace', '\b', 'U+0008'],
    ['DEL', '\x7f', 'U+007F'],
    ['C1 CSI', '\u009b', 'U+009B'],
    ['C1 NEL', '\u0085', 'U+0085'],
  ];

  it('are refused in a brief, given as text or as a file, naming the character and where it stands', async () => {
    ok(await cli(launch(root, 'fix', 'live')));
    const before = fullSnapshot(root, stateDir);
    for (const [label, char, codePoint] of CONTROLS) {
      const brief = `first line\nsay ${char} here`;
      const file = join(scratch, `brief-${codePoint}.md`);
      writeFileSync(file, brief);
      for (const args of [launch(root, 'fix', 'fresh', '--brief', brief), launch(root, 'fix', 'fresh', '--brief-file', file), ['launch', ...MAKE_ONLY, '--json', '--repo', root, '--kind', 'fix', '--auto-name', '--brief', brief]]) {
        const result = await cli(args);
        expectRefused(result, 1, ['BAD_TEXT'], `a brief with ${label}`);
        expect(result.error?.details, label).toMatchObject({ character: codePoint, line: 2, column: 5 });
      }
    }
    expect(fullSnapshot(root, stateDir)).toBe(before);
  });

  it('are refused in a tell and a go-on note before anything else is asked', async () => {
    const before = fullSnapshot(root, stateDir);
    const file = join(scratch, 'tell.md');
    writeFileSync(file, 'ok\x1b[201~then this');
    // fix/live has no agent: a tell of plain text is refused AGENT_NOT_UP; one holding a control, BAD_TEXT.
    expectRefused(await cli(['tell', '--json', '--repo', root, 'fix/live', 'plain']), 1, ['AGENT_NOT_UP'], 'a plain tell');
    for (const [label, char, codePoint] of CONTROLS) {
      const result = await cli(['tell', '--json', '--repo', root, 'fix/live', `tell ${char}`]);
      expectRefused(result, 1, ['BAD_TEXT'], `a tell with ${label}`);
      expect(result.error?.details, label).toMatchObject({ character: codePoint, line: 1, column: 6 });
      expectRefused(await cli(['go-on', '--json', '--repo', root, 'fix/live', '--note', `note ${char}`]), 1, ['BAD_TEXT'], `a note with ${label}`);
    }
    expectRefused(await cli(['tell', '--json', '--repo', root, 'fix/live', '--file', file]), 1, ['BAD_TEXT'], 'a tell file with a paste-end marker');
    expect(fullSnapshot(root, stateDir)).toBe(before);
  });

  it('are refused in a stage prompt of the config; newline, CRLF and TAB are text', async () => {
    const configured = repo(rc([{ name: 'unit', stages: [{ name: 'code', prompt: 'Do \x1b[201~ this', fixPrompt: 'ok\tfine', deliverable: 'commit' }] }]));
    const result = await cli(launch(configured, 'unit', 'x'));
    expectRefused(result, 1, ['BAD_CONFIG'], 'a stage prompt with ESC');
    expect(problemsOf(result).map((p) => p.path)).toEqual(['kinds[0].stages[0].prompt']);

    const plain = repo();
    ok(await cli(launch(plain, 'fix', 'tabs', '--brief', 'line one\r\n\tline two\nline three')));
    const record = JSON.parse(readFileSync(join(recordsDir(plain), 'fix--tabs.json'), 'utf8')) as { brief: string };
    expect(record.brief).toBe('line one\n\tline two\nline three');
  });
});

describe('the target of a launch from a detached main checkout', () => {
  /** A repository on master (main absent, or also present when `both`), with a branch `work`. */
  const masterRepo = (both = false) => {
    const root = repo();
    git(root, 'branch', '-m', 'main', 'master');
    if (both) git(root, 'branch', 'main', 'master');
    return root;
  };
  const targetOf = async (root: string, name: string) => ok(await cli(launch(root, 'fix', name)));
  const recordTarget = (root: string, name: string) => (JSON.parse(readFileSync(join(recordsDir(root), `fix--${name}.json`), 'utf8')) as { target: string }).target;

  it('is the branch a rebase is rewriting', async () => {
    const root = masterRepo(true);
    git(root, 'checkout', '-q', '-b', 'work');
    commit(root, 'f.txt', 'work\n', 'work side');
    git(root, 'checkout', '-q', 'master');
    commit(root, 'f.txt', 'master\n', 'master side');
    git(root, 'checkout', '-q', 'work');
    expect(() => git(root, 'rebase', '-q', 'master')).toThrow();
    expect(existsSync(join(root, '.git', 'rebase-merge', 'head-name'))).toBe(true);
    await targetOf(root, 'mid-rebase');
    expect(recordTarget(root, 'mid-rebase')).toBe('work');
    git(root, 'rebase', '--abort');
  });

  it('is the branch a bisect started from', async () => {
    const root = masterRepo(true);
    const first = head(root, 'master');
    commit(root, 'g.txt', '1\n');
    commit(root, 'g.txt', '2\n');
    git(root, 'bisect', 'start');
    git(root, 'bisect', 'bad');
    git(root, 'bisect', 'good', first);
    expect(git(root, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('HEAD');
    await targetOf(root, 'mid-bisect');
    expect(recordTarget(root, 'mid-bisect')).toBe('master');
    git(root, 'bisect', 'reset');
  });

  it('is named from origin/HEAD, init.defaultBranch, or the one of main and master there is; otherwise refused', async () => {
    const only = masterRepo();
    git(only, 'checkout', '-q', '--detach');
    await targetOf(only, 'lone-master');
    expect(recordTarget(only, 'lone-master')).toBe('master');

    const both = masterRepo(true);
    git(both, 'checkout', '-q', '--detach');
    const before = fullSnapshot(both, stateDir);
    const refused = await cli(launch(both, 'fix', 'nowhere'));
    expectRefused(refused, 1, ['NO_TARGET'], 'a launch with no branch to land on');
    expect(refused.error?.fix).toContain('target');
    expect(fullSnapshot(both, stateDir)).toBe(before);

    git(both, 'config', 'init.defaultBranch', 'master');
    await targetOf(both, 'by-default');
    expect(recordTarget(both, 'by-default')).toBe('master');
    git(both, 'config', '--unset', 'init.defaultBranch');
    git(both, 'update-ref', 'refs/remotes/origin/main', 'main');
    git(both, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main');
    await targetOf(both, 'by-origin');
    expect(recordTarget(both, 'by-origin')).toBe('main');
    // The config's target is the user's word, first of all.
    writeFileSync(join(both, '.flumerc.json'), JSON.stringify({ target: 'master' }));
    await targetOf(both, 'by-config');
    expect(recordTarget(both, 'by-config')).toBe('master');
  });
});

describe('flume kinds', () => {
  it('says when a repository\'s kind replaces a built-in one, as text and as JSON', async () => {
    const root = repo(rc([{ ...kind('fix'), description: 'our own fix' }, kind('unit')]));
    const json = await cli(['kinds', '--json', '--repo', root]);
    ok(json);
    const kinds = (json.json as { kinds: Array<{ name: string; replaces?: string; declaredBy: string }> }).kinds;
    expect(kinds.find((k) => k.name === 'fix')).toMatchObject({ replaces: 'flume:kind:fix', declaredBy: 'flume:kind:declared' });
    for (const name of ['unit', 'change', 'question']) expect(kinds.find((k) => k.name === name)?.replaces, name).toBeUndefined();
    const text = await cli(['kinds', '--repo', root]);
    ok(text);
    expect(text.stdout).toMatch(/^fix — our own fix \(replaces the built-in kind fix of flume:kind:fix\)$/m);
    expect(text.stdout).not.toMatch(/^(unit|change|question).*replaces/m);
    const plain = repo();
    expect(((await cli(['kinds', '--json', '--repo', plain])).json as { kinds: Array<{ replaces?: string }> }).kinds.every((k) => k.replaces === undefined)).toBe(true);
  });
});
