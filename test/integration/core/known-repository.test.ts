/**
 * Status checks each repository the host's list names without a git process (core/support/git.ts
 * `knownRepository`): where it answers, it must answer what `findRepository` does; where the
 * repository is no longer the one listed, it must not answer (findRepository then decides).
 */
import { mkdirSync, realpathSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepository, knownRepository } from '../../../core/support/git.js';
import { commit, git, makeRepo, remove, tempDir } from '../../helpers/repo.js';

describe('a listed repository checked without git', () => {
  it('answers as findRepository does: on a branch, detached, its branch packed, before a first commit', async () => {
    const repo = makeRepo();
    const same = async () => {
      const found = await findRepository(repo);
      expect(await knownRepository(found.root, found.commonDir)).toEqual(found);
    };
    await same();
    commit(repo, 'a.txt', 'a');
    git(repo, 'pack-refs', '--all');
    await same();
    git(repo, 'checkout', '-q', '--detach');
    await same();
    git(repo, 'checkout', '-q', '-b', 'other');
    await same();
    const empty = realpathSync(tempDir('flume-unborn-'));
    git(empty, 'init', '-q', '-b', 'main');
    const unborn = await findRepository(empty);
    expect(unborn.hasCommit).toBe(false);
    expect(await knownRepository(unborn.root, unborn.commonDir)).toEqual(unborn);
  });

  it('does not answer for a repository moved or gone, or a folder that is not the main checkout listed', async () => {
    const repo = makeRepo();
    const { root, commonDir } = await findRepository(repo);
    // Moved away: its folder is gone.
    renameSync(root, `${root}-moved`);
    expect(await knownRepository(root, commonDir)).toBeUndefined();
    // Another repository made at the same folder is what findRepository finds there too.
    mkdirSync(root);
    git(root, 'init', '-q', '-b', 'main');
    expect(await knownRepository(root, commonDir)).toEqual(await findRepository(root));
    // The list's common dir is no longer the folder's: a repository whose .git points elsewhere.
    expect(await knownRepository(root, join(`${root}-moved`, '.git'))).toBeUndefined();
    // Gone.
    remove(root);
    expect(await knownRepository(root, commonDir)).toBeUndefined();
    // A worktree's folder is not the main checkout the list names.
    const moved = `${root}-moved`;
    const place = join(moved, 'wt');
    git(moved, 'worktree', 'add', '-q', place, '-b', 'w');
    expect(await knownRepository(place, join(moved, '.git'))).toBeUndefined();
  });
});
