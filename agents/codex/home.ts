/**
 * Each Codex agent runs with a `CODEX_HOME` of its own, `<flume state>/codex/<session id>/`: its
 * rollout, its SQLite state and its config are the agent's alone, so the rollout is the one session
 * there, and nothing of the user's Codex (its sessions, its app-server daemon) mixes in. flume writes
 * the home's `config.toml` at start:
 *
 * - `[features] daemon_auto_start = false`: the TUI does its own requests, and nothing it starts
 *   outlives it (by default it starts an app-server daemon that outlives the TUI and keeps the
 *   network namespace it was started in).
 * - `[projects."<place>"] trust_level = "trusted"` only when the user trusted the repository with
 *   `flume trust`, as for Claude Code; otherwise Codex asks, and status says so.
 * - The model and provider from the config's `agents.codex` (`model`, `provider`).
 * - `[sandbox_workspace_write] writable_roots`, unless the stage bypasses the sandbox: the folders
 *   of the main checkout's `.git` a commit on the place's branch writes (sandbox.ts), so the agent
 *   can commit under Codex's default `workspace-write` sandbox, and writes nothing else of the main
 *   checkout.
 *
 * The user's login (`auth.json` of their Codex home) is linked in, so a ChatGPT login works too.
 */
import { existsSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hostStateDir, privateDir, PRIVATE_FILE_MODE } from '../../core/index.js';
import type { CodexOptions } from './options.js';

/** The private Codex home of the agent of `sessionId`. */
export function agentHome(sessionId: string, stateDir = hostStateDir()): string {
  return join(stateDir, 'codex', sessionId);
}

/** The user's own Codex home, where a login is read from: the config's, else `$CODEX_HOME`, else `~/.codex`. */
export function userHome(options: CodexOptions, env: Record<string, string>): string {
  return options.configDir ?? env.CODEX_HOME ?? join(env.HOME ?? homedir(), '.codex');
}

/** The `config.toml` flume writes for one agent: `trusted` folders, and `writable` folders beside the sandbox's own. */
export function configToml(options: CodexOptions, trusted: string[], writable: string[] = []): string {
  const lines = ['# Written by flume for one agent (agents/codex/home.ts); Codex may add to it.'];
  const provider = options.provider;
  const providerId = provider ? tomlKey(String(provider.name ?? 'flume')) : undefined;
  if (options.model) lines.push(`model = ${toml(options.model)}`);
  if (providerId) lines.push(`model_provider = ${toml(String(provider!.name ?? 'flume'))}`);
  lines.push('', '[features]', 'daemon_auto_start = false');
  if (provider && providerId) {
    lines.push('', `[model_providers.${providerId}]`);
    const fields: Record<string, string | number | boolean | undefined> = { name: String(provider.name ?? 'flume'), wire_api: 'responses', ...provider };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) lines.push(`${tomlKey(key)} = ${toml(value)}`);
  }
  if (writable.length) lines.push('', '[sandbox_workspace_write]', `writable_roots = [${writable.map(toml).join(', ')}]`);
  for (const folder of trusted) lines.push('', `[projects.${toml(folder)}]`, 'trust_level = "trusted"');
  return `${lines.join('\n')}\n`;
}

/** Makes the agent's home (700), writes its config (600) and links the user's login into it. */
export async function prepareHome(home: string, options: CodexOptions, env: Record<string, string>, trusted: string[], writable: string[] = []): Promise<void> {
  await privateDir(home);
  await writeFile(join(home, 'config.toml'), configToml(options, trusted, writable), { mode: PRIVATE_FILE_MODE });
  const auth = join(userHome(options, env), 'auth.json');
  if (existsSync(auth) && !existsSync(join(home, 'auth.json'))) await symlink(auth, join(home, 'auth.json')).catch(() => undefined);
}

/** A TOML value: strings as basic strings (JSON's escapes are TOML's), numbers and booleans as they are. */
function toml(value: string | number | boolean): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** A TOML key: bare when it can be, quoted otherwise. */
function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}
