/**
 * What of the caller's environment flume passes on, and what it never does. No program flume starts
 * gets from the caller what `passedOn` leaves out: not its own git, a readying step, the supervisor,
 * the config probe, a tmux client or an agent. A value flume or the config sets on purpose still goes.
 *
 * - git's local variables (`git rev-parse --local-env-vars`: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
 *   …) name one repository; a caller inside a git hook, or a script of another checkout, carries them.
 * - What git hands one hook for one run of it (GIT_CALLER_BOUND): a push's quarantine, under which
 *   every ref update is refused and what is written is kept only if the push is; its namespace, which
 *   moves the refs of a push to (and hides those of a fetch from) a repository on this machine; the
 *   dates of the commit being made, which would stamp every later commit alike. The identity
 *   (GIT_AUTHOR_NAME, …) and a discovery limit (GIT_CEILING_DIRECTORIES) are the user's and pass.
 * - flume's routing variables (core/hosts/route.ts): the command that reads them has been routed
 *   already; what it starts runs here, whatever host the caller named.
 * - An agent's environment is that, less the variables its driver declares bound to another session
 *   of its program (`AgentDriver.sessionVariables`), with a UTF-8 locale where the caller has none,
 *   plus what the config's `agents.<key>.env` gives.
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

/** What git hands a hook for one run of it: a push's quarantine and namespace, the commit's dates. */
export const GIT_CALLER_BOUND: readonly string[] = ['GIT_QUARANTINE_PATH', 'GIT_NAMESPACE', 'GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'];

/** flume's routing variables: which host a command line is for (core/hosts/route.ts). */
export const ROUTING_VARIABLES: readonly string[] = ['FLUME_HOST'];

/**
 * What of the caller's environment goes to a program flume starts: all of it but git's local
 * variables, what git bound to one hook's run, flume's routing variables and the registered drivers'
 * session variables (and unset entries).
 */
export function passedOn(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  const bound = [...SESSION_BOUND];
  for (const [name, value] of Object.entries(withoutGitLocal(env))) if (!GIT_CALLER_BOUND.includes(name) && !ROUTING_VARIABLES.includes(name) && !matchesVariable(name, bound)) kept[name] = value;
  return kept;
}

/**
 * The variables the registered drivers declare bound to a session of their program
 * (`AgentDriver.sessionVariables`): no program flume starts gets them from the caller, an agent nor
 * anything else (a program's `--version`, flume's tmux server, whose global environment every window
 * opened in it later inherits, the supervisor). Filled as drivers register.
 */
const SESSION_BOUND = new Set<string>();

/** Adds a registered driver's session variables to those nothing flume starts is handed (`passedOn`). */
export function noteSessionVariables(names: readonly unknown[]): void {
  for (const name of names) if (typeof name === 'string' && name !== '') SESSION_BOUND.add(name);
}

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
 * An agent's environment before its driver adds the config's: what the caller's passes on, less
 * the driver's session variables, with a UTF-8 locale where the caller has none.
 */
export function agentBaseEnvironment(sessionVariables: readonly string[] = [], caller: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(passedOn(caller))) if (!matchesVariable(name, sessionVariables)) env[name] = value;
  return Object.assign(env, utf8LocaleFor(env));
}
