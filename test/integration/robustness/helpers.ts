/**
 * Shared by the robustness tests: the CLI run with a state folder of the test's own and limited
 * parallelism, the error code a run printed, a snapshot that also covers the state files' contents,
 * and the consistency check every crash and race must leave true.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { flumeEnv, git, runFlume, snapshot, spawnFlume, tempDir, type CliResult } from '../../helpers/repo.js';

/** A run of the CLI, with the code of the FlumeError it printed (from `--json` stdout or stderr). */
export interface Run extends CliResult {
  error?: { code: string; message: string; fix?: string; details?: Record<string, unknown>; plugin?: string };
  json?: unknown;
}

/** Exit code of a process flume killed with SIGKILL at a crash point (as runFlume reports it). */
export const KILLED = 128 + 9;

/** Runs `fn` over `items`, at most `limit` at once (the machine has two cores; every run is a node process). */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A limiter shared by every CLI run of a test file: at most `limit` flume processes at once. */
export function limiter(limit: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (fn) => {
    if (running >= limit) await new Promise<void>((go) => waiting.push(go));
    running++;
    try {
      return await fn();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * A flume of the test's own: its state folder (and Claude Code's config folder) in temp, its
 * environment, its working folder `cwd` (a scratch folder outside any repository, so a run that
 * forgot --repo can touch nothing), and two runners over runFlume. `cli` runs as the suite runs
 * flume (in this process by default), so a catalogue of hundreds of bad inputs stays fast. `spawned`
 * is a real process, for what is about the process (a crash point, a lock it holds, a sample of the
 * catalogue as processes): at most `limit` at once, one that outlives `timeoutMs` killed (a command
 * that should have been refused but runs on, such as watch).
 */
export function testFlume(options: { limit?: number; env?: Record<string, string>; cwd?: string } = {}) {
  const stateDir = tempDir('flume-state-');
  const env = flumeEnv(stateDir, { CLAUDE_CONFIG_DIR: join(stateDir, 'claude'), ...options.env });
  const limit = limiter(options.limit ?? 2);
  const cli = async (args: string[], extra: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> => parse(await runFlume(args, { cwd: extra.cwd ?? options.cwd, env: { ...env, ...extra.env } }));
  const spawned = (args: string[], extra: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> =>
    limit(async () => parse(await spawnFlume(args, { cwd: extra.cwd ?? options.cwd, env: { ...env, ...extra.env }, timeoutMs: extra.timeoutMs ?? 30_000 })));
  return { stateDir, env, cli, spawned };
}

/** What `flume launch` is given in these tests beside its own flags: no supervisor left running behind the test. */
export const NO_WATCH = ['--no-watch'];
/** Only make and ready the place: no agent (the crash test runs the first stage on the printed host). */
export const MAKE_ONLY = ['--no-watch', '--no-start'];

/** The error a run printed, read from `--json` stdout or the `CODE message` line on stderr. */
export function parse(result: CliResult): Run {
  const out: Run = { ...result };
  try {
    out.json = JSON.parse(result.stdout);
    const error = (out.json as { error?: Run['error'] })?.error;
    if (error) out.error = error;
  } catch {
    // not JSON: a plain run
  }
  const line = /^([A-Z][A-Z_]+) (.*)$/m.exec(result.stderr);
  if (!out.error && line) out.error = { code: line[1], message: line[2] };
  return out;
}

/** Expects a refusal: the exit code and one of the codes (never by message text). */
export function expectRefused(run: Run, exit: number, codes: string[], what = ''): void {
  const code = run.error?.code ?? '(none)';
  expect({ what, exit: run.code, code }, `${what}\n${run.stdout}${run.stderr}`).toEqual({ what, exit, code: codes.includes(code) ? code : `one of ${codes.join('|')}` });
  // A refusal says how to fix it, except usage errors yargs words itself.
  if (exit === 1) expect(run.error?.message, what).toBeTruthy();
}

/** The repository's git common dir. */
export function commonDir(root: string): string {
  let dir = commonDirs.get(root);
  if (!dir) commonDirs.set(root, (dir = git(root, 'rev-parse', '--path-format=absolute', '--git-common-dir')));
  return dir;
}
const commonDirs = new Map<string, string>();

/** The folder of the repository's place records. */
export function recordsDir(root: string): string {
  return join(commonDir(root), 'flume', 'places');
}

/**
 * Everything a refusal must leave as it was: repo.ts's snapshot (worktrees, branches, state file
 * names, git status), plus the content of every state file, `info/exclude`, and the host's list.
 */
export function fullSnapshot(root: string, stateDir: string, options: { locks?: boolean; quick?: boolean } = {}): string {
  const common = commonDir(root);
  // The quick form (for a check after every run) leaves out git status and the `ls` of the state folder,
  // which the digest of the state folder covers.
  const head = options.quick ? [git(root, 'worktree', 'list', '--porcelain'), git(root, 'for-each-ref', '--format=%(refname) %(objectname)')].join('\n') : snapshot(root);
  // The host's trust record is written by the test harness itself (trustMade, before each run), and
  // config-probes.json is a cache of how a config loads, not state of any repository or place.
  const host = treeDigest(stateDir)
    .split('\n')
    .filter((line) => !/^(trust|config-probes)\.json /.test(line))
    .join('\n');
  const text = [head, treeDigest(join(common, 'flume')), readOr(join(common, 'info', 'exclude')), host].join('\n--\n');
  // While other runs go on, a lock a live run holds is no change; `locks: false` leaves them out
  // (and the directory sizes `ls -la` prints, which move with them).
  if (options.locks !== false) return text;
  return text
    .split('\n')
    .filter((line) => !/\.lock(\.[0-9a-f-]+\.(tmp|stale))?( [0-9a-f]{40})?$/.test(line) && !/^\d+$/.test(line))
    .join('\n');
}

/** Every file under a folder (recursively) with a digest of its content; for folders that are not a checkout. */
export function treeDigest(dir: string): string {
  if (!existsSync(dir)) return '(none)';
  const lines: string[] = [];
  const walk = (folder: string, prefix: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = statSync(path);
      if (stat.isDirectory()) {
        lines.push(`${prefix}${name}/`);
        walk(path, `${prefix}${name}/`);
      } else {
        lines.push(`${prefix}${name} ${createHash('sha1').update(readFileSync(path)).digest('hex')}`);
      }
    }
  };
  walk(dir, '');
  return lines.join('\n');
}

function readOr(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '(none)';
}

/** One place in `status --json`. */
export interface StatusPlace {
  id: string;
  path: string;
  branch: string;
  state: string;
  brief: string;
  worktree: { present: boolean };
  problems: string[];
  kept?: { reason: string };
}

/** The parsed `status --json` report. */
export interface StatusReport {
  repositories: Array<{ root: string; error?: { code: string }; broken: Array<{ file: string }> }>;
  places: StatusPlace[];
}

/**
 * The consistency every crash and race must leave, judged by `flume status --json` (the next
 * command) and by git itself:
 * - every record parses (none is half-written);
 * - every worktree or folder under places/ has a record that status reports;
 * - every record's worktree exists, or status says why (a problem, or kept);
 * - status runs and exits 0.
 */
export async function expectConsistent(run: (args: string[]) => Promise<Run>, root: string): Promise<StatusReport> {
  const result = await run(['status', '--json', '--repo', root]);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  const report = result.json as StatusReport;
  expect(report.repositories.flatMap((r) => r.broken)).toEqual([]);
  const dir = recordsDir(root);
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')) : [];
  for (const name of files) expect(() => JSON.parse(readFileSync(join(dir, name), 'utf8')), name).not.toThrow();
  expect(report.places.length).toBe(files.length);

  const byPath = new Map(report.places.map((p) => [p.path, p]));
  const placesDir = join(root, 'places');
  const worktrees = git(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
    .filter((path) => path.startsWith(placesDir + '/'));
  const folders = existsSync(placesDir) ? readdirSync(placesDir).map((name) => join(placesDir, name)) : [];
  for (const path of new Set([...worktrees, ...folders])) {
    expect(byPath.has(path), `${path} is under places/ but status reports no place for it`).toBe(true);
  }
  for (const folder of folders) expect(worktrees, `${folder} is a folder under places/ that is no worktree`).toContain(folder);
  for (const place of report.places) {
    const explained = place.worktree.present || place.problems.length > 0 || (place.state === 'kept' && Boolean(place.kept?.reason));
    expect(explained, `${place.id}: its worktree is gone and status does not say why`).toBe(true);
  }
  return report;
}

/** True when `commit` is reachable from some branch (no work is lost). */
export function reachable(root: string, commit: string): boolean {
  return git(root, 'branch', '--contains', commit, '--format=%(refname:short)').length > 0;
}

/** The local branches of a repository. */
export function branches(root: string): string[] {
  return git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
}

/** The worktrees of a repository, main first. */
export function worktreePaths(root: string): string[] {
  return git(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));
}
