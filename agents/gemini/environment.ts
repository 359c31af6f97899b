/**
 * What the Gemini CLI driver and its checks share: the variable a Gemini session hands the commands
 * it runs (never passed on to an agent flume starts), the agent's environment, where its record is
 * kept, and how it is named.
 */
import { homedir } from 'node:os';
import { programEnvironment, type Program } from '../program.js';
import type { GeminiOptions } from './options.js';

/** What a Gemini session's shell tool hands the commands it runs: `GEMINI_CLI=1`, its mark. */
export const GEMINI_SESSION_VARIABLES: readonly string[] = ['GEMINI_CLI'];

/**
 * The agent's environment: the caller's (`base`), less git's local variables and Gemini's session
 * variable, with a UTF-8 locale where it has none (core/support/environment.ts), the config's added,
 * and a CI machine's marks changed so that the program stays interactive.
 */
export function geminiEnvironment(options: GeminiOptions, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = programEnvironment(GEMINI_SESSION_VARIABLES, options, base);
  return Object.assign(env, interactiveMarks(env));
}

/**
 * With `CI` or `GITHUB_ACTIONS` exactly `true` the Gemini CLI runs headless, with no screen to type
 * into or read (0.61.0, packages/core/src/utils/headless.ts): on a CI machine its agent gets them as
 * `1`, which keeps it interactive and still reads as "in CI" to the tools its commands run. Answers
 * the values to change in `env`.
 */
export function interactiveMarks(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(['CI', 'GITHUB_ACTIONS'].filter((name) => env[name] === 'true').map((name) => [name, '1']));
}

/**
 * The folder whose `.gemini/` holds the agent's settings and chats: `GEMINI_CLI_HOME` of its
 * environment, else its HOME. The agent runs with the user's own Gemini home (its login, settings and
 * memory); its chat is told apart from the user's others by the session id flume gives it.
 */
export function geminiHome(env: Record<string, string | undefined>): string {
  return env.GEMINI_CLI_HOME || env.HOME || homedir();
}

/** The Gemini CLI, as errors and doctor name it. */
export const GEMINI: Program = { name: 'Gemini CLI', npm: '@google/gemini-cli', driver: 'gemini' };
