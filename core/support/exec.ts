/**
 * The one module that runs other programs. Everything goes as argv: nothing a user typed ever
 * reaches a shell. A string step from a repository's own config runs under `sh -c` because the
 * repository wrote it as a shell line.
 *
 * Two ways in, by what is run. `run` is for the short programs flume asks and reads the answer of
 * (git, tmux, an agent's `--version`, flume itself), dozens of times in one command: it goes through
 * node's own `child_process`, because loading execa costs more than starting node (about 110 ms,
 * measured), and every `flume status` would pay it. `runStep` and `spawnDetached` are for what flume
 * starts on the user's behalf (a repository's readying steps, a worktree tool, the supervisor): they
 * go through execa, loaded when first needed, for its kill-after-grace on a time limit and its
 * clean-up of a step when flume itself exits. `startDetached` leaves one of flume's own programs
 * running after it, on node's child_process too.
 *
 * Every way in starts from what the caller's environment passes on (core/support/environment.ts): a
 * caller inside a git hook must not point flume's git, or anything flume starts, at its repository or
 * its push, and a caller's FLUME_HOST must not send flume's own programs to another host.
 */
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { passedOn } from './environment.js';
import { longTimeout, type LongTimer } from './duration.js';

/** What a finished program left. */
export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved, as a person would have seen them. */
  all: string;
  timedOut: boolean;
  /** The signal that ended the program, when one did (`run` only). */
  endedBy?: NodeJS.Signals;
  /** Set when the program could not be started at all (not found, not executable). */
  failedToStart?: string;
}

/** How to run a program. */
export interface RunOptions {
  cwd?: string;
  /**
   * Added to what the caller's environment passes on (environment.ts); with `clean`, the program gets
   * exactly this and nothing of flume's own. A variable set to undefined is removed.
   */
  env?: Record<string, string | undefined>;
  clean?: boolean;
  input?: string;
  /**
   * `run` only: the program's standard input stays open after `input` until it ends, so its input
   * ends when this process does (however it ends) rather than when `input` is written.
   */
  holdInput?: boolean;
  timeoutMs?: number;
  /** The signal that ends a program past `timeoutMs` (default SIGTERM; SIGKILL for one that may ignore it). */
  killSignal?: NodeJS.Signals;
  /** Handed each piece of output as it comes (`run` only), besides keeping it: a relayed command's output shows as it is written. */
  onOutput?: { stdout(text: string): void; stderr(text: string): void };
  /** `run` only: ends the program (with `killSignal`) once aborted. */
  signal?: AbortSignal;
}

/** Runs a short program flume reads the answer of, to its end; never throws for a non-zero exit. */
export async function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const result = await spawnToEnd(file, args, options);
  const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');
  return {
    exitCode: result.exitCode,
    stdout: text(result.stdout),
    stderr: text(result.stderr),
    all: text(result.all),
    timedOut: result.timedOut,
    ...(result.endedBy ? { endedBy: result.endedBy } : {}),
    ...(result.failedToStart ? { failedToStart: result.failedToStart } : {}),
  };
}

/** Runs a short program to its end, its output as bytes (for binary git output such as `cat-file --batch`). */
export async function runBytes(file: string, args: string[], options: RunOptions = {}): Promise<{ exitCode: number | null; stdout: Buffer; stderr: string }> {
  const result = await spawnToEnd(file, args, options);
  return { exitCode: result.exitCode, stdout: Buffer.concat(result.stdout), stderr: Buffer.concat(result.stderr).toString('utf8') };
}

interface Spawned {
  exitCode: number | null;
  stdout: Buffer[];
  stderr: Buffer[];
  all: Buffer[];
  timedOut: boolean;
  endedBy?: NodeJS.Signals;
  failedToStart?: string;
}

