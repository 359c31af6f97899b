/**
 * Tidying at the edges: work git's own status does not show (a repository nested in the
 * place, ignored or not; a submodule; a stash made in the place), refs named like a place's branch
 * (a tag, a remote-tracking ref, a bare `refs/<name>`), a `places` folder that is or became a
 * symlink, and a place whose lock a launch or another tidy holds. Every test collects each commit
 * that existed before tidying, in the repository and in every nested one, and checks after it that
 * each object is still there (`git cat-file -e`), and that the reason names what kept the place.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPlaceLock } from '../../../core/state/store.js';
import type { TidyOutcome } from '../../../core/engine/tidy/tidy.js';
import { commit, git, makeRepo, tempDir, write } from '../../helpers/repo.js';
import { branches, outcomeOf, shown, tidyFixture, worktreePaths } from './support.js';

const fixture = tidyFixture(tempDir('flume-tidy-state-'));
const repo = fixture.repo;
afterAll(() => fixture.cleanup());

/** Every commit each repository holds (refs, reflogs, stashes), by its folder. */
function commitsIn(...dirs: string[]): Map<string, string[]> {
  return new Map(dirs.map((dir) => [dir, git(dir, 'rev-list', '--all', '--reflog').split('\n').filter(Boolean)]));
}

/** Each folder is still there and still holds every commit it held. */
function expectNoneLost(before: Map<string, string[]>): void {
  for (const [dir, commits] of before) {
    expect(existsSync(dir), `${dir} is gone`).toBe(true);
    expect(commits.length, `${dir} held no commit to check`).toBeGreaterThan(0);
    const missing = commits.filter((commit) => {
      try {
        git(dir, 'cat-file', '-e', `${commit}^{commit}`);
        return false;
      } catch {
        return true;
      }
    });
    expect(missing, `commits lost from ${dir}`).toEqual([]);
  }
}

/** A folder outside every repository of the test, removed with the rest. */
const outside = (prefix: string) => fixture.later(tempDir(prefix));

/** Ways of leaving a repository inside a place: each returns the nested folder that must survive, and what the reason names. */
const NESTED: Array<[string, (place: string) => { folder: string; named: string }]> = [
  ['in an ignored folder', (place) => nestedRepo(place, 'build/tool')],
  ['deep in an ignored folder', (place) => nestedRepo(place, 'build/deep/er/tool')],
  ['itself ignored', (place) => nestedRepo(place, 'scratch.cache')],
  ['in a folder that is not ignored', (place) => nestedRepo(place, 'vendor/tool')],
  [
    'with its git folder elsewhere (a .git file)',
    (place) => {
      const folder = join(place, 'build', 'separate');
      mkdirSync(folder, { recursive: true });
      git(folder, 'init', '-q', '-b', 'main', '--separate-git-dir', join(outside('flume-separate-'), 'git'));
      commit(folder, 'separate.txt', 'separate work\n');
      return { folder, named: 'build/separate' };
    },
  ],
  [
    'bare, in an ignored folder',
    (place) => {
      const source = nestedRepo(outside('flume-source-'), 'src').folder;
      const folder = join(place, 'build', 'store.git');
      git(place, 'clone', '-q', '--bare', source, folder);
      return { folder, named: 'build/store.git' };
    },
  ],
];

