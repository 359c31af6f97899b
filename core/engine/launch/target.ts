/**
 * The branch a launch's work lands on. The config's `target` first, then the branch the main checkout
 * is on. A main checkout that is detached (mid-rebase, mid-bisect, or checked out at a commit) names
 * none, and a guess such as `main` in a repository whose branch is `master` would leave landing unknown
 * and the place kept forever; so the target is named from what the repository has, or the launch is
 * refused with the key that names it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { flumeError } from '../../api/errors.js';
import { configValue, hasBranch, symbolicRef, type RepositoryInfo } from '../../support/git.js';

/** The target of a launch from `from` in the repository `info`, whose config names `configured`. */
export async function launchTarget(info: RepositoryInfo, configured: string | undefined, from: string | undefined): Promise<string> {
  if (configured) return configured;
  if (info.mainBranch) return info.mainBranch;
  // Launched from a branch: that branch is where its work goes back to.
  if (from && (await hasBranch(info.root, from))) return from;
  const found = await detachedTarget(info);
  if (found) return found;
  throw flumeError('NO_TARGET', { repo: info.root, config: join(info.root, 'flume.config.ts') }, {
    details: { repo: info.root },
  });
}

/** The branch a detached main checkout belongs to, from what git itself records; undefined when none. */
async function detachedTarget(info: RepositoryInfo): Promise<string | undefined> {
  const { root, commonDir } = info;
  const candidates: Array<() => Promise<string | undefined>> = [
    // A rebase in progress records the branch it rewrites; a bisect the branch it started from.
    () => readGitFile(commonDir, 'rebase-merge', 'head-name'),
    () => readGitFile(commonDir, 'rebase-apply', 'head-name'),
    () => readGitFile(commonDir, 'BISECT_START'),
    // The remote's default branch, then the one git makes new repositories on.
    async () => (await symbolicRef(root, 'refs/remotes/origin/HEAD'))?.replace(/^refs\/remotes\/origin\//, ''),
    () => configValue(root, 'init.defaultBranch'),
  ];
  for (const candidate of candidates) {
    const name = (await candidate())?.replace(/^refs\/heads\//, '');
    if (name && (await hasBranch(root, name))) return name;
  }
  // The single one of main and master that exists; both or neither name nothing.
  const conventional = [];
  for (const name of ['main', 'master']) if (await hasBranch(root, name)) conventional.push(name);
  return conventional.length === 1 ? conventional[0] : undefined;
}

async function readGitFile(commonDir: string, ...path: string[]): Promise<string | undefined> {
  const text = await readFile(join(commonDir, ...path), 'utf8').catch(() => undefined);
  return text?.trim() || undefined;
}
