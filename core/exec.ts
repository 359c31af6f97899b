/**
 * The one module that runs other programs (execa). Everything goes as argv: nothing a user typed
 * ever reaches a shell. A string step from a repository's own config runs under `sh -c` because the
 * repository wrote it as a shell line.
 */
import { execa } from 'execa';
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What a finished program left. */
export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved, as a person would have seen them. */
  all: string;
  timedOut: boolean;
  /** Set when the program could not be started at all (not found, not executable). */
  failedToStart?: string;
}

/** How to run a program. */
export interface RunOptions {
  cwd?: string;
  /** The environment; with `clean`, the program gets exactly this and nothing of flume's own. */
  env?: Record<string, string | undefined>;
  clean?: boolean;
  input?: string;
  timeoutMs?: number;
  /** The signal that ends a program past `timeoutMs` (default SIGTERM; SIGKILL for one that may ignore it). */
  killSignal?: NodeJS.Signals;
}

/** Runs a program to its end and returns what it left; never throws for a non-zero exit. */
export async function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const result = await execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: !options.clean,
    input: options.input,
    timeout: options.timeoutMs,
    killSignal: options.killSignal,
    reject: false,
    all: true,
    stripFinalNewline: false,
    stdin: options.input === undefined ? 'ignore' : undefined,
  });
  const startError = result.failed && result.exitCode === undefined && !result.timedOut ? result.originalMessage || result.message : undefined;
  return {
    exitCode: result.exitCode ?? null,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    all: String(result.all ?? ''),
    timedOut: Boolean(result.timedOut),
    ...(startError ? { failedToStart: startError } : {}),
  };
}

/** Runs a program to its end, its output as bytes (for binary git output such as `cat-file --batch`). */
export async function runBytes(file: string, args: string[], options: RunOptions = {}): Promise<{ exitCode: number | null; stdout: Buffer; stderr: string }> {
  const result = await execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: !options.clean,
    input: options.input,
    timeout: options.timeoutMs,
    reject: false,
    encoding: 'buffer',
  });
  return {
    exitCode: result.exitCode ?? null,
    stdout: Buffer.from(result.stdout as Uint8Array),
    stderr: Buffer.from(result.stderr as Uint8Array).toString('utf8'),
  };
}

/**
 * Starts a program detached from flume, its output appended to a file, and returns its pid. The
 * file is opened here and handed over as a descriptor, so no pipe ties the child to flume and the
 * command that started it can exit at once.
 */
export function spawnDetached(file: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; logFile?: string } = {}): number | undefined {
  const out: number | 'ignore' = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  try {
    const subprocess = execa(file, args, {
      cwd: options.cwd,
      env: options.env,
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
