/**
 * What the OpenCode driver and its checks share: the variables an OpenCode session hands the
 * commands it runs (never passed on to an agent flume starts), the agent's environment, and finding
 * its program.
 */
import { agentBaseEnvironment, flumeError, which } from '../../core/index.js';
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
  const env = agentBaseEnvironment(OPENCODE_SESSION_VARIABLES, base);
  env.OPENCODE_DISABLE_AUTOUPDATE = '1';
  Object.assign(env, options.env ?? {});
  env.TERM ??= 'xterm-256color';
  return env;
}

/** Throws AGENT_START_FAILED unless the program is found (a path, or a name on the agent's PATH). */
export function requireProgram(program: string, env: Record<string, string>): string {
  const found = which(program, env.PATH ?? '');
  if (found) return found;
  throw flumeError('AGENT_START_FAILED', { program, driver: 'opencode', install: 'Install OpenCode (npm install -g opencode-ai)' }, {
    variant: program.includes('/') ? 'programNotExecutable' : 'programNotOnPath',
    details: { program },
  });
}