describe('a place holding work git status does not show', () => {
  it('is kept when an ignored folder holds a nested repository, through the CLI, dry run and real (the issue as reported)', async () => {
    const { root, flume } = await repo({ cli: true });
    commit(root, '.gitignore', 'build/\n');
    const place = await flume.launch('nested');
    const { folder } = nestedRepo(place.path, 'build/tool');
    await flume.drop('nested');
    const before = commitsIn(root, folder);
    const dry = outcomeOf(await flume.tidy({ dryRun: true }), 'fix/nested');
    expect(dry).toMatchObject({ action: 'kept', reason: expect.stringContaining('build/tool') });
    const outcome = outcomeOf(await flume.tidy(), 'fix/nested');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining('repository of its own (build/tool)') });
    expectNoneLost(before);
    expect(worktreePaths(root)).toContain(place.path);
    expect((await shown(flume, 'fix/nested'))?.kept?.reason).toContain('build/tool');
  });

  it.each(NESTED)('is kept when it holds a repository %s', async (_, make) => {
    const { root, flume } = await repo();
    commit(root, '.gitignore', 'build/\n*.cache\n');
    const place = await flume.launch('nested');
    const { folder, named } = make(place.path);
    await flume.drop('nested');
    const before = commitsIn(root, folder);
    const outcome = outcomeOf(await flume.tidy(), 'fix/nested');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining(`repository of its own (${named})`) });
    expectNoneLost(before);
    expect((await shown(flume, 'fix/nested'))?.kept?.reason).toContain(named);
  });

  it('follows no symlink: a link in an ignored folder to a repository outside keeps nothing, and the repository outside is untouched', async () => {
    const { root, flume } = await repo();
    commit(root, '.gitignore', 'build/\n');
    const place = await flume.launch('linked');
    const { folder } = nestedRepo(outside('flume-target-'), 'target');
    mkdirSync(join(place.path, 'build'));
    symlinkSync(folder, join(place.path, 'build', 'link'));
    await flume.drop('linked');
    const before = commitsIn(root, folder);
    expect(outcomeOf(await flume.tidy(), 'fix/linked')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(existsSync(place.path)).toBe(false);
    expectNoneLost(before);
    expect(readFileSync(join(folder, 'work.txt'), 'utf8')).toBe('nested work\n');
  });

  it('is kept when a submodule in it holds commits its remotes lack, naming the submodule and the count', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('sub');
    const sub = addSubmodule(place.path);
    commit(sub, 'more.txt', 'unpushed\n');
    commit(sub, 'more2.txt', 'unpushed too\n');
    await flume.drop('sub');
    const before = commitsIn(root, sub);
    const outcome = outcomeOf(await flume.tidy(), 'fix/sub');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining('submodule lib holds 2 commits its remotes lack') });
    expectNoneLost(before);
    expect((await shown(flume, 'fix/sub'))?.kept?.reason).toContain('submodule lib');
  });

  it('is kept, naming the submodule (not a git refusal), when every commit of its submodule is pushed', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('pushed');
    const sub = addSubmodule(place.path);
    await flume.drop('pushed');
    const before = commitsIn(root, sub);
    const outcome = outcomeOf(await flume.tidy(), 'fix/pushed');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining('holds the submodule lib') });
    expect(outcome?.reason).not.toContain('refused');
    expectNoneLost(before);
  });

  it.each([
    ['git stash', ['stash', '-q'], 'WIP on fix/stashed:'],
    ['git stash push -m', ['stash', 'push', '-q', '-m', 'half done'], 'On fix/stashed: half done'],
  ])('is kept when a stash was made in it (%s), naming the stash', async (_, args, subject) => {
    const { root, flume } = await repo();
    const place = await flume.launch('stashed');
    write(place.path, 'README.md', 'half done\n');
    git(place.path, ...args);
    // A stash made elsewhere (on main) keeps nothing of this place.
    write(root, 'README.md', 'main work\n');
    git(root, 'stash', '-q');
    await flume.drop('stashed');
    const stash = git(root, 'rev-parse', 'refs/stash@{1}');
    const before = commitsIn(root);
    expect(before.get(root)).toContain(stash);
    const outcome = outcomeOf(await flume.tidy(), 'fix/stashed');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining(`stash@{1}: ${subject}`) });
    expectNoneLost(before);
    expect(git(root, 'stash', 'list')).toContain(subject);
    expect((await shown(flume, 'fix/stashed'))?.kept?.reason).toContain('stash');
  });
});

/** Refs outside `refs/heads/` that git would rank before (or beside) the branch of the same name. */
const LOOKALIKES: Array<[string, string]> = [
  ['a tag', 'refs/tags/'],
  ['a remote-tracking ref', 'refs/remotes/'],
  ['a ref straight under refs/', 'refs/'],
];

describe('a ref named like the place branch', () => {
  it.each(LOOKALIKES)('(%s) does not hide an unlanded branch: the branch is kept and named, the other ref untouched', async (_, prefix) => {
    const { root, flume } = await repo();
    const place = await flume.launch('tagamb');
    const work = commit(place.path, 'work.txt', 'work\n');
    const main = git(root, 'rev-parse', 'refs/heads/main');
    git(root, 'update-ref', `${prefix}fix/tagamb`, main);
    await flume.drop('tagamb');
    const before = commitsIn(root);
    const outcome = outcomeOf(await flume.tidy(), 'fix/tagamb');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 1 } });
    expect(git(root, 'rev-parse', 'refs/heads/fix/tagamb')).toBe(work);
    expect(git(root, 'rev-parse', `${prefix}fix/tagamb`)).toBe(main);
    expectNoneLost(before);
    expect((await shown(flume, 'fix/tagamb'))?.kept).toMatchObject({ branchKept: true, reason: expect.stringContaining('fix/tagamb holds 1 commit') });
  });

  it.each(LOOKALIKES)('(%s) is not what tidy deletes once the branch landed', async (_, prefix) => {
    const { root, flume } = await repo();
    const place = await flume.launch('landed');
    commit(place.path, 'work.txt', 'work\n');
    const old = git(root, 'rev-parse', 'refs/heads/main');
    git(root, 'merge', '-q', '--ff-only', 'refs/heads/fix/landed');
    git(root, 'update-ref', `${prefix}fix/landed`, old);
    const outcome = outcomeOf(await flume.tidy(), 'fix/landed');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(branches(root)).not.toContain('fix/landed');
    expect(git(root, 'rev-parse', `${prefix}fix/landed`)).toBe(old);
  });

  it('a tag named like the main branch does not move where a launch starts', async () => {
    const { root, flume } = await repo();
    const first = git(root, 'rev-parse', 'HEAD');
    git(root, 'tag', 'main', first);
    const head = commit(root, 'later.txt', 'later\n');
    const record = await flume.launch('from-main');
    expect(record.base).toBe(head);
  });
});

