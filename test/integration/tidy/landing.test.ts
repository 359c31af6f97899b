/**
 * The batched landing judgement (`unlandedCounts`: every place's branch in a fixed number of git
 * processes) must count what `git cherry <target> <branch>` counts, since status and tidy's "landed"
 * read the one and tidy's branch deletion the other. These are the shapes where the two once parted
 * (empty commits, renames, user diff config) and the shapes a batch can get wrong (merges inside a
 * branch, criss-cross merges, a branch behind or equal to its target, an unrelated history); the
 * random histories in random.ts (run by random-0..3.test.ts) check the same agreement on every branch they make.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { unlandedCounts } from '../../../core/support/git.js';
import { commit, git, makeRepo, remove, write } from '../../helpers/repo.js';

let root: string;
beforeAll(() => {
  root = makeRepo();
});
afterAll(() => remove(root));

/** `git cherry main <branch>`: how many of its patches main lacks. */
const cherryCount = (branch: string, target = 'main') => git(root, 'cherry', target, branch).split('\n').filter((l) => l.startsWith('+')).length;
const branchOff = (name: string, from = 'main') => git(root, 'checkout', '-q', '-b', name, from);
const onMain = () => git(root, 'checkout', '-q', 'main');

/** Every local branch but main, judged both ways against main. */
async function bothWays(): Promise<Array<{ branch: string; batched: number | undefined; cherry: number }>> {
  const names = git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter((b) => b !== 'main');
  const counts = await unlandedCounts(root, names.map((branch) => ({ branch, target: 'main' })));
  return names.map((branch) => ({ branch, batched: counts.get(branch), cherry: cherryCount(branch) }));
}

