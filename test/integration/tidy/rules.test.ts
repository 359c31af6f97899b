/**
 * Each tidying rule of the book ("Tidying") on its own, in a real repository, through the engine
 * in-process: what is over, what is never removed, how the branch is judged, and that every place
 * left shows in status with why. tools.test.ts runs the rules that need the built CLI.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commit, git, remove, snapshot, tempDir, write } from '../../helpers/repo.js';
import { branches, outcomeOf, shown, tidyFixture, worktreePaths } from './support.js';

const fixture = tidyFixture(tempDir('flume-tidy-state-'));
const repo = fixture.repo;
afterAll(() => fixture.cleanup());

describe('a place whose work landed', () => {
  it('is removed and its branch deleted when its commits were cherry-picked onto a main that moved on', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('picked');
    const one = commit(place.path, 'one.txt', 'one\n');
    const two = commit(place.path, 'two.txt', 'two\n');
    commit(root, 'other.txt', 'other work\n');
    git(root, 'cherry-pick', one, two);
    const outcomes = await flume.tidy();
    expect(outcomeOf(outcomes, 'fix/picked')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(existsSync(place.path)).toBe(false);
    expect(branches(root)).not.toContain('fix/picked');
    expect(await shown(flume, 'fix/picked')).toBeUndefined();
  });

  it('is removed and its branch deleted when it was rebased onto main and fast-forwarded', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('rebased');
    commit(place.path, 'one.txt', 'one\n');
    commit(place.path, 'two.txt', 'two\n');
    commit(root, 'other.txt', 'other work\n');
    git(place.path, 'rebase', '-q', 'main');
    git(root, 'merge', '-q', '--ff-only', 'fix/rebased');
    expect(outcomeOf(await flume.tidy(), 'fix/rebased')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(branches(root)).not.toContain('fix/rebased');
  });

  it('is removed and its branch deleted when it was merged with a merge commit', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('merged');
    commit(place.path, 'one.txt', 'one\n');
    commit(root, 'other.txt', 'other work\n');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge fix/merged', 'fix/merged');
    expect(outcomeOf(await flume.tidy(), 'fix/merged')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(existsSync(place.path)).toBe(false);
    expect(branches(root)).not.toContain('fix/merged');
  });

  it('is not landed when squash-merged from several commits (git cherry sees other patches): skipped, or kept and named once dropped', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('squashed');
    const one = commit(place.path, 'one.txt', 'one\n');
    const two = commit(place.path, 'two.txt', 'two\n');
    git(root, 'merge', '-q', '--squash', 'fix/squashed');
    git(root, 'commit', '-q', '-m', 'squash');
    expect(outcomeOf(await flume.tidy(), 'fix/squashed')).toMatchObject({ action: 'skipped' });
    await flume.drop('squashed');
    const outcome = outcomeOf(await flume.tidy(), 'fix/squashed');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 2 } });
    expect(git(root, 'rev-parse', 'fix/squashed')).toBe(two);
    expect(git(root, 'merge-base', '--is-ancestor', one, 'fix/squashed')).toBe('');
    expect((await shown(flume, 'fix/squashed'))?.kept).toMatchObject({ branchKept: true, reason: expect.stringContaining('fix/squashed holds 2 commits') });
  });

  it('is tidied in the same pass after another place whose branch that pass deleted', async () => {
    // Landing is judged for every place in one batched pass; it must be taken before any branch goes.
    const { root, flume } = await repo();
    await flume.launch('a-dropped');
    await flume.drop('a-dropped');
    const place = await flume.launch('b-landed');
    commit(place.path, 'one.txt', 'one\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/b-landed');
    const outcomes = await flume.tidy();
    expect(outcomeOf(outcomes, 'fix/a-dropped')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(outcomeOf(outcomes, 'fix/b-landed')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
  });
});

describe('a place partly landed, or dropped', () => {
  it('partly landed and dropped: the worktree goes, the branch stays with the count of patches main lacks', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('partly');
    const one = commit(place.path, 'one.txt', 'one\n');
    commit(place.path, 'two.txt', 'two\n');
    const three = commit(place.path, 'three.txt', 'three\n');
    git(root, 'cherry-pick', one);
    expect(outcomeOf(await flume.tidy(), 'fix/partly')).toMatchObject({ action: 'skipped' });
    await flume.drop('partly');
    const outcome = outcomeOf(await flume.tidy(), 'fix/partly');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 2 } });
    expect(existsSync(place.path)).toBe(false);
    expect(git(root, 'rev-parse', 'fix/partly')).toBe(three);
    const status = await shown(flume, 'fix/partly');
    expect(status).toMatchObject({ state: 'kept', kept: { branchKept: true } });
    expect(status?.kept?.reason).toContain('fix/partly holds 2 commits whose patch main lacks');
  });

  it('dropped with no commits: removed and its branch deleted', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('empty');
    await flume.drop('empty');
    expect(outcomeOf(await flume.tidy(), 'fix/empty')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(existsSync(place.path)).toBe(false);
    expect(branches(root)).toEqual(['main']);
  });

  it('dropped with commits: removed, its branch kept and named', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('worked');
    const head = commit(place.path, 'work.txt', 'work\n');
    await flume.drop('worked');
    expect(outcomeOf(await flume.tidy(), 'fix/worked')).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 1 } });
    expect(existsSync(place.path)).toBe(false);
    expect(git(root, 'rev-parse', 'fix/worked')).toBe(head);
    expect((await shown(flume, 'fix/worked'))?.kept?.reason).toContain('fix/worked');
    // Tidying again changes nothing: the kept branch stays until someone deletes it by hand.
    expect(outcomeOf(await flume.tidy(), 'fix/worked')).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 1 } });
    expect(git(root, 'rev-parse', 'fix/worked')).toBe(head);
  });
});

describe('a place whose work is not over', () => {
  it('is skipped and nothing of it is touched', async () => {
    const { root, flume } = await repo();
    const fresh = await flume.launch('fresh');
    const working = await flume.launch('working');
    commit(working.path, 'work.txt', 'work\n');
    write(fresh.path, 'scratch.txt', 'not committed\n');
    const before = snapshot(root);
    const outcomes = await flume.tidy();
    expect(outcomes.map((o) => [o.id, o.action])).toEqual([
      ['fix/fresh', 'skipped'],
      ['fix/working', 'skipped'],
    ]);
    expect(snapshot(root)).toBe(before);
    expect(readFileSync(join(fresh.path, 'scratch.txt'), 'utf8')).toBe('not committed\n');
    expect(await shown(flume, 'fix/working')).toMatchObject({ state: 'active', landing: { state: 'not-landed', missing: 1 } });
    expect((await shown(flume, 'fix/fresh'))?.kept).toBeUndefined();
  });
});

describe('a place tidying must keep', () => {
  const kept = async (prepare: (root: string, path: string) => void, expected: RegExp) => {
    const { root, flume } = await repo();
    const place = await flume.launch('keep');
    prepare(root, place.path);
    await flume.drop('keep');
    const outcome = outcomeOf(await flume.tidy(), 'fix/keep');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringMatching(expected) });
    expect(worktreePaths(root)).toContain(place.path);
    expect(branches(root)).toContain('fix/keep');
    const status = await shown(flume, 'fix/keep');
    expect(status).toMatchObject({ state: 'kept', kept: { reason: outcome!.reason } });
    return { root, place };
  };

  it('with a modified file: kept, the change untouched, the reason in status', async () => {
    const { place } = await kept((_, path) => write(path, 'README.md', 'changed\n'), /modified files \(README\.md\)/);
    expect(readFileSync(join(place.path, 'README.md'), 'utf8')).toBe('changed\n');
  });

  it('with a staged new file: kept as modified', async () => {
    await kept((_, path) => {
      write(path, 'new.txt', 'new\n');
      git(path, 'add', 'new.txt');
    }, /modified files \(new\.txt\)/);
  });

  it('with an untracked file: kept, the file untouched, the reason in status', async () => {
    const { place } = await kept((_, path) => write(path, 'notes/todo.txt', 'mine\n'), /untracked files \(notes\/todo\.txt\)/);
    expect(readFileSync(join(place.path, 'notes/todo.txt'), 'utf8')).toBe('mine\n');
  });

  it('locked: kept, with the lock reason in status', async () => {
    await kept((root, path) => git(root, 'worktree', 'lock', '--reason', 'on a USB disk', path), /locked \(on a USB disk\)/);
  });

  it('a worktree at the place path on another branch: kept, not flume\'s', async () => {
    const { root } = await kept((_, path) => {
      git(path, 'switch', '-q', '-c', 'mine');
      commit(path, 'mine.txt', 'mine\n');
    }, /is on mine, not fix\/keep/);
    expect(branches(root)).toContain('mine');
  });

  it('a place whose folder was deleted by hand: kept, named as unreadable, its branch untouched', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('gone');
    const head = commit(place.path, 'work.txt', 'work\n');
    remove(place.path);
    await flume.drop('gone');
    const outcome = outcomeOf(await flume.tidy(), 'fix/gone');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining('nothing was removed') });
    expect(git(root, 'rev-parse', 'fix/gone')).toBe(head);
    expect((await shown(flume, 'fix/gone'))?.kept?.reason).toBe(outcome!.reason);
  });

  it('never prunes a hand-made worktree whose folder is gone (it may be on a disk not mounted now)', async () => {
    const { root, flume } = await repo();
    const elsewhere = fixture.later(tempDir('flume-tidy-elsewhere-'));
    git(root, 'worktree', 'add', '-q', '-b', 'hand/away', join(elsewhere, 'wt'), 'main');
    remove(join(elsewhere, 'wt'));
    const place = await flume.launch('by-hand');
    git(root, 'worktree', 'remove', place.path); // the operator removed the place's worktree by hand
    await flume.drop('by-hand');
    expect(outcomeOf(await flume.tidy(), 'fix/by-hand')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(worktreePaths(root)).toEqual([root, join(elsewhere, 'wt')]);
    expect(branches(root)).toEqual(['hand/away', 'main']);
  });

  it('never deletes a branch checked out in a worktree made by hand, even with nothing left to land', async () => {
    const { root, flume } = await repo();
    const elsewhere = fixture.later(tempDir('flume-tidy-elsewhere-'));
    const place = await flume.launch('moved');
    const head = commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/moved');
    git(root, 'worktree', 'remove', place.path);
    git(root, 'worktree', 'add', '-q', join(elsewhere, 'wt'), 'fix/moved'); // work goes on elsewhere
    write(join(elsewhere, 'wt'), 'more.txt', 'not committed yet\n');
    const outcome = outcomeOf(await flume.tidy(), 'fix/moved');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false }, reason: expect.stringContaining(join(elsewhere, 'wt')) });
    expect(git(root, 'rev-parse', 'fix/moved')).toBe(head);
    expect(git(join(elsewhere, 'wt'), 'symbolic-ref', '--short', 'HEAD')).toBe('fix/moved');
    expect((await shown(flume, 'fix/moved'))?.kept).toMatchObject({ branchKept: true, reason: outcome!.reason });
  });

  it('with only ignored files: removed (ignored files may go)', async () => {
    const { root, flume } = await repo();
    commit(root, '.gitignore', '*.log\nbuild/\n');
    const place = await flume.launch('ignored');
    write(place.path, 'debug.log', 'noise\n');
    write(place.path, 'build/out.bin', 'built\n');
    await flume.drop('ignored');
    expect(outcomeOf(await flume.tidy(), 'fix/ignored')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(existsSync(place.path)).toBe(false);
  });

  it('never touches the main checkout, a hand-made worktree under places/, or one elsewhere', async () => {
    const { root, flume } = await repo();
    const elsewhere = fixture.later(tempDir('flume-tidy-elsewhere-'));
    git(root, 'worktree', 'add', '-q', '-b', 'fix/hand', join(root, 'places', 'fix--hand'), 'main');
    git(root, 'worktree', 'add', '-q', '-b', 'hand/else', join(elsewhere, 'wt'), 'main');
    const place = await flume.launch('real');
    await flume.drop('real');
    git(root, 'merge', '-q', '--ff-only', 'fix/hand');
    const outcomes = await flume.tidy();
    expect(outcomes.map((o) => o.id)).toEqual(['fix/real']);
    expect(worktreePaths(root)).toEqual([root, join(root, 'places', 'fix--hand'), join(elsewhere, 'wt')]);
    expect(branches(root)).toEqual(['fix/hand', 'hand/else', 'main']);
    expect(existsSync(place.path)).toBe(false);
  });
});

describe('when the target cannot be read', () => {
  it('removes nothing: not a landed place, not a dropped one, with or without commits', async () => {
    const { root, flume } = await repo();
    const landed = await flume.launch('landed');
    commit(landed.path, 'a.txt', 'a\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/landed');
    const worked = await flume.launch('worked');
    commit(worked.path, 'b.txt', 'b\n');
    await flume.drop('worked');
    await flume.launch('idle');
    await flume.drop('idle');
    git(root, 'branch', '-m', 'main', 'trunk'); // the places' target, main, is gone
    const before = git(root, 'worktree', 'list', '--porcelain') + git(root, 'for-each-ref');
    const outcomes = await flume.tidy();
    expect(git(root, 'worktree', 'list', '--porcelain') + git(root, 'for-each-ref')).toBe(before);
    expect(outcomes.map((o) => [o.id, o.action])).toEqual([
      ['fix/idle', 'kept'],
      ['fix/landed', 'skipped'],
      ['fix/worked', 'kept'],
    ]);
    for (const id of ['fix/idle', 'fix/worked']) {
      const status = await shown(flume, id);
      expect(status?.kept?.reason, id).toMatch(/main/);
    }
  });
});
