/**
 * What the tidy tests share: git run without blocking (so histories can run side by side), the
 * facts read around a tidy (branch heads, `git cherry`, worktrees), and a fresh repository with a
 * driver for the focused tests.
 */
import { execFile } from 'node:child_process';
import type { TidyOutcome } from '../../../core/engine/tidy/tidy.js';
import type { PlaceStatus } from '../../../core/engine/status/status.js';
import { git as gitSync, makeRepo, remove, trustMade } from '../../helpers/repo.js';
import { cliDriver, engineDriver, type Driver } from './driver.js';

/** The environment test-side git runs with: a fixed identity, no system or user config. */
export const GIT_ENV: Record<string, string> = {
  ...(process.env as Record<string, string>),
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  GIT_TERMINAL_PROMPT: '0',
};

/** Runs git; resolves with its trimmed stdout, rejects on a non-zero exit. */
export function git(cwd: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: GIT_ENV, maxBuffer: 64 << 20, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.join(' ')} (in ${cwd}) failed: ${stderr || error.message}`));
      else resolve(stdout.trim());
    });
    child.stdin?.end();
  });
}

/** Runs git; true when it succeeded. */
export function tryGit(cwd: string, ...args: string[]): Promise<boolean> {
  return git(cwd, ...args).then(
    () => true,
    () => false,
  );
}

/** Runs git with `input` on its standard input; resolves with its stdout. */
export function gitInput(cwd: string, input: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: GIT_ENV, maxBuffer: 64 << 20, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.join(' ')} (in ${cwd}) failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
    child.stdin?.end(input);
  });
}

/** Every local branch among `refs` (by its name under refs/heads/, never git's shortened name) and its head. */
export function branchHeads(refs: Map<string, string>): Map<string, string> {
  return new Map([...refs].filter(([ref]) => ref.startsWith('refs/heads/')).map(([ref, head]) => [ref.slice('refs/heads/'.length), head]));
}

/** Every ref (full name) and the object it points at. */
export async function allRefs(root: string): Promise<Map<string, string>> {
  const out = await git(root, 'for-each-ref', '--format=%(refname) %(objectname)');
  return new Map(out.split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]));
}

/** Every commit a repository holds: reachable from a ref, a worktree's HEAD or a reflog (stashes included). */
export async function everyCommit(dir: string): Promise<string[]> {
  return (await git(dir, 'rev-list', '--all', '--reflog')).split('\n').filter(Boolean);
}

/** The commits of `commits` whose object the repository at `dir` (or the git folder `gitDir`) no longer has (`git cat-file -e`, batched). */
export async function missingCommits(dir: string, commits: string[], gitDir?: string): Promise<string[]> {
  if (commits.length === 0) return [];
  const at = gitDir ? [`--git-dir=${gitDir}`] : [];
  const out = await gitInput(dir, commits.join('\n') + '\n', ...at, 'cat-file', '--batch-check=%(objectname) %(objecttype)');
  return out.split('\n').filter((line) => line && !line.endsWith(' commit')).map((line) => line.split(' ')[0]);
}

/** `git cherry <target> <branch>`: the commits whose patch the target lacks (branches by full ref name). */
export async function cherryPlus(root: string, target: string, branch: string): Promise<string[]> {
  const out = await git(root, 'cherry', `refs/heads/${target}`, `refs/heads/${branch}`);
  return out.split('\n').filter((line) => line.startsWith('+ ')).map((line) => line.slice(2));
}

/** Registered worktrees: path → branch (undefined when detached) and lock. */
export async function worktrees(root: string): Promise<Map<string, { branch?: string; locked: boolean }>> {
  const out = await git(root, 'worktree', 'list', '--porcelain');
  const result = new Map<string, { branch?: string; locked: boolean }>();
  let path = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) result.set((path = line.slice(9)), { locked: false });
    else if (line.startsWith('branch ')) result.get(path)!.branch = line.slice(7).replace(/^refs\/heads\//, '');
    else if (line === 'locked' || line.startsWith('locked ')) result.get(path)!.locked = true;
  }
  return result;
}

/**
 * A state folder for the test file (also the process's `FLUME_STATE_DIR`, for the in-process
 * engine) and fresh repositories, all removed after the file's tests.
 */
export function tidyFixture(stateDir: string) {
  const made: string[] = [stateDir];
  process.env.FLUME_STATE_DIR = stateDir;
  return {
    /** A fresh repository (with `config` as its flume.config.ts) and a driver for it. */
    async repo(options: { config?: string; cli?: boolean; env?: Record<string, string> } = {}): Promise<{ root: string; flume: Driver }> {
      const root = makeRepo(options.config === undefined ? {} : { config: options.config });
      made.push(root);
      await trustMade(stateDir);
      return { root, flume: options.cli ? cliDriver(root, stateDir, options.env) : await engineDriver(root) };
    },
    /** Removes `path` with the rest. */
    later(path: string): string {
      made.push(path);
      return path;
    },
    cleanup(): void {
      made.forEach(remove);
    },
  };
}

/** What tidy said of one place. */
export const outcomeOf = (outcomes: TidyOutcome[], id: string) => outcomes.find((o) => o.id === id);
/** The repository's local branches, sorted. */
export const branches = (root: string) => gitSync(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/').split('\n').map((ref) => ref.slice('refs/heads/'.length));
/** The repository's registered worktrees, main checkout first. */
export const worktreePaths = (root: string) => gitSync(root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).map((l) => l.slice(9));
/** One place as status shows it. */
export async function shown(flume: Driver, id: string): Promise<PlaceStatus | undefined> {
  return (await flume.status()).places.find((p) => p.id === id);
}
