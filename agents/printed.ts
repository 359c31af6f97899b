/**
 * The printed host: no pane. flume hands the operator the exact command (with its session id and its
 * prompt) to run where they like, then confirms and reads the transcript exactly as for a pane.
 *
 * The command is printed, shown by `flume status` and kept in the place's record, so it never holds
 * a secret's value: a variable whose name says it is a secret (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`,
 * `…_SECRET`, `…_PASSWORD`) is written as a reference, `NAME="$NAME"`, for the operator's shell to fill.
 */
import { canType, definePaneHost, definePlugin, flumeError, SECRET_NAME, SHELL_NAME, type PaneHost } from '../core/index.js';

export { SECRET_NAME };

/**
 * `env [-u NAME]… [NAME=value]… argv`: the variables of `env` that differ from `base` (the caller's,
 * which the operator's shell supplies), secrets written as references, and every variable of `base`
 * the agent must not get (git's local variables, the driver's session variables) unset.
 */
export function printedCommand(env: Record<string, string>, argv: string[], options: { base?: NodeJS.ProcessEnv } = {}): string[] {
  const base = options.base ?? process.env;
  const words: string[] = [];
  for (const [name, value] of Object.entries(base)) if (value !== undefined && env[name] === undefined && SHELL_NAME.test(name)) words.push('-u', name);
  for (const [name, value] of Object.entries(env)) {
    if (base[name] === value) continue;
    words.push(SECRET_NAME.test(name) ? `${name}="$${name}"` : `${name}=${value}`);
  }
  return ['env', ...words, ...argv];
}

/**
 * The command an agent's handle keeps: on a host that cannot type (`canType: false`), the printed
 * command the operator runs (`printedCommand`); on a pane, the argv the pane runs.
 */
export function handedCommand(host: Pick<PaneHost, 'canType'>, env: Record<string, string>, argv: string[]): string[] {
  return canType(host) ? argv : printedCommand(env, argv);
}

/** A pane host that runs nothing: the command is shown, and the operator runs it. */
export const printedHost = definePaneHost({
  key: 'printed',
  // No pane: the command is handed to the operator, so flume never types and an agent not yet up is not gone.
  canType: false,
  // The last resort with `auto`: a host with panes is chosen before it.
  priority: 0,
  chosen: 'neither a running herdr nor tmux is found here',
  async available() {
    return true;
  },
  async open() {
    return {};
  },
  async identity() {
    return undefined;
  },
  async capture() {
    return undefined;
  },
  async type() {
    throw flumeError('AGENT_NOT_UP', {}, {
      variant: 'printed',
    });
  },
  async keys() {
    throw flumeError('AGENT_NOT_UP', {}, {
      variant: 'printedKeys',
    });
  },
  async alive() {
    return false;
  },
  async close() {},
});

/** Registers the printed host. */
export const printedHostPlugin = () =>
  definePlugin({ name: 'flume:host:printed', apply: (flume) => flume.hosts.add(printedHost) });
