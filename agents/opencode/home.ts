/**
 * Each OpenCode agent keeps its record in a folder of its own, `<flume state>/opencode/<session
 * id>/`: OpenCode's data folder (`XDG_DATA_HOME=<home>/data`, holding its SQLite database
 * `opencode/opencode.db`, its snapshots and logs) and its state folder (`XDG_STATE_HOME=<home>/state`)
 * are the agent's alone, so its sessions are the only ones there and nothing of the user's OpenCode
 * mixes in. The user's own config is still read (`~/.config/opencode`); flume's, written here as
 * `opencode.json` and named by `OPENCODE_CONFIG`, is merged over it:
 *
 * - the config's `agents.opencode.config` (providers, agents, …) and `model`;
 * - `"permission": "allow"` when the stage bypasses permissions, else nothing (OpenCode's own
 *   defaults ask, e.g. for a folder outside the place);
 * - `"autoupdate": false`.
 *
 * The TUI's HTTP server, from which the driver reads the record, listens on a port flume picks, with
 * a password of the agent's own (`server-password`, 600), so no other local user drives it.
 * The user's login (`auth.json` of their data folder) is linked in. Before the agent is stopped, its
 * usage as the record says it is kept there (`usage.json`): once the program has exited its server is
 * gone, and with it the record's only quick reader.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hostStateDir, privateDir, PRIVATE_FILE_MODE, type AgentUsage } from '../../core/index.js';
import type { OpencodeOptions } from './options.js';

/** The private folder of the agent of `sessionId`. */
export function agentHome(sessionId: string, stateDir = hostStateDir()): string {
  return join(stateDir, 'opencode', sessionId);
}

/** The variables that point OpenCode at an agent's folder. */
export function homeEnvironment(home: string): Record<string, string> {
  return { XDG_DATA_HOME: join(home, 'data'), XDG_STATE_HOME: join(home, 'state'), OPENCODE_CONFIG: join(home, 'opencode.json') };
}

/** The folder holding an agent's database (`opencode.db` and its `-wal`). */
export function dataFolder(home: string): string {
  return join(home, 'data', 'opencode');
}

/** The user's own OpenCode data folder, where a login is read from. */
export function userDataDir(options: OpencodeOptions, env: Record<string, string>): string {
  return options.dataDir ?? join(env.XDG_DATA_HOME ?? join(env.HOME ?? homedir(), '.local', 'share'), 'opencode');
}

/** The config flume writes for one agent: the configured, the model, and everything allowed when `bypass`. */
export function agentConfig(options: OpencodeOptions, model: string | undefined, bypass: boolean): Record<string, unknown> {
  return {
    ...(options.config ?? {}),
    ...(model ? { model } : {}),
    ...(bypass ? { permission: 'allow' } : {}),
    autoupdate: false,
  };
}

/** Makes the agent's folder (700), writes its config and server password (600), links the user's login. Answers the password. */
export async function prepareHome(home: string, config: Record<string, unknown>, userData: string): Promise<string> {
  await privateDir(home);
  await mkdir(dataFolder(home), { recursive: true, mode: 0o700 });
  await writeFile(join(home, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  const password = randomBytes(18).toString('base64url');
  await writeFile(join(home, 'server-password'), password, { mode: PRIVATE_FILE_MODE });
  const auth = join(userData, 'auth.json');
  const linked = join(dataFolder(home), 'auth.json');
  if (existsSync(auth) && !existsSync(linked)) await symlink(auth, linked).catch(() => undefined);
  return password;
}

/** The password of an agent's server; undefined when its folder holds none. */
export async function serverPassword(home: string): Promise<string | undefined> {
  return readFile(join(home, 'server-password'), 'utf8').then((text) => text.trim() || undefined, () => undefined);
}

/** The agent's usage as its record last said it before the agent was stopped; undefined when none was kept. */
export async function keptUsage(home: string): Promise<{ sessionId: string; usage: AgentUsage } | undefined> {
  return readFile(join(home, 'usage.json'), 'utf8').then((text) => JSON.parse(text) as { sessionId: string; usage: AgentUsage }, () => undefined);
}

/** Keeps the agent's usage in its folder, for when its server is gone. */
export async function keepUsage(home: string, kept: { sessionId: string; usage: AgentUsage }): Promise<void> {
  await writeFile(join(home, 'usage.json'), `${JSON.stringify(kept)}\n`, { mode: PRIVATE_FILE_MODE }).catch(() => undefined);
}
