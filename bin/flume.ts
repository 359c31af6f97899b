#!/usr/bin/env node
/** The flume executable: the CLI with the default preset. The one file that joins core and built-ins. */
import { fastStatus } from '../core/cli/fast-status.js';

const argv = process.argv.slice(2);
const quick = await fastStatus(argv);
if (quick !== undefined) {
  process.stdout.write(quick);
} else {
  const { runCli } = await import('../core/cli/index.js');
  process.exitCode = await runCli(argv, async () => (await import('../plugins/defaults.js')).defaultPreset(), { self: process.argv[1] });
}
