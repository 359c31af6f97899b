/**
 * The folders outside its place a Codex agent may write under Codex's `workspace-write` sandbox, so
 * that it can commit on its branch: a place is a git worktree, and its index, its branch's ref and
 * the objects a commit writes live in the main checkout's `.git`, which the sandbox keeps read-only
 * (agents/codex/FACTS.md, "The sandbox and a place's commit"). Measured with the real Codex 0.171.0,
 * a commit needs each of these and no more:
 *
 * - the worktree's own git folder (`<main>/.git/worktrees/<place>`): its index, `HEAD`, its reflog;
 * - the object store (`<main>/.git/objects`): the blobs, trees and the commit;
 * - the folder of the branch's ref (`refs/heads/<kind>` for `<kind>/<name>`): git writes
 *   `<name>.lock` beside the ref and renames it over, and Codex takes only folders as roots, so the
 *   folder, not the file (the refs of the other `<kind>/…` branches come with it; a kind's
 *   branch pattern with no `/` makes it `refs/heads` itself);
 * - the folder of the branch's reflog (`logs/refs/heads/<kind>`), when git keeps one.
 *
 * The main checkout's `.git` as a whole does not do (Codex keeps a root's own `.git` read-only).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { flumeError, run } from '../../core/index.js';

/** The folders a commit on `branch` in the worktree at `place` writes, each as git names it there. */
export async function commitFolders(place: string, branch: string): Promise<string[]> {
  const ref = `refs/heads/${branch}`;
  const asked = ['--absolute-git-dir', '--git-path', 'objects', '--git-path', ref, '--git-path', `logs/${ref}`];
  const result = await run('git', ['rev-parse', ...asked], { cwd: place, timeoutMs: 10_000 });
  const [gitDir, objects, refFile, logFile] = result.stdout.split('\n').map((line) => line.trim());
  if (result.exitCode !== 0 || !gitDir || !objects || !refFile || !logFile) {
    throw flumeError('AGENT_START_FAILED', { place, message: (result.stderr || result.stdout).trim() || `exit ${result.exitCode}` }, {
      variant: 'codexSandbox',
      details: { place, branch },
    });
  }
  const logFolder = resolve(place, dirname(logFile));
  // A branch with no reflog has no log folder to name.
  return [resolve(place, gitDir), resolve(place, objects), resolve(place, dirname(refFile)), ...(existsSync(logFolder) ? [logFolder] : [])];
}
