/**
 * A process that reads a repository again and again (the supervisor answering status) keeps the
 * reading while nothing git reads for it changed (core/support/git.ts `readRepositoryKept`). Each change a
 * place's repository sees is made to a reading already kept (its files older than the margin), and
 * the next reading must be what git says afresh. Kept readings are seen to run no git at all.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { findRepository, readRepository, readRepositoryKept } from '../../../core/support/git.js';
import { readPlaces } from '../../../core/engine/status/reading.js';
import { commit, git, makeRepo, tempDir } from '../../helpers/repo.js';

const wrappers = tempDir('flume-kept-git-');
const log = join(wrappers, 'log');
const realGit = join(git(tempDir(), '--exec-path').trim(), 'git');
mkdirSync(wrappers, { recursive: true });
writeFileSync(join(wrappers, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
chmodSync(join(wrappers, 'git'), 0o755);
const path = process.env.PATH;
afterAll(() => void (process.env.PATH = path));
const gitRuns = (what = '') => readFileSync(log, { encoding: 'utf8', flag: 'a+' }).split('\n').filter((line) => line && line.startsWith(what)).length;

describe('a repository reading kept while nothing git reads changed', () => {
  it('after each change a place sees, the reading is what git says afresh', { timeout: 60_000 }, async () => {
    const repo = makeRepo();
    const place = join(repo, 'places', 'fix--a');
    git(repo, 'worktree', 'add', '-q', place, '-b', 'fix/a');
    let other = join(repo, 'places', 'fix--b');
    const { commonDir } = await findRepository(repo);
    process.env.PATH = `${wrappers}:${path}`;
    const changes: Array<[string, () => void]> = [
      ['a commit on a place\'s branch', () => commit(place, 'one.txt', 'one')],
      ['a branch made', () => git(repo, 'branch', 'fix/extra')],
      ['a branch deleted', () => git(repo, 'branch', '-D', 'fix/extra')],
      ['every ref packed', () => git(repo, 'pack-refs', '--all')],
      ['a packed branch moved by a commit', () => commit(place, 'two.txt', 'two')],
      ['a worktree locked', () => git(repo, 'worktree', 'lock', '--reason', 'busy', place)],
      ['a worktree unlocked', () => git(repo, 'worktree', 'unlock', place)],
      ['a worktree detached', () => git(place, 'checkout', '-q', '--detach')],
      ['a worktree back on its branch', () => git(place, 'checkout', '-q', 'fix/a')],
      ['a worktree added', () => git(repo, 'worktree', 'add', '-q', other, '-b', 'fix/b')],
      ['a worktree\'s folder deleted', () => rmSync(other, { recursive: true, force: true })],
      ['worktrees pruned', () => git(repo, 'worktree', 'prune')],
      ['the main checkout on another branch', () => git(repo, 'checkout', '-q', '-b', 'other')],
    ];
    for (const [what, change] of changes) {
      // Older than the margin: the reading is kept, and a second one runs no git.
      await sleep(1100);
      await readRepositoryKept(repo, commonDir);
      const before = gitRuns();
      expect(await readRepositoryKept(repo, commonDir), `kept before ${what}`).toEqual(await readRepository(repo));
      expect(gitRuns() - before, `kept before ${what}: git runs`).toBe(2);
      change();
      expect(await readRepositoryKept(repo, commonDir), what).toEqual(await readRepository(repo));
    }
    other = '';
  });

  it('a reading of files changed just before it is not kept', async () => {
    const repo = makeRepo();
    const { commonDir } = await findRepository(repo);
    process.env.PATH = `${wrappers}:${path}`;
    commit(repo, 'x.txt', 'x');
    await readRepositoryKept(repo, commonDir);
    const before = gitRuns();
    await readRepositoryKept(repo, commonDir);
    expect(gitRuns() - before).toBe(2);
  });

  it('what a path holds at a commit is asked of git once; at a branch name, every time', async () => {
    const repo = makeRepo();
    const first = commit(repo, 'notes.md', 'first');
    process.env.PATH = `${wrappers}:${path}`;
    const reading = await readPlaces(repo, []);
    const sha = git(repo, 'rev-parse', first).trim();
    const text = async (rev: string, file: string) => (await reading.object(rev, file))?.content.toString('utf8');
    expect(await text(sha, 'notes.md')).toBe('first');
    expect(await text(sha, 'gone.md')).toBeUndefined();
    const before = gitRuns('cat-file');
    expect(await text(sha, 'notes.md')).toBe('first');
    expect(await text(sha, 'gone.md')).toBeUndefined();
    // A second reading of the repository (a later status) asks git nothing either.
    expect(await (await readPlaces(repo, [])).object(sha, 'notes.md').then((o) => o?.content.toString('utf8'))).toBe('first');
    expect(gitRuns('cat-file') - before).toBe(0);
    // By branch name: the branch moves, the answer follows.
    expect(await text('main', 'notes.md')).toBe('first');
    commit(repo, 'notes.md', 'second');
    expect(await text('main', 'notes.md')).toBe('second');
  });
});
