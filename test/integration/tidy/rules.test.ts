/**
 * Each tidying rule of the book ("Tidying") on its own, in a real repository: what is over, what is
 * never removed, how the branch is judged, and that every place left shows in status with why.
 * Most run the engine in-process; the ones that need a config file's plugin, a fake `wt` on PATH or
 * the CLI's own flags run the built CLI.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TidyOutcome } from '../../../core/engine/tidy.js';
import type { PlaceStatus } from '../../../core/engine/status.js';
import { commit, git, makeRepo, remove, snapshot, tempDir, write } from '../../helpers/repo.js';
import { cliDriver, engineDriver, type Driver } from './driver.js';

let stateDir: string;
const cleanup: string[] = [];
beforeAll(() => {
  stateDir = tempDir('flume-tidy-state-');
  process.env.FLUME_STATE_DIR = stateDir;
  cleanup.push(stateDir);
});
afterAll(() => cleanup.forEach(remove));

/** A fresh repository (with `config` as its flume.config.ts) and a driver for it. */
async function repo(options: { config?: string; cli?: boolean; env?: Record<string, string> } = {}): Promise<{ root: string; flume: Driver }> {
  const root = makeRepo(options.config === undefined ? {} : { config: options.config });
  cleanup.push(root);
  return { root, flume: options.cli ? cliDriver(root, stateDir, options.env) : await engineDriver(root) };
}

const outcomeOf = (outcomes: TidyOutcome[], id: string) => outcomes.find((o) => o.id === id);
const branches = (root: string) => git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n');
const worktreePaths = (root: string) => git(root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).map((l) => l.slice(9));
async function shown(flume: Driver, id: string): Promise<PlaceStatus | undefined> {
  return (await flume.status()).places.find((p) => p.id === id);
}

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
    const elsewhere = tempDir('flume-tidy-elsewhere-');
    cleanup.push(elsewhere);
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

describe('the CLI', () => {
  it('--dry-run says what it would do and changes nothing', async () => {
    const { root, flume } = await repo({ cli: true });
    const landed = await flume.launch('landed');
    commit(landed.path, 'a.txt', 'a\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/landed');
    const dropped = await flume.launch('dropped');
    commit(dropped.path, 'b.txt', 'b\n');
    await flume.drop('dropped');
    const dirty = await flume.launch('dirty');
    await flume.drop('dirty');
    write(dirty.path, 'README.md', 'dirty\n');
    await flume.launch('active');
    const before = snapshot(root);
    const outcomes = await flume.tidy({ dryRun: true });
    expect(snapshot(root)).toBe(before);
    expect(outcomes.map((o) => [o.id, o.action])).toEqual([
      ['fix/active', 'skipped'],
      ['fix/dirty', 'kept'],
      ['fix/dropped', 'would-remove'],
      ['fix/landed', 'would-remove'],
    ]);
    expect((await shown(flume, 'fix/dirty'))?.kept).toBeUndefined();
    // And the real run then does what the dry run said.
    const real = await flume.tidy();
    expect(real.map((o) => [o.id, o.action])).toEqual([
      ['fix/active', 'skipped'],
      ['fix/dirty', 'kept'],
      ['fix/dropped', 'removed'],
      ['fix/landed', 'removed'],
    ]);
  });

  it('a beforeTidy plugin in flume.config.ts vetoes removal: kept with its reason', async () => {
    const config = `export default {
  plugins: [{ name: 'test:veto', apply(flume: any) { flume.hooks.beforeTidy.tapPromise('test:veto', async () => 'kept by test'); } }],
};\n`;
    const { root, flume } = await repo({ config, cli: true });
    const place = await flume.launch('vetoed');
    await flume.drop('vetoed');
    const outcome = outcomeOf(await flume.tidy(), 'fix/vetoed');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringContaining('kept by test') });
    expect(worktreePaths(root)).toContain(place.path);
    expect((await shown(flume, 'fix/vetoed'))?.kept?.reason).toContain('kept by test');
  });

  it('tidies one place when named, and leaves the others', async () => {
    const { flume } = await repo({ cli: true });
    const one = await flume.launch('one');
    const two = await flume.launch('two');
    await flume.drop('one');
    await flume.drop('two');
    expect((await flume.tidy({ only: 'fix/two' })).map((o) => [o.id, o.action])).toEqual([['fix/two', 'removed']]);
    expect(existsSync(one.path)).toBe(true);
    expect(existsSync(two.path)).toBe(false);
  });
});

