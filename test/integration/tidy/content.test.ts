/**
 * A branch judged by content as well as by patch, and edits `git status` does not show, through the
 * engine in-process on real repositories: a merge commit carrying work of its own (how an agent
 * settles a conflict with its target), a conflict resolved in a merge, a patch the target took and
 * reverted, a sluice record beside git's judgement (status and tidy give one verdict), and tracked
 * files hidden by the skip-worktree and assume-unchanged bits.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { commit, git, write, tempDir } from '../../helpers/repo.js';
import { branches, outcomeOf, shown, tidyFixture } from './support.js';

const fixture = tidyFixture(tempDir('flume-tidy-state-'));
const repo = fixture.repo;
afterAll(() => fixture.cleanup());

/** Every commit reachable from any ref or reflog of the repository. */
const reachable = (root: string) => new Set(git(root, 'rev-list', '--all', '--reflog').split('\n').filter(Boolean));

describe('a branch whose only work is in a merge commit', () => {
  it('is not landed by content: status says so, tidy keeps the branch once dropped, and the merge commit stays reachable', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('settled');
    commit(root, 'main-moved.txt', 'main moved on\n');
    git(place.path, 'merge', '--no-ff', '--no-commit', 'main');
    write(place.path, 'settled.txt', 'the agent settled it here\n');
    git(place.path, 'add', 'settled.txt');
    git(place.path, 'commit', '-q', '-m', 'merge main, and add settled.txt');
    const merge = git(place.path, 'rev-parse', 'HEAD');
    // git cherry sees nothing: the merge is the branch's only commit.
    expect(git(root, 'cherry', 'main', 'fix/settled')).toBe('');

    const before = await shown(flume, 'fix/settled');
    expect(before?.landing).toMatchObject({ state: 'not-landed', missing: 0, by: 'content', what: expect.stringContaining('settled.txt') });
    expect(before?.state).toBe('active');
    expect(outcomeOf(await flume.tidy(), 'fix/settled')).toMatchObject({ action: 'skipped' });

    await flume.drop('settled');
    const outcome = outcomeOf(await flume.tidy(), 'fix/settled');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 0, by: 'content' } });
    expect(outcome?.reason).toContain('settled.txt');
    expect(branches(root)).toContain('fix/settled');
    expect(git(root, 'rev-parse', 'fix/settled')).toBe(merge);
    expect(reachable(root).has(merge)).toBe(true);
    expect((await shown(flume, 'fix/settled'))?.kept).toMatchObject({ branchKept: true, reason: expect.stringContaining('settled.txt') });
  });

  it('is not landed when its merge changed a line of the target\'s, nor once merging it would conflict', async () => {
    const { root, flume } = await repo();
    commit(root, 'shared.txt', 'one\ntwo\nthree\n');
    const place = await flume.launch('conflict');
    commit(root, 'main-moved.txt', 'main moved on\n');
    // The agent merges main and changes a line of main's in the merge itself.
    git(place.path, 'merge', '--no-ff', '--no-commit', 'main');
    write(place.path, 'shared.txt', 'one\ntwo, settled by the agent\nthree\n');
    git(place.path, 'commit', '-q', '-am', 'merge main, settling line two');
    expect(git(root, 'cherry', 'main', 'fix/conflict')).toBe('');
    expect((await shown(flume, 'fix/conflict'))?.landing).toMatchObject({ state: 'not-landed', missing: 0, by: 'content', what: 'merging it into main adds or changes shared.txt' });
    // main changes the line too: merging the branch now conflicts.
    commit(root, 'shared.txt', 'one\nTWO on main\nthree\n');
    expect((await shown(flume, 'fix/conflict'))?.landing).toMatchObject({ state: 'not-landed', by: 'content', what: 'merging it into main conflicts in shared.txt' });
    await flume.drop('conflict');
    const outcome = outcomeOf(await flume.tidy(), 'fix/conflict');
    expect(outcome?.branchOutcome).toMatchObject({ deleted: false, missing: 0, by: 'content' });
    expect(outcome?.reason).toContain('conflicts in shared.txt');
    expect(branches(root)).toContain('fix/conflict');
  });

  it('is landed when the merge adds nothing and its patches reached the target: removed and the branch deleted', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('clean-merge');
    const work = commit(place.path, 'work.txt', 'work\n');
    commit(root, 'main-moved.txt', 'main moved on\n');
    git(place.path, 'merge', '-q', '--no-ff', '-m', 'merge main', 'main');
    git(root, 'cherry-pick', work);
    expect((await shown(flume, 'fix/clean-merge'))?.landing).toMatchObject({ state: 'landed', by: 'patch-and-content' });
    expect(outcomeOf(await flume.tidy(), 'fix/clean-merge')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(branches(root)).not.toContain('fix/clean-merge');
  });
});