describe('a places folder that is or became a symlink', () => {
  it.each([
    ['places/ moved elsewhere and linked back', 'places'],
    ["the place's own folder moved elsewhere and linked back", 'place'],
  ])('keeps the place, removing nothing through the link (%s)', async (_, which) => {
    const { root, flume } = await repo();
    const place = await flume.launch('linked');
    const work = commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'refs/heads/fix/linked');
    const elsewhere = outside('flume-elsewhere-');
    const from = which === 'places' ? join(root, 'places') : place.path;
    renameSync(from, join(elsewhere, 'moved'));
    symlinkSync(join(elsewhere, 'moved'), from);
    const before = commitsIn(root);
    const outcome = outcomeOf(await flume.tidy(), 'fix/linked');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining(`${from} is a symlink`) });
    const moved = which === 'places' ? join(elsewhere, 'moved', 'fix--linked') : join(elsewhere, 'moved');
    expect(readFileSync(join(moved, 'work.txt'), 'utf8')).toBe('work\n');
    expect(git(root, 'rev-parse', 'refs/heads/fix/linked')).toBe(work);
    expectNoneLost(before);
    expect((await shown(flume, 'fix/linked'))?.kept?.reason).toContain('symlink');
  });
});

describe('a place whose lock is held', () => {
  it('is skipped as busy (not kept, nothing marked), and tidied on the next run', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('busy');
    await flume.drop('busy');
    let outcome: TidyOutcome | undefined;
    await withPlaceLock(join(root, '.git'), 'fix--busy', async () => {
      outcome = outcomeOf(await flume.tidy(), 'fix/busy');
    });
    expect(outcome).toMatchObject({ action: 'skipped', reason: expect.stringContaining('busy') });
    expect(outcome?.reason).not.toContain('cannot read');
    expect((await shown(flume, 'fix/busy'))?.kept).toBeUndefined();
    expect(outcomeOf(await flume.tidy(), 'fix/busy')).toMatchObject({ action: 'removed' });
    expect(existsSync(place.path)).toBe(false);
  });
});

describe('a commit made on the branch after tidy judged it', () => {
  it('survives: tidy deletes the branch only at the head it judged, so the branch is kept with the new commit', async () => {
    // A git first on PATH that, seeing tidy delete the branch, first commits on it (as an agent or a
    // person might between git cherry's verdict and the deletion), then runs the deletion as asked.
    const bin = fixture.later(tempDir('flume-late-git-'));
    const made = join(bin, 'made');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh
case " $* " in
*" update-ref -d refs/heads/fix/late "*)
  if [ ! -e '${made}' ]; then
    tip=$('${real}' rev-parse refs/heads/fix/late)
    export GIT_INDEX_FILE='${bin}/index'
    '${real}' read-tree "$tip"
    blob=$(echo late work | '${real}' hash-object -w --stdin)
    '${real}' update-index --add --cacheinfo 100644,"$blob",late.txt
    tree=$('${real}' write-tree)
    unset GIT_INDEX_FILE
    late=$('${real}' -c user.name=late -c user.email=late@example.com commit-tree "$tree" -p "$tip" -m 'late work')
    '${real}' update-ref refs/heads/fix/late "$late" "$tip"
    echo "$late" > '${made}'
  fi;;
esac
exec '${real}' "$@"
`, { mode: 0o755 });
    const { root, flume } = await repo({ cli: true, env: { PATH: `${bin}:${process.env.PATH}` } });
    const place = await flume.launch('late');
    commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'refs/heads/fix/late');
    await flume.drop('late');
    const outcome = outcomeOf(await flume.tidy(), 'fix/late');
    const late = readFileSync(made, 'utf8').trim();
    expect(git(root, 'rev-parse', 'refs/heads/fix/late')).toBe(late);
    expect(git(root, 'show', `${late}:late.txt`)).toBe('late work');
    expect(outcome).toMatchObject({ action: 'kept' });
    expect((await shown(flume, 'fix/late'))?.state).toBe('kept');
    // Tidied again, the branch is judged at its new head: it holds work main lacks, so it stays.
    expect(outcomeOf(await flume.tidy(), 'fix/late')).toMatchObject({ branchOutcome: { deleted: false, missing: 1 } });
    expect(git(root, 'rev-parse', 'refs/heads/fix/late')).toBe(late);
  });
});

/** A repository at `path` under `root` with a commit of its own. */
function nestedRepo(root: string, path: string): { folder: string; named: string } {
  const folder = join(root, path);
  mkdirSync(folder, { recursive: true });
  git(folder, 'init', '-q', '-b', 'main');
  commit(folder, 'work.txt', 'nested work\n');
  return { folder, named: path };
}

/** Adds a submodule `lib` (cloned from a repository outside) to the place and commits it; returns its folder. */
function addSubmodule(place: string): string {
  const lib = fixture.later(makeRepo());
  git(place, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
  git(place, 'commit', '-q', '-m', 'add lib');
  return join(place, 'lib');
}
