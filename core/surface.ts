/**
 * flume's second public entry (`flume/surface`): the CLI's commands and the schemas of what they
 * print, for a surface that runs them in its own process with arguments passed as values, never
 * parsed (the MCP server of the Claude Code plugin). Apart from `flume` (core/index.ts) so that what
 * every plugin and config imports does not load every command.
 */
export { commands } from './cli/commands.js';
export type { CliContext } from './cli/command.js';
export { asFlumeError } from './cli/output.js';
export { callOnHost } from './cli/remote/routed.js';
export { statusSchema } from './engine/status/status-schema.js';
export { pluginsSchema } from './engine/doctor/plugins-schema.js';
export { doctorSchema, dropSchema, kindsSchema, launchSchema, stageResultSchema, stopSchema, tellSchema, tidySchema, versionSchema, waitSchema } from './engine/stage/results-schema.js';