describe('worktreeTool: worktrunk', () => {
  /** A fake `wt` that records its argv, then removes the branch's worktree with git (or fails). */
  function fakeWt(behaviour: 'remove' | 'fail' | 'leave'): { env: Record<string, string>; argv: () => string[] } {
    const bin = tempDir('flume-wt-');
    cleanup.push(bin);
    const argvFile = join(bin, 'argv');
    const act = {
      remove: `path=$(git worktree list --porcelain | awk -v b="branch refs/heads/$branch" '/^worktree /{p=substr($0,10)} $0==b{print p}')
exec git worktree remove "$path"`,
      fail: `echo "pre-remove hook failed: the test database is still in use" >&2
exit 3`,
      leave: 'exit 0',
    }[behaviour];
    writeFileSync(join(bin, 'wt'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argvFile}'\nfor branch in "$@"; do :; done\n${act}\n`);
    chmodSync(join(bin, 'wt'), 0o755);
    return { env: { PATH: `${bin}:${process.env.PATH}` }, argv: () => readFileSync(argvFile, 'utf8').split('\n').filter(Boolean) };
  }
  const WORKTRUNK = `export default { worktreeTool: 'worktrunk' };\n`;

  it('removes through `wt remove --no-delete-branch --foreground --yes <branch>`, then judges the branch itself', async () => {
    const wt = fakeWt('remove');
    const { root, flume } = await repo({ config: WORKTRUNK, cli: true, env: wt.env });
    const place = await flume.launch('tool');
    commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/tool');
    expect(outcomeOf(await flume.tidy(), 'fix/tool')).toMatchObject({ action: 'removed', branchOutcome: { deleted: true } });
    expect(wt.argv()).toEqual(['remove', '--no-delete-branch', '--foreground', '--yes', 'fix/tool']);
    expect(existsSync(place.path)).toBe(false);
    expect(branches(root)).toEqual(['main']);
  });

  it('keeps the place and names the failure when `wt remove` fails', async () => {
    const wt = fakeWt('fail');
    const { root, flume } = await repo({ config: WORKTRUNK, cli: true, env: wt.env });
    const place = await flume.launch('hooked');
    const head = commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/hooked');
    const outcome = outcomeOf(await flume.tidy(), 'fix/hooked');
    expect(outcome).toMatchObject({ action: 'kept', reason: expect.stringMatching(/wt remove failed \(exit 3\).*test database is still in use/) });
    expect(worktreePaths(root)).toContain(place.path);
    expect(git(root, 'rev-parse', 'fix/hooked')).toBe(head);
    expect((await shown(flume, 'fix/hooked'))?.kept?.reason).toBe(outcome!.reason);
  });

  it('keeps the place and its branch when `wt remove` says it succeeded but the worktree is still there', async () => {
    const wt = fakeWt('leave');
    const { root, flume } = await repo({ config: WORKTRUNK, cli: true, env: wt.env });
    const place = await flume.launch('stays');
    const head = commit(place.path, 'work.txt', 'work\n');
    git(root, 'merge', '-q', '--ff-only', 'fix/stays');
    const outcome = outcomeOf(await flume.tidy(), 'fix/stays');
    expect(outcome).toMatchObject({ action: 'kept' });
    expect(worktreePaths(root)).toContain(place.path);
    expect(git(root, 'rev-parse', 'fix/stays')).toBe(head);
    expect((await shown(flume, 'fix/stays'))?.kept?.reason).toBe(outcome!.reason);
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
