/**
 * The bin's roads to an answer, in the order it takes them: a command line for another host, over
 * ssh to that host's flume (remote/routed.ts); a read command the host's supervisor
 * answers warm (warm.ts); else `status` on a host with no places, from the state alone
 * (fast-status.ts); else the CLI (index.ts). The bin runs it with the process's own streams, folder
 * and environment; the tests run it in their own process with captured ones. The bin loads it
 * before anything else: it imports only what asking the supervisor needs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FlumePlugin } from '../api/plugin.js';
import type { Io } from './process-io.js';
import { askWarm } from './warm.js';
import { hostStateDir, WARM_SOCKET } from '../state/dir.js';

/** What a run of flume is handed besides its arguments. */
export interface EntryOptions {
  io: Io;
  /** The path of the flume executable (what a supervisor started in the background runs). */
  self: string;
  /** The built-in plugins; loaded only by a command that needs them. */
  preset: () => Promise<FlumePlugin[]>;
  /** The folder the command runs in (default: the process's). */
  cwd?: string;
  /** The environment the command reads (default: the process's). */
  env?: NodeJS.ProcessEnv;
}

/**
 * True when the command line may be for another host (`--host`, `--all-hosts`, `HOST:kind/name`,
 * `FLUME_HOST`) or is the remote end of a relay: only then is the road to other hosts loaded.
 */
function namesAHost(argv: string[], env: NodeJS.ProcessEnv): boolean {
  if (argv[0] === 'hosts') return false;
  if (argv[0] === '__relay' || argv[0] === '__attach' || env.FLUME_HOST) return true;
  return argv.some((arg) => arg === '--host' || arg.startsWith('--host=') || arg === '--all-hosts' || /^[a-z0-9][a-z0-9._-]{0,63}:./.test(arg));
}

/** Runs flume with `argv` (without node and script) by the first road that answers; returns the exit code. */
export async function runEntry(argv: string[], options: EntryOptions): Promise<number> {
  const { io, self } = options;
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  // A time limit of flume's environment set to no time limit refuses every command before anything
  // runs or is asked (the CLI says why); only a run that sets one of them loads the check. The relay
  // entry is checked as the command it reads is run, so a refusal answers as that command asked (JSON).
  if (argv[0] !== '__relay' && Object.keys(env).some((name) => name.startsWith('FLUME_') && name.endsWith('_MS'))) {
    const { environmentLimitProblem } = await import('../support/duration.js');
    if (environmentLimitProblem(env)) return (await import('./index.js')).runCli(argv, options.preset, { io, self, cwd, env });
  }
  if (namesAHost(argv, env)) {
    const { routed } = await import('./remote/routed.js');
    const where = await routed(argv, { io, cwd, env, preset: options.preset, self }, (again, io) => runEntry(again, { ...options, io }));
    if (typeof where === 'number') return where;
    argv = where.argv;
  }
  const stateDir = hostStateDir(env);
  const warm = existsSync(join(stateDir, WARM_SOCKET)) ? await askWarm(argv, { stateDir, self, cwd, env, isTTY: io.isTTY }) : undefined;
  if (warm) {
    io.stdout(warm.stdout);
    io.stderr(warm.stderr);
    return warm.code;
  }
  const quick = await (await import('./fast-status.js')).fastStatus(argv);
  if (quick !== undefined) {
    io.stdout(quick);
    return 0;
  }
  const { runCli } = await import('./index.js');
  return runCli(argv, options.preset, { io, self, cwd, env });
}
