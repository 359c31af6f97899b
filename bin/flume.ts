#!/usr/bin/env node
/**
 * The flume executable: the CLI's entry (core/cli/entry.ts) with the default preset. The one file
 * that joins core and built-ins; the preset is loaded only once a command needs it.
 */
import { runEntry } from '../core/cli/entry.js';

process.exitCode = await runEntry(process.argv.slice(2), async () => (await import('../plugins/defaults.js')).defaultPreset(), { self: process.argv[1] });
