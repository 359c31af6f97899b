/**
 * What the Codex driver and its checks share: the variables a Codex session hands the commands it
 * runs (never passed on to an agent flume starts), the agent's environment, and how it is named.
 */
import { programEnvironment, type Program } from '../program.js';
import type { CodexOptions } from './options.js';

/**
 * What a Codex session hands the commands it runs, bound to that session: its thread and session ids,
 * the marks of its sandbox and of its own command runner. CODEX_HOME is the driver's to set.
 */
export const CODEX_SESSION_VARIABLES: readonly string[] = ['CODEX_THREAD_ID', 'CODEX_SESSION_ID', 'CODEX_SANDBOX', 'CODEX_SANDBOX_NETWORK_DISABLED', 'CODEX_CI'];

/**
 * The agent's environment: the caller's (`base`), less git's local variables and Codex's session
 * variables, with a UTF-8 locale where it has none (core/support/environment.ts), the config's added.
 */
export function codexEnvironment(options: CodexOptions, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return programEnvironment(CODEX_SESSION_VARIABLES, options, base);
}

/** The Codex CLI, as errors and doctor name it. */
export const CODEX: Program = { name: 'Codex CLI', npm: '@openai/codex', driver: 'codex' };