function spawnToEnd(file: string, args: string[], options: RunOptions): Promise<Spawned> {
  return new Promise((resolve) => {
    const done: Spawned = { exitCode: null, stdout: [], stderr: [], all: [], timedOut: false };
    const env = environment(options);
    let timer: LongTimer | undefined;
    let settled = false;
    let stop: (() => void) | undefined;
    const finish = () => {
      if (settled) return;
      settled = true;
      timer?.clear();
      if (stop) options.signal?.removeEventListener('abort', stop);
      resolve(done);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, { cwd: options.cwd, env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    } catch (error) {
      done.failedToStart = error instanceof Error ? error.message : String(error);
      finish();
      return;
    }
    child.stdout!.on('data', (chunk: Buffer) => (done.stdout.push(chunk), done.all.push(chunk)));
    child.stderr!.on('data', (chunk: Buffer) => (done.stderr.push(chunk), done.all.push(chunk)));
    if (options.onOutput) {
      // Decoded piece by piece: a character split between two pieces is handed over whole.
      const { stdout, stderr } = options.onOutput;
      const out = new StringDecoder('utf8');
      const err = new StringDecoder('utf8');
      child.stdout!.on('data', (chunk: Buffer) => stdout(out.write(chunk)));
      child.stderr!.on('data', (chunk: Buffer) => stderr(err.write(chunk)));
    }
    // A program that was never started answers with an 'error' and no exit.
    child.on('error', (error) => {
      if (child.pid === undefined) done.failedToStart = error.message;
      if (child.pid === undefined) finish();
    });
    child.on('close', (code, signal) => {
      done.exitCode = code;
      if (signal) done.endedBy = signal;
      child.stdin?.destroy();
      finish();
    });
    if (options.signal) {
      stop = () => void child.kill(options.killSignal ?? 'SIGTERM');
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    }
    // A program that exited is waited for a moment longer, not for ever: something it started in the
    // background (a daemon that kept its output open) would otherwise hold its pipes, and flume, open.
    child.on('exit', (code, signal) => {
      const late = setTimeout(() => {
        done.exitCode = code;
        if (signal) done.endedBy = signal;
        child.stdin?.destroy();
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, CLOSE_GRACE_MS);
      late.unref();
    });
    const limit = options.timeoutMs ?? DEFAULT_LIMIT_MS[basename(file)];
    if (limit !== undefined) {
      timer = longTimeout(() => {
        done.timedOut = true;
        child.kill(options.killSignal ?? 'SIGTERM');
        // One that ignores its signal is killed for good a moment later.
        setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), KILL_GRACE_MS).unref();
      }, limit);
    }
    if (options.input !== undefined) {
      // A program that exits without reading all its input closes the pipe: that is its answer, not flume's error.
      child.stdin!.on('error', () => undefined);
      if (options.holdInput) child.stdin!.write(options.input);
      else child.stdin!.end(options.input);
    }
  });
}

/**
 * The time limit of a program flume runs for itself with none of its own: git and tmux answer in
 * moments, and one that hangs (a lock, a server gone mid-command) must not hold a supervisor's step,
 * and with it its place, for ever. A program past its limit reads as timed out, as any other.
 */
const DEFAULT_LIMIT_MS: Record<string, number> = { git: 5 * 60_000, tmux: 60_000 };
/** How long a program past its limit has to end after its signal, before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** How long an exited program's pipes may stay open (held by something it left running), ms. */
const CLOSE_GRACE_MS = 5000;

/** A program's whole environment: `env` alone with `clean`, else what the caller's passes on, then `env`. */
function environment(options: { env?: Record<string, string | undefined>; clean?: boolean }): Record<string, string> {
  return withoutUnset(options.clean ? (options.env ?? {}) : { ...passedOn(process.env), ...options.env });
}

/** The environment without the variables set to undefined (removed, as the caller asked). */
function withoutUnset(env: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) kept[name] = value;
  return kept;
}

/**
 * Runs what flume starts on the user's behalf (a readying step, a worktree tool) to its end, through
 * execa: past its time limit it is sent `killSignal`, and SIGKILL if it is still there 5 s later; if
 * flume itself exits meanwhile, the step is ended too. Never throws for a non-zero exit.
 */
export async function runStep(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const { execa } = await import('execa');
  const subprocess = execa(file, args, {
    cwd: options.cwd,
    env: environment(options),
    extendEnv: false,
    input: options.input,
    killSignal: options.killSignal,
    reject: false,
    all: true,
    stripFinalNewline: false,
    stdin: options.input === undefined ? 'ignore' : undefined,
  });
  // The time limit is flume's own, not execa's `timeout` (one Node timer: past 2^31-1 ms it fires at
  // once); 0 is no limit, as it is to execa.
  let timedOut = false;
  const timer = options.timeoutMs ? longTimeout(() => ((timedOut = true), subprocess.kill()), options.timeoutMs) : undefined;
  const result = await subprocess.finally(() => timer?.clear());
  const startError = result.failed && result.exitCode === undefined && !timedOut ? result.originalMessage || result.message : undefined;
  return {
    exitCode: result.exitCode ?? null,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    all: String(result.all ?? ''),
    timedOut,
    ...(startError ? { failedToStart: startError } : {}),
  };
}