describe('a patch the target took and then reverted', () => {
  it('is work the target lacks: not landed by content, and the branch is kept once dropped', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('reverted');
    const work = commit(place.path, 'work.txt', 'work\n');
    // main moved first, so the pick is a commit of its own (a branch merged, then reverted, is in main's history).
    commit(root, 'main-moved.txt', 'main moved on\n');
    git(root, 'cherry-pick', work);
    git(root, 'revert', '--no-edit', 'HEAD');
    expect(git(root, 'cherry', 'main', 'fix/reverted')).toMatch(/^- /);
    expect((await shown(flume, 'fix/reverted'))?.landing).toMatchObject({ state: 'not-landed', by: 'content', what: expect.stringContaining('work.txt') });
    await flume.drop('reverted');
    expect(outcomeOf(await flume.tidy(), 'fix/reverted')?.branchOutcome).toMatchObject({ deleted: false, by: 'content' });
    expect(git(root, 'rev-parse', 'fix/reverted')).toBe(work);
  });
});

describe('a sluice record beside git', () => {
  it('gives status and tidy one verdict: landed by sluice (a squash), the place removed, the branch kept by patch', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('squashed');
    commit(place.path, 'one.txt', 'one\n');
    const head = commit(place.path, 'two.txt', 'two\n');
    git(root, 'merge', '-q', '--squash', 'fix/squashed');
    git(root, 'commit', '-q', '-m', 'squash');
    const now = new Date().toISOString();
    const record = join(root, '.git', 'sluice', 'landings', 'fix', 'squashed.json');
    mkdirSync(dirname(record), { recursive: true });
    writeFileSync(record, JSON.stringify({ version: 1, branch: 'fix/squashed', target: 'main', head, state: 'landed', submittedAt: now, updatedAt: now, landed: { commit: git(root, 'rev-parse', 'main'), at: now } }));

    const seen = await shown(flume, 'fix/squashed');
    expect(seen?.landing).toMatchObject({ state: 'landed', by: 'sluice' });
    expect(seen?.state).toBe('landed');
    expect(outcomeOf(await flume.tidy({ dryRun: true }), 'fix/squashed')).toMatchObject({ action: 'would-remove', reason: 'landed' });
    const outcome = outcomeOf(await flume.tidy(), 'fix/squashed');
    expect(outcome).toMatchObject({ action: 'removed', branchOutcome: { deleted: false, missing: 2, by: 'patch' } });
    expect(existsSync(place.path)).toBe(false);
    expect(git(root, 'rev-parse', 'fix/squashed')).toBe(head);
  });

  it('a record that has not landed the branch keeps the place though git finds it landed: one verdict in both', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('queued');
    const head = commit(place.path, 'one.txt', 'one\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/queued');
    const now = new Date().toISOString();
    const record = join(root, '.git', 'sluice', 'landings', 'fix', 'queued.json');
    mkdirSync(dirname(record), { recursive: true });
    writeFileSync(record, JSON.stringify({ version: 1, branch: 'fix/queued', target: 'main', head, state: 'queued', submittedAt: now, updatedAt: now }));
    expect((await shown(flume, 'fix/queued'))?.landing).toMatchObject({ state: 'not-landed', by: 'sluice', what: 'queued in sluice' });
    expect(outcomeOf(await flume.tidy({ dryRun: true }), 'fix/queued')).toMatchObject({ action: 'skipped' });
  });
});

describe('edits git status does not show', () => {
  it.each([['skip-worktree'], ['assume-unchanged']])('a tracked file edited under %s keeps a dropped place, named, with the edit on disk', async (bit) => {
    const { root, flume } = await repo();
    const place = await flume.launch(`hidden-${bit}`);
    commit(place.path, 'tracked.txt', 'as committed\n');
    write(place.path, 'tracked.txt', 'edited, and hidden from git status\n');
    git(place.path, 'update-index', `--${bit}`, 'tracked.txt');
    expect(git(place.path, 'status', '--porcelain')).toBe('');
    await flume.drop(`hidden-${bit}`);
    const outcome = outcomeOf(await flume.tidy(), `fix/hidden-${bit}`);
    expect(outcome).toMatchObject({ action: 'kept' });
    expect(outcome?.reason).toContain(`tracked.txt (${bit})`);
    expect(outcome?.reason).toContain(`git update-index --no-${bit} -- tracked.txt`);
    expect(readFileSync(join(place.path, 'tracked.txt'), 'utf8')).toBe('edited, and hidden from git status\n');
    expect((await shown(flume, `fix/hidden-${bit}`))?.kept?.reason).toContain('tracked.txt');
  });

  it('a file under either bit whose content is as committed, or absent as a sparse checkout leaves it, keeps nothing', async () => {
    const { root, flume } = await repo();
    const place = await flume.launch('hidden-same');
    commit(place.path, 'same.txt', 'same\n');
    commit(place.path, 'sparse.txt', 'not checked out\n');
    git(place.path, 'update-index', '--assume-unchanged', 'same.txt');
    git(place.path, 'update-index', '--skip-worktree', 'sparse.txt');
    // Absent, as sparse-checkout leaves a file it does not check out.
    rmSync(join(place.path, 'sparse.txt'));
    await flume.drop('hidden-same');
    expect(outcomeOf(await flume.tidy(), 'fix/hidden-same')).toMatchObject({ action: 'removed' });
    expect(existsSync(place.path)).toBe(false);
    expect(branches(root)).toContain('fix/hidden-same');
  });
});
