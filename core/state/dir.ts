/**
 * Where the host's state lives, in a module of its own that imports only node's path helpers: the
 * bin finds the supervisor's socket (core/cli/warm.ts) before loading anything else. host.ts
 * re-exports both.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** flume's folder on this host. */
export function hostStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLUME_STATE_DIR) return env.FLUME_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'flume');
}

/** The socket the supervisor answers read commands on (core/cli/warm.ts), in the host's state folder. */
export const WARM_SOCKET = 'watch.sock';
