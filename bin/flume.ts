#!/usr/bin/env node
/**
 * The flume executable: the CLI with the default preset. The one file that joins core and built-ins.
 * It loads only what asking the host's supervisor needs until it knows the command must run here
 * (core/cli/entry.ts).
 */
import { runEntry } from '../core/cli/entry.js';
import { processIo } from '../core/cli/process-io.js';

process.exitCode = await runEntry(process.argv.slice(2), {
  io: processIo,
  self: process.argv[1],
  preset: async () => (await import('../plugins/defaults.js')).defaultPreset(),
});