/**
 * Starts a program detached from flume, its output appended to a file, and returns its pid. The
 * file is opened here and handed over as a descriptor, so no pipe ties the child to flume and the
 * command that started it can exit at once.
 */
export async function spawnDetached(file: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; logFile?: string } = {}): Promise<number | undefined> {
  const { execa } = await import('execa');
  // The log is the state folder's, private as its other files are (600).
  const out: number | 'ignore' = options.logFile ? openSync(options.logFile, 'a', 0o600) : 'ignore';
  try {
    const subprocess = execa(file, args, {
      cwd: options.cwd,
      env: environment(options),
      extendEnv: false,
      detached: true,
      stdin: 'ignore',
      stdout: out as 'ignore',
      stderr: out as 'ignore',
      reject: false,
      cleanup: false,
    });
    subprocess.catch(() => undefined);
    subprocess.unref();
    return subprocess.pid;
  } finally {
    if (typeof out === 'number') closeSync(out);
  }
}

/**
 * Starts one of flume's own programs detached, to go on after this process ends (the background
 * config probe), on node's own child_process: a command that must answer at once does not pay for
 * loading execa. Its output goes nowhere; nothing waits for it.
 */
export function startDetached(file: string, args: string[], options: { cwd?: string } = {}): number | undefined {
  const child = spawn(file, args, { cwd: options.cwd, env: environment({}), detached: true, stdio: 'ignore' });
  child.on('error', () => undefined);
  child.unref();
  return child.pid;
}

/**
 * Runs two programs to their end with the first's output piped into the second's input (`input`
 * written to the first first), both from what the caller's environment passes on; both are killed
 * past `timeoutMs`. Answers their exit codes and the last of what they wrote on their errors.
 */
export function runPiped(from: { file: string; args: string[]; input?: string }, to: { file: string; args: string[]; cwd?: string; env?: Record<string, string> }, timeoutMs: number): Promise<{ from: number | null; to: number | null; errors: string }> {
  return new Promise((done) => {
    const first = spawn(from.file, from.args, { env: environment({}), stdio: ['pipe', 'pipe', 'pipe'] });
    const second = spawn(to.file, to.args, { cwd: to.cwd, env: environment({ env: to.env }), stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    const note = (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2000));
    first.stderr.on('data', note);
    second.stderr.on('data', note);
    first.stdin.on('error', () => undefined);
    second.stdin.on('error', () => undefined);
    first.on('error', (error) => (note(Buffer.from(error.message)), second.stdin.end()));
    second.on('error', (error) => (note(Buffer.from(error.message)), first.kill('SIGKILL')));
    first.stdout.pipe(second.stdin);
    first.stdin.end(from.input ?? '');
    const timer = setTimeout(() => (first.kill('SIGKILL'), second.kill('SIGKILL')), timeoutMs);
    const ended = (child: ReturnType<typeof spawn>) => new Promise<number | null>((end) => child.on('close', end));
    void Promise.all([ended(first), ended(second)]).then(([a, b]) => {
      clearTimeout(timer);
      done({ from: a, to: b, errors });
    });
  });
}

/**
 * Runs a program on the caller's own terminal (stdin, stdout and stderr handed over) to its end:
 * how the live view puts the operator on an agent's pane (`tmux attach`). Resolves with its exit code.
 */
export function runAttached(file: string, args: string[], options: { env?: Record<string, string | undefined> } = {}): Promise<number | null> {
  return new Promise((resolve) => {
    try {
      const child = spawn(file, args, { env: environment(options), stdio: 'inherit' });
      child.on('error', () => resolve(null));
      child.on('close', (code) => resolve(code));
    } catch {
      resolve(null);
    }
  });
}

/** The full path of a program on PATH, or undefined. */
export function which(program: string, path = process.env.PATH ?? ''): string | undefined {
  if (program.includes('/')) return isExecutable(program) ? program : undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
