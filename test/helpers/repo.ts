/**
 * Real git repositories in temp folders for tests, and the built flume CLI run against them with a
 * state folder of the test's own (never the user's): `runFlume`, the one way a test runs it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStatusRun } from './status-schema.js';
import { runInProcess } from './in-process.js';

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

/** How a test runs flume: the run's folder, environment and standard input, and whether it must be a process. */
export interface FlumeRunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Fed to the command's standard input (the run is then a process: nothing in-process reads it). */
  input?: string;
  /**
   * A real process (`node dist/bin/flume.js`), where the process itself is what a test is about: its
   * exit, a crash point that kills it, a lock it holds or races for, its start, its arguments as `ps`
   * shows them. Otherwise the run is in-process unless `FLUME_TEST_PROCESSES=1`.
   */
  process?: boolean;
  /** A process still running after this long is killed with SIGKILL (it exits 128 + 9). */
  timeoutMs?: number;
}

/**
 * Runs the built flume CLI and waits for it: in this process by default (in-process.ts, the bin's own
 * entry with the run's folder and environment), as a real process when the options ask for one, when
 * `FLUME_TEST_PROCESSES=1` runs the whole suite as processes (but for an argument holding NUL, which
 * no process can be handed), and always for what only a process can
 * do: a crash point (`FLUME_CRASH_AT` kills the process it is reached in), a command that runs until
 * stopped (`watch`, `status --watch`), and standard input. The repositories makeRepo made are trusted
 * first in the run's state folder. A `status --json` that succeeds is validated against
 * status.schema.json here (rejecting when it does not match), so every test that reads status checks the schema.
 */
export async function runFlume(args: string[], options: FlumeRunOptions = {}): Promise<CliResult> {
  if (options.env?.FLUME_STATE_DIR) await trustMade(options.env.FLUME_STATE_DIR);
  const result = asProcess(args, options) ? await spawnRun(args, options) : await runInProcess(args, options);
  checkStatusRun(args, result);
  return result;
}

/** The name most tests call runFlume by. */
export const flume = runFlume;

/** runFlume as a real process, named so where a test is about the process. */
export function spawnFlume(args: string[], options: Omit<FlumeRunOptions, 'process'> = {}): Promise<CliResult> {
  return runFlume(args, { ...options, process: true });
}

/** True when a run must be (or is asked to be) a process of its own. */
function asProcess(args: string[], options: FlumeRunOptions): boolean {
  // An argument holding NUL can be handed to no process (the catalogue of bad text gives some).
  if (args.some((arg) => arg.includes('\0'))) return false;
  if (options.process || process.env.FLUME_TEST_PROCESSES === '1') return true;
  if (options.env?.FLUME_CRASH_AT || options.input) return true;
  return args[0] === 'watch' || (args[0] === 'status' && args.includes('--watch'));
}

/** The bin started as a process; one killed by a signal exits 128 + its number. */
function spawnRun(args: string[], options: FlumeRunOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLUME_BIN, ...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : -1), stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
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
