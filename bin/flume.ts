#!/usr/bin/env node
/** The flume executable: the CLI with the default preset. The one file that joins core and built-ins. */
import { runCli } from '../core/cli/index.js';

const code = await runCli(process.argv.slice(2), async () => (await import('../plugins/defaults.js')).defaultPreset(), {
  self: process.argv[1],
});
process.exitCode = code;
