/**
 * The built CLI run inside the test's own process: the bin's own entry (core/cli/entry.ts: the
 * supervisor's warm answer, the fast status, then the CLI) with the default preset, its output
 * captured, the run's folder and environment handed to it. It saves a node start and the loading
 * of flume per run. `runFlume` (repo.ts) is the one caller; it decides when a run is a process.
 *
 * The CLI takes its folder and environment from its context, but modules deep below it read the
 * process's own (where the state lives, the environment of the programs it starts, the config's time
 * limit). So each run has the process to itself for its duration: runs wait their turn, one at a
 * time in each test worker (vitest's workers are forked processes, one file at a time each), and a
 * run's `process.env` and working folder are the run's own until it ends, then put back.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What a CLI run left (repo.ts's CliResult). */
interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const FLUME_BIN = join(PROJECT, 'dist', 'bin', 'flume.js');

type Entry = typeof import('../../core/cli/entry.js');
type Defaults = typeof import('../../plugins/defaults.js');
type Core = typeof import('../../core/index.js');
let loaded: Promise<[Entry, Defaults, Core]> | undefined;
/** The built entry, preset and core (dist/, as the bin runs them), loaded once per worker. */
function load(): Promise<[Entry, Defaults, Core]> {
  const dist = (path: string) => pathToFileURL(join(PROJECT, 'dist', path)).href;
  return (loaded ??= Promise.all([import(dist('core/cli/entry.js')) as Promise<Entry>, import(dist('plugins/defaults.js')) as Promise<Defaults>, import(dist('core/index.js')) as Promise<Core>]));
}

let turn: Promise<unknown> = Promise.resolve();

/** Runs flume with `args` in this process once every earlier run has ended; `env` and `cwd` default to the process's. */
export function runInProcess(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Result> {
  const run = turn.then(() => runNow(args, options));
  turn = run.catch(() => undefined);
  return run;
}

async function runNow(args: string[], options: { cwd?: string; env?: Record<string, string> }): Promise<Result> {
  const [{ runEntry }, { defaultPreset }, { forgetKept }] = await load();
  // Each run starts with nothing kept from an earlier one, as a process of its own would (core/support/kept.ts).
  forgetKept();
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  let stdout = '';
  let stderr = '';
  const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text), isTTY: false };
  // A folder that is not there fails the run as it fails to start a process (ENOENT).
  if (options.cwd) process.chdir(options.cwd);
  try {
    if (options.env) replaceEnv(options.env);
    const code = await runEntry(args, { io, self: FLUME_BIN, preset: defaultPreset, cwd: process.cwd(), env: process.env });
    return { code, stdout, stderr };
  } catch (error) {
    // What escaped the CLI would end the bin's process with its trace and exit code 1.
    return { code: 1, stdout, stderr: stderr + `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` };
  } finally {
    process.chdir(savedCwd);
    replaceEnv(savedEnv);
  }
}

/** Makes `process.env` hold exactly `env` (in place: node's own object, which children inherit). */
function replaceEnv(env: Record<string, string | undefined>): void {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  for (const [name, value] of Object.entries(env)) if (value !== undefined) process.env[name] = value;
}