describe('unlandedCounts agrees with git cherry', () => {
  it('on empty commits: one matches an empty commit on the target, as git cherry matches them', async () => {
    branchOff('empty/only');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'nothing');
    onMain();
    expect((await unlandedCounts(root, [{ branch: 'empty/only', target: 'main' }])).get('empty/only')).toBe(cherryCount('empty/only'));
    expect(cherryCount('empty/only')).toBe(1);
    git(root, 'commit', '-q', '--allow-empty', '-m', 'another nothing on main');
    expect(cherryCount('empty/only')).toBe(0);
    expect((await unlandedCounts(root, [{ branch: 'empty/only', target: 'main' }])).get('empty/only')).toBe(0);
  });

  it('on a rename landed on a main that changed the file elsewhere: git cherry (no rename detection) says not landed', async () => {
    write(root, 'long.txt', Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    git(root, 'add', 'long.txt');
    git(root, 'commit', '-q', '-m', 'long file');
    branchOff('rename/moved');
    git(root, 'mv', 'long.txt', 'moved.txt');
    write(root, 'moved.txt', ['first line changed', ...Array.from({ length: 59 }, (_, i) => `line ${i + 2}`)].join('\n') + '\n');
    git(root, 'commit', '-q', '-am', 'move and edit');
    onMain();
    commit(root, 'long.txt', Array.from({ length: 60 }, (_, i) => (i === 49 ? 'fifty' : `line ${i + 1}`)).join('\n') + '\n', 'edit line 50');
    git(root, 'cherry-pick', 'rename/moved');
    expect(cherryCount('rename/moved')).toBe(1);
    expect((await unlandedCounts(root, [{ branch: 'rename/moved', target: 'main' }])).get('rename/moved')).toBe(1);
  });

  it('whatever the user\'s diff config: context lines, colour, textconv', async () => {
    const lines = (edit: Record<number, string>) => Array.from({ length: 20 }, (_, i) => edit[i + 1] ?? `c${i + 1}`).join('\n') + '\n';
    commit(root, 'ctx.txt', lines({}), 'twenty lines');
    // Line 10 changed on a branch and picked onto a main that changed line 8: other context, so another patch.
    branchOff('config/near');
    commit(root, 'ctx.txt', lines({ 10: 'TEN' }), 'change line 10');
    onMain();
    commit(root, 'ctx.txt', lines({ 8: 'eight' }), 'change line 8');
    git(root, 'cherry-pick', 'config/near');
    // Picked onto a main that moved on elsewhere: the same patch.
    branchOff('config/picked');
    commit(root, 'picked.txt', 'picked\n', 'picked');
    onMain();
    commit(root, 'elsewhere.txt', 'elsewhere\n', 'elsewhere');
    git(root, 'cherry-pick', 'config/picked');
    // Two different files that one textconv filter shows alike.
    commit(root, '.gitattributes', '*.bin diff=upper\n', 'textconv for *.bin');
    branchOff('config/textconv');
    commit(root, 'data.bin', 'abc\n', 'lower');
    onMain();
    commit(root, 'data.bin', 'ABC\n', 'upper');
    const names = ['config/near', 'config/picked', 'config/textconv'];
    const truth = Object.fromEntries(names.map((branch) => [branch, cherryCount(branch)]));
    expect(truth).toEqual({ 'config/near': 1, 'config/picked': 0, 'config/textconv': 1 });
    for (const [key, value] of [['diff.context', '0'], ['color.ui', 'always'], ['diff.upper.textconv', 'tr a-z A-Z <']]) {
      git(root, 'config', key, value);
      try {
        const counts = await unlandedCounts(root, names.map((branch) => ({ branch, target: 'main' })));
        expect(Object.fromEntries(counts), `${key}=${value}`).toEqual(truth);
        expect(Object.fromEntries(names.map((branch) => [branch, cherryCount(branch)])), `git cherry with ${key}=${value}`).toEqual(truth);
      } finally {
        git(root, 'config', '--unset', key);
      }
    }
  });

  it('on merges inside branches, criss-cross merges, mode changes, branches behind or equal to main, and an unrelated history', async () => {
    branchOff('merge/side-in');
    commit(root, 'side-in.txt', 'a\n');
    git(root, 'checkout', '-q', '-b', 'tmp-side');
    commit(root, 'side.txt', 'side\n');
    git(root, 'checkout', '-q', 'merge/side-in');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge side', 'tmp-side');
    git(root, 'branch', '-q', '-D', 'tmp-side');
    branchOff('merge/main-in');
    commit(root, 'main-in.txt', 'b\n');
    onMain();
    commit(root, 'on-main.txt', 'main moved\n');
    git(root, 'checkout', '-q', 'merge/main-in');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge main in', 'main');
    onMain();
    git(root, 'cherry-pick', git(root, 'rev-parse', 'merge/main-in^1'));
    branchOff('cross/a');
    commit(root, 'cross-a.txt', 'a\n');
    branchOff('cross/b', 'main');
    commit(root, 'cross-b.txt', 'b\n');
    git(root, 'merge', '-q', '--no-ff', '-m', 'b takes a', 'cross/a~0');
    git(root, 'checkout', '-q', 'cross/a');
    git(root, 'merge', '-q', '--no-ff', '-m', 'a takes b', 'cross/b~1');
    onMain();
    git(root, 'merge', '-q', '--no-ff', '-m', 'land a', 'cross/a');
    branchOff('mode/exec');
    chmodSync(join(root, 'README.md'), 0o755);
    git(root, 'commit', '-q', '-am', 'make README executable');
    branchOff('behind', 'main~2');
    branchOff('equal', 'main');
    git(root, 'checkout', '-q', '--orphan', 'unrelated');
    git(root, 'rm', '-q', '-rf', '.');
    commit(root, 'alone.txt', 'alone\n', 'a root of its own');
    onMain();
    const judged = await bothWays();
    expect(judged.filter((j) => j.batched !== j.cherry)).toEqual([]);
    expect(judged.length).toBeGreaterThan(10);
    expect(Object.fromEntries(judged.map((j) => [j.branch, j.cherry]))).toMatchObject({ behind: 0, equal: 0, unrelated: 1, 'mode/exec': 1, 'cross/a': 0 });
  });
});
