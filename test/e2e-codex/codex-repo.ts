/**
 * A repository run by flume with the REAL Codex CLI as its agent (`agent.driver: 'codex'`), its
 * `agents.codex` pointing at the scripted Responses API (test/helpers/codex-env.ts), flume's CLI run
 * with a state folder of the test's own, and status polled as an operator would read it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { codexEnv, type CodexEnv } from '../helpers/codex-env.js';
import { programRepo, type ProgramRepo } from '../helpers/program-repo.js';
import type { Script } from '../helpers/responses-api.js';
import { HANG_MS } from '../helpers/wait.js';

/** A repository whose stages run the real Codex. */
export interface CodexRepo extends ProgramRepo {
  codex: CodexEnv;
}

/**
 * Codex's own default sandbox (`workspace-write`, no `-s` given) with the temporary folders taken out
 * of what it lets a command write: the test's repository lives under /tmp, which the sandbox would
 * otherwise leave writable, so this makes it as a repository in a home folder is.
 */
export const DEFAULT_SANDBOX = ['-c', 'sandbox_workspace_write.exclude_slash_tmp=true', '-c', 'sandbox_workspace_write.exclude_tmpdir_env_var=true'];

/** Makes the scripted API and a repository whose config runs the real Codex (`args`: after flume's own; default the sandbox off). */
export async function codexRepo(options: { script: Script; config?: Record<string, unknown>; args?: string[] }): Promise<CodexRepo> {
  const codex = await codexEnv({ script: options.script, args: options.args });
  return { ...programRepo('codex', codex.options, options.config, () => codex.cleanup()), codex };
}

/** The Codex rollout of an agent flume started (its private home under the state folder). */
export function rolloutOf(state: string, sessionId: string): string | undefined {
  const found: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.jsonl') && found.push(join(dir, entry.name));
  };
  walk(join(state, 'codex', sessionId, 'sessions'));
  return found.sort().at(-1);
}

/** A rollout's lines, parsed. */
export function rolloutLines(path: string): Array<{ timestamp: string; type: string; payload: any }> {
  // Only whole lines: the last may be being written.
  const text = readFileSync(path, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** The prompts a user gave, as the rollout records them (`item_completed` UserMessage). */
export function userPrompts(path: string): string[] {
  return rolloutLines(path)
    .filter((l) => l.type === 'event_msg' && l.payload?.type === 'item_completed' && l.payload.item?.type === 'UserMessage')
    .map((l) => (l.payload.item.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n'));
}

/**
 * The prompts a user gave once the rollout holds `count` of them (at most `timeoutMs`): flume counts a
 * prompt taken from the first line that records it, and Codex writes the `item_completed` line these
 * are read from a little after the others, which on a loaded machine can be after flume has answered.
 */
export async function userPromptsWritten(path: string, count: number, timeoutMs = 10_000): Promise<string[]> {
  const until = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  for (;;) {
    const prompts = userPrompts(path);
    if (prompts.length >= count || Date.now() > until) return prompts;
    await sleep(100);
  }
}
