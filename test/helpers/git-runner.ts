/**
 * Test-side git without a fork of the test's own process per call.
 *
 * A test worker is a large process (vitest and the test's modules), and on the machines this suite
 * runs on, starting a process costs system time in proportion to the parent's memory: measured under
 * the suite's load, a git started from a worker cost ~25 ms of CPU in fork alone, and the suite ran
 * ~10,000 of them. Here one small bash per worker starts them instead: the worker hands it each
 * command (its folder, its standard input, its arguments, NUL-separated) and bash runs git with
 * output to files, then answers with the exit code. A fork of bash costs a tenth of a fork of the
 * worker.
 *
 * Two forms share one runner per environment: `gitRunSync` (the synchronous helper every test uses)
 * and `gitRun` (a promise, for the tidy tests). Both block while git runs, over named pipes. Each
 * runner keeps the environment it was started with: a call made with another environment starts a
 * runner of its own.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a finished git left. */
export interface GitRun {
  status: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** The runner's loop: read a request from fd 3, run git, answer the exit code on fd 4. */
const LOOP = String.raw`
dir=$1
exec 3<"$dir/req" 4>"$dir/res"
while IFS= read -r -d '' id <&3; do
  IFS= read -r -d '' cwd <&3
  IFS= read -r -d '' input <&3
  IFS= read -r -d '' count <&3
  args=()
  for ((i = 0; i < count; i++)); do IFS= read -r -d '' a <&3; args+=("$a"); done
  [ -n "$input" ] || input=/dev/null
  if cd -- "$cwd" 2>/dev/null; then
    git "${'$'}{args[@]}" <"$input" >"$dir/$id.out" 2>"$dir/$id.err"
    printf '%s %d\n' "$id" "$?" >&4
  else
    : >"$dir/$id.out"; : >"$dir/$id.err"
    printf '%s cwd\n' "$id" >&4
  fi
done
`;

/** A request: NUL-terminated fields. */
function request(id: string, cwd: string, input: string, args: string[]): Buffer {
  return Buffer.from([id, cwd, input, String(args.length), ...args].map((field) => `${field}\0`).join(''));
}

/** The environment a runner runs git with, as one comparable string. */
const envKey = (env: NodeJS.ProcessEnv) => JSON.stringify(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1)));

/** An error shaped as execFileSync's (status, stdout, stderr), for callers that read them. */
function failure(args: string[], cwd: string, run: GitRun | 'cwd'): Error {
  if (run === 'cwd') return Object.assign(new Error(`spawnSync git ENOENT (no folder ${cwd})`), { code: 'ENOENT' });
  const stderr = run.stderr.toString('utf8');
  return Object.assign(new Error(`Command failed: git ${args.join(' ')}\n${stderr}`), { status: run.status, stdout: run.stdout.toString('utf8'), stderr });
}

function takeFiles(dir: string, id: string): { stdout: Buffer; stderr: Buffer } {
  const out = join(dir, `${id}.out`);
  const err = join(dir, `${id}.err`);
  const result = { stdout: readFileSync(out), stderr: readFileSync(err) };
  rmSync(out, { force: true });
  rmSync(err, { force: true });
  return result;
}

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flume-git-runner-'));
  execFileSync('mkfifo', [join(dir, 'req'), join(dir, 'res')]);
  return dir;
}


interface SyncRunner {
  key: string;
  dir: string;
  req: number;
  res: number;
  child: ChildProcess;
  pending: string;
  next: number;
}

const syncRunners = new Map<string, SyncRunner>();

function syncRunner(env: NodeJS.ProcessEnv): SyncRunner {
  const key = envKey(env);
  const known = syncRunners.get(key);
  if (known && known.child.exitCode === null && known.child.signalCode === null) return known;
  const dir = newDir();
  const child = spawn('bash', ['-c', LOOP, 'git-runner', dir], { env, stdio: 'ignore' });
  child.unref();
  if (child.pid === undefined) throw new Error('git runner: bash could not be started');
  // Opened in the order bash opens them, each open waiting for the other end.
  const req = openSync(join(dir, 'req'), 'w');
  const res = openSync(join(dir, 'res'), 'r');
  const runner: SyncRunner = { key, dir, req, res, child, pending: '', next: 0 };
  syncRunners.set(key, runner);
  return runner;
}

/** Reads the runner's answer to request `id`: its exit code, or 'cwd' when the folder was missing. */
function readAnswer(runner: SyncRunner, id: string): number | 'cwd' {
  const buffer = Buffer.alloc(256);
  for (;;) {
    const newline = runner.pending.indexOf('\n');
    if (newline >= 0) {
      const line = runner.pending.slice(0, newline);
      runner.pending = runner.pending.slice(newline + 1);
      const [answered, code] = line.split(' ');
      if (answered !== id) throw new Error(`git runner: answer for ${answered} while waiting for ${id}`);
      return code === 'cwd' ? 'cwd' : Number(code);
    }
    const read = readSync(runner.res, buffer, 0, buffer.length, null);
    if (read === 0) throw new Error('git runner: ended without answering');
    runner.pending += buffer.toString('utf8', 0, read);
  }
}

/** Runs git in `cwd` with `env` and waits for it; throws as execFileSync does when it fails. */
export function gitRunSync(cwd: string, args: string[], env: NodeJS.ProcessEnv): GitRun {
  const runner = syncRunner(env);
  const id = String(runner.next++);
  const bytes = request(id, cwd, '', args);
  for (let written = 0; written < bytes.length; ) written += writeSync(runner.req, bytes, written);
  const status = readAnswer(runner, id);
  const files = takeFiles(runner.dir, id);
  if (status === 'cwd') throw failure(args, cwd, 'cwd');
  const run = { status, ...files };
  if (status !== 0) throw failure(args, cwd, run);
  return run;
}

/**
 * Runs git in `cwd` with `env` (and `input` on its standard input) and resolves with what it left,
 * whatever its exit ('cwd' when the folder is missing). It runs on the same blocking runner: one git
 * at a time per worker either way, and the machine's cores are busy with the other workers.
 */
export async function gitRun(cwd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<GitRun | 'cwd'> {
  const runner = syncRunner(env);
  const id = String(runner.next++);
  let inputFile = '';
  if (input !== undefined) {
    inputFile = join(runner.dir, `${id}.in`);
    writeFileSync(inputFile, input);
  }
  const bytes = request(id, cwd, inputFile, args);
  for (let written = 0; written < bytes.length; ) written += writeSync(runner.req, bytes, written);
  const status = readAnswer(runner, id);
  if (inputFile) rmSync(inputFile, { force: true });
  const files = takeFiles(runner.dir, id);
  return status === 'cwd' ? 'cwd' : { status, ...files };
}

export { failure as gitFailure };

process.on('exit', () => {
  for (const runner of syncRunners.values()) {
    try {
      closeSync(runner.req);
      closeSync(runner.res);
    } catch {
      // already closed
    }
    rmSync(runner.dir, { recursive: true, force: true });
  }
});
