/**
 * What the OpenCode driver and its checks share: the variables an OpenCode session hands the
 * commands it runs (never passed on to an agent flume starts), the agent's environment, and how it
 * is named.
 */
import { programEnvironment, type Program } from '../program.js';
import type { OpencodeOptions } from './options.js';

/**
 * What OpenCode 1.18.33 hands the commands it runs (`OPENCODE=1`, `OPENCODE_PID`), and the
 * variables the driver sets itself for each agent (its config, its data folder's server password).
 */
export const OPENCODE_SESSION_VARIABLES: readonly string[] = ['OPENCODE', 'OPENCODE_PID', 'OPENCODE_CONFIG', 'OPENCODE_SERVER_PASSWORD', 'OPENCODE_SERVER_USERNAME'];

/**
 * The agent's environment: the caller's (`base`), less git's local variables and OpenCode's session
 * variables, with a UTF-8 locale where it has none, the self-update off, the config's added.
 */
export function opencodeEnvironment(options: OpencodeOptions, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return programEnvironment(OPENCODE_SESSION_VARIABLES, options, base, { OPENCODE_DISABLE_AUTOUPDATE: '1' });
}

/** OpenCode, as errors and doctor name it. */
export const OPENCODE: Program = { name: 'OpenCode', article: '', npm: 'opencode-ai', driver: 'opencode' };
