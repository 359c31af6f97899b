/**
 * What an agent in a place's container starts from, and what of it goes into the container
 * (docs/containers.md; decisions/container-environment.md).
 */
import type { ContainerSpec, PlaceContainer } from '../api/record.js';
import { utf8LocaleFor } from '../support/environment.js';

/**
 * The environment an agent in a container starts from, before its driver adds its own and the
 * config's: not the caller's (its folders and sessions are this machine's), but HOME at the place's
 * home, TERM and the locale, and what `agent.container.env` gives. PATH is this machine's, for the
 * driver's checks here; it goes into the container only as `agent.container.env` sets it.
 */
export function containerEnvironment(container: PlaceContainer, caller: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { HOME: container.home, TERM: caller.TERM || 'xterm-256color' };
  if (caller.PATH) env.PATH = caller.PATH;
  for (const name of ['LANG', 'LC_ALL', 'LC_CTYPE']) if (caller[name]) env[name] = caller[name]!;
  Object.assign(env, utf8LocaleFor(env), container.env ?? {});
  return env;
}

/** Of an agent's environment, what is handed into its container: all but this machine's PATH, unless the container's env sets one. */
export function insideEnvironment(container: ContainerSpec, env: Record<string, string>): Record<string, string> {
  const { PATH: _path, ...rest } = env;
  return container.env?.PATH ? { ...rest, PATH: container.env.PATH } : rest;
}
