/**
 * What of the caller's environment flume passes on, and what it never does.
 *
 * - git's local variables (`git rev-parse --local-env-vars`: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
 *   …) name one repository; a caller inside a git hook, or a script of another checkout, carries them.
 *   No program flume runs gets them from the caller: not its own git, not a readying step, not the
 *   supervisor, not an agent. A value flume or the config sets on purpose still goes.
 * - An agent's environment is the caller's, less git's local variables and the variables its driver
 *   declares bound to another session of its program (`AgentDriver.sessionVariables`), with a UTF-8
 *   locale where the caller has none, plus what the config's `agents.<key>.env` gives.
 * - A tmux client prints a format's TABs as `_` in a non-UTF-8 locale: flume's own tmux clients, its
 *   tmux server and an agent's pane get a UTF-8 character type where the caller has none.
 */

/** git's local variables, as `git rev-parse --local-env-vars` lists them (a test holds this to git's own list). */
export const GIT_LOCAL_VARIABLES: readonly string[] = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_OBJECT_DIRECTORY',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_GRAFT_FILE',
  'GIT_INDEX_FILE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE',
  'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX',
  'GIT_SHALLOW_FILE',
  'GIT_COMMON_DIR',
];

/** The environment without git's local variables (and without unset entries). */
export function withoutGitLocal(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !GIT_LOCAL_VARIABLES.includes(name)) kept[name] = value;
  return kept;
}

/** True when `name` is one of `patterns`: a name, or a prefix ending in `*`. */
export function matchesVariable(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

/** True when the environment's character type is UTF-8, read as tmux reads it (LC_ALL, else LC_CTYPE, else LANG). */
export function hasUtf8Locale(env: Record<string, string | undefined>): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}

/** The UTF-8 locale flume gives where the caller has none (macOS has no C.UTF-8). */
export const UTF8_LOCALE = process.platform === 'darwin' ? 'UTF-8' : 'C.UTF-8';

/**
 * What makes the environment's character type UTF-8, where it is not: LC_CTYPE, or LC_ALL when the
 * caller set LC_ALL (it overrides every other). Empty where the caller has a UTF-8 locale already.
 */
export function utf8LocaleFor(env: Record<string, string | undefined>): Record<string, string> {
  if (hasUtf8Locale(env)) return {};
  return env.LC_ALL ? { LC_ALL: UTF8_LOCALE } : { LC_CTYPE: UTF8_LOCALE };
}

/**
 * An agent's environment before its driver adds the config's: the caller's, less git's local
 * variables and the driver's session variables, with a UTF-8 locale where the caller has none.
 */
export function agentBaseEnvironment(sessionVariables: readonly string[] = [], caller: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(withoutGitLocal(caller))) if (!matchesVariable(name, sessionVariables)) env[name] = value;
  return Object.assign(env, utf8LocaleFor(env));
}
