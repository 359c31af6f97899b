/**
 * Every road into flume's command line, in the order a command takes them: a read command the host's
 * supervisor answers warm (warm.ts); else `status` on a host with no places, answered from the state
 * alone (fast-status.ts); else the full CLI (index.ts), which runs the plain forms of the commands
 * callers poll without the argument parser and everything else through yargs. This module loads only
 * what asking the supervisor needs until it knows the command must run here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FlumePlugin } from '../api/plugin.js';
import { askWarm } from './warm.js';
import { processIo, type Io } from './process-io.js';
import { hostStateDir, WARM_SOCKET } from '../state/dir.js';

/** Runs one command line by the first road that answers it; returns its exit code. */
export async function runEntry(argv: string[], preset: () => Promise<FlumePlugin[]>, options: { self: string; io?: Io }): Promise<number> {
  const io = options.io ?? processIo;
  const stateDir = hostStateDir();
  const warm = existsSync(join(stateDir, WARM_SOCKET)) ? await askWarm(argv, { stateDir, self: options.self, isTTY: io.isTTY }) : undefined;
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
  return runCli(argv, preset, { self: options.self, io });
}
