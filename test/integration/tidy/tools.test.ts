/**
 * The tidying rules that need the built CLI: its --dry-run and place arguments, a beforeTidy plugin
 * loaded from the repository's flume.config.ts, and a repository that removes worktrees through
 * worktrunk (a fake `wt` on PATH that records its argv, fails, or exits 0 and leaves the worktree).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commit, git, snapshot, tempDir, write } from '../../helpers/repo.js';
import { branches, outcomeOf, shown, tidyFixture, worktreePaths } from './support.js';

const fixture = tidyFixture(tempDir('flume-tidy-state-'));
const repo = fixture.repo;
afterAll(() => fixture.cleanup());

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
    const bin = fixture.later(tempDir('flume-wt-'));
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

