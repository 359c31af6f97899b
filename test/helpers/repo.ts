/**
 * Real git repositories in temp folders for tests, and the built flume CLI run against them with a
 * state folder of the test's own (never the user's).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStatusRun } from './status-schema.js';

/** The project's root and its built CLI. */
export const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
export const FLUME_BIN = join(PROJECT, 'dist', 'bin', 'flume.js');

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** A temp folder (real path, so comparisons with git's output hold). */
export function tempDir(prefix = 'flume-test-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Runs git in `cwd` and returns its trimmed stdout; throws on failure. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Writes a file (making folders) relative to `root`. */
export function write(root: string, path: string, content: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** Writes and commits a file; returns the new commit. */
export function commit(root: string, path: string, content: string, message = `change ${path}`): string {
  write(root, path, content);
  git(root, 'add', '--', path);
  git(root, 'commit', '-q', '-m', message);
  return git(root, 'rev-parse', 'HEAD');
}

/**
 * The repositories makeRepo made that the tests mean to trust. flume runs no config the user has not
 * trusted (`flume trust`); a test's repository is trusted, as it is at each flume run, in the state
 * folder of that run (`trustMade`), unless it was made with `trusted: false` to test trust itself.
 */
const trustedRepos = new Set<string>();

/** Trusts every repository makeRepo made (as each is now) in `stateDir`, through flume's own library. */
export async function trustMade(stateDir: string): Promise<void> {
  const { trustRepository } = await import('../../core/config/trust.js');
  for (const root of trustedRepos) {
    if (!existsSync(root)) trustedRepos.delete(root);
    else await trustRepository(root, stateDir);
  }
}

/** A fresh repository on `main` with one commit, optionally with a flume config file. */
export function makeRepo(options: { config?: string; configFile?: string; trusted?: boolean } = {}): string {
  const root = tempDir('flume-repo-');
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Test');
  git(root, 'config', 'user.email', 'test@example.com');
  git(root, 'config', 'commit.gpgsign', 'false');
  write(root, 'README.md', '# test\n');
  if (options.config !== undefined) write(root, options.configFile ?? 'flume.config.ts', options.config);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  if (options.trusted !== false) trustedRepos.add(root);
  return root;
}

/** What a CLI run left. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An environment for flume with a state folder of its own. */
export function flumeEnv(stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(process.env as Record<string, string>), ...GIT_ENV, FLUME_STATE_DIR: stateDir, ...extra };
}

/**
 * Runs the built flume CLI and waits for it. A `status --json` that succeeds is validated against
 * status.schema.json here (rejecting when it does not match), so every test that reads status checks the schema.
 */
export async function flume(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  if (options.env?.FLUME_STATE_DIR) await trustMade(options.env.FLUME_STATE_DIR);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLUME_BIN, ...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const result = { code: code ?? (signal ? 128 + 9 : -1), stdout, stderr };
      try {
        checkStatusRun(args, result);
      } catch (error) {
        reject(error);
        return;
      }
      resolve(result);
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A snapshot of everything flume may change in a repository: worktrees, branches, state files. */
export function snapshot(root: string): string {
  const worktrees = git(root, 'worktree', 'list', '--porcelain');
  const branches = git(root, 'for-each-ref', '--format=%(refname) %(objectname)');
  let state = '';
  try {
    state = execFileSync('sh', ['-c', 'ls -la "$1"/flume/places 2>/dev/null | awk \'{print $NF}\' | sort', 'sh', git(root, 'rev-parse', '--path-format=absolute', '--git-common-dir')], { encoding: 'utf8' });
  } catch {
    state = '';
  }
  const status = git(root, 'status', '--porcelain');
  return [worktrees, branches, state, status].join('\n--\n');
}

/** Removes a temp folder. */
export function remove(path: string): void {
  // Retried: a process that was just ended may still be closing its last file in the folder.
  rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
