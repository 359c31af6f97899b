#!/usr/bin/env node
/**
 * The flume executable: the CLI with the default preset. The one file that joins core and built-ins.
 * It loads only what asking the host's supervisor needs until it knows the command must run here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { askWarm } from '../core/cli/warm.js';
import { processIo } from '../core/cli/process-io.js';
import { hostStateDir, WARM_SOCKET } from '../core/state/dir.js';

const argv = process.argv.slice(2);
const stateDir = hostStateDir();
// A read command the host's supervisor answers, warm (core/cli/warm.ts); else status on a host with
// no places answers from the state alone (fast-status.ts); else the command runs here.
const warm = existsSync(join(stateDir, WARM_SOCKET)) ? await askWarm(argv, { stateDir, self: process.argv[1], isTTY: processIo.isTTY }) : undefined;
const quick = warm ? undefined : await (await import('../core/cli/fast-status.js')).fastStatus(argv);
if (warm) {
  processIo.stdout(warm.stdout);
  processIo.stderr(warm.stderr);
  process.exitCode = warm.code;
} else if (quick !== undefined) {
  processIo.stdout(quick);
} else {
  const { runCli } = await import('../core/cli/index.js');
  process.exitCode = await runCli(argv, async () => (await import('../plugins/defaults.js')).defaultPreset(), { self: process.argv[1] });
}
