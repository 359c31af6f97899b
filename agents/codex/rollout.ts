/**
 * Codex's own record of a session, its "rollout": `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local
 * time>-<thread id>.jsonl`, one `{timestamp, type, payload}` a line (0.171.0). The TUI takes no
 * session id of flume's, so the rollout is found by what its first line (`session_meta`) says: the
 * folder it runs in and when it started. It is written from the first prompt on, not before.
 *
 * Lines read (pinned in test/integration/codex-vs-real.test.ts):
 * - `event_msg` `task_started` / `task_complete` (with `last_agent_message`) / `turn_aborted`: a turn
 *   begun, ended, interrupted.
 * - `event_msg` `item_completed` with `item.type: "UserMessage"`: a prompt the user gave; and the
 *   `response_item` `message` of role `user` that carries it to the model.
 * - `response_item` `function_call` and `function_call_output`: a tool call and its answer.
 * - `turn_context` (`model`) and `token_usage_record` (`usage` of each model response).
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentUsage, PromptState, TokenCounts } from '../../core/index.js';
import { promptIn } from '../prompts.js';

/** One rollout line. */
interface Line {
  timestamp?: string;
  type?: string;
  payload?: Record<string, any>;
}

/** A session's first line may start up to this long before the agent's recorded start (clocks, a slow pane). */
const START_SLACK_MS = 5_000;

/**
 * The rollout of the session started in `cwd` at or after `startedAt` (ISO), newest first; undefined
 * while none is written. Only the newest days' folders are looked in.
 */
export async function findRollout(home: string, cwd: string, startedAt: string): Promise<string | undefined> {
  const from = Date.parse(startedAt) - START_SLACK_MS;
  const root = join(home, 'sessions');
  const candidates: string[] = [];
  for (const year of await names(root)) {
    for (const month of await names(join(root, year))) {
      for (const day of await names(join(root, year, month))) {
        const folder = join(root, year, month, day);
        for (const file of await names(folder)) if (file.startsWith('rollout-') && file.endsWith('.jsonl')) candidates.push(join(folder, file));
      }
    }
  }
  // The file name begins with the local time it started: newest last when sorted.
  for (const path of candidates.sort().reverse()) {
    const meta = await firstLine(path);
    if (meta?.type !== 'session_meta' || meta.payload?.cwd !== cwd) continue;
    const at = Date.parse(String(meta.payload.timestamp ?? meta.timestamp));
    if (at >= from) return path;
  }
  return undefined;
}

/** What a rollout says of its session. */
export interface RolloutState {
  /** A turn is running: a `task_started` with no `task_complete` or `turn_aborted` after it. */
  working: boolean;
  /** The last turn ended (completed or interrupted) and no other began. */
  turnEnded: boolean;
  /** The last turn was interrupted (Esc, Ctrl-C). */
  aborted: boolean;
  /** What the agent said last (its last message of the last turn). */
  lastText?: string;
  /** The tool call of the running turn that has no output yet, if any. */
  pendingCall?: { name: string; arguments: string };
  /** The newest line's time. */
  lastActivity?: string;
  /** The prompts the user gave, with when each was recorded. */
  prompts: Array<{ text: string; at: string }>;
}

/** Reads the rollout at `path`; undefined when it does not exist. */
export async function readRollout(path: string): Promise<RolloutState | undefined> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const state: RolloutState = { working: false, turnEnded: false, aborted: false, prompts: [] };
  const calls = new Map<string, { name: string; arguments: string }>();
  for (const line of parseLines(text)) {
    if (line.timestamp) state.lastActivity = line.timestamp;
    const payload = line.payload ?? {};
    if (line.type === 'event_msg') {
      if (payload.type === 'task_started') Object.assign(state, { working: true, turnEnded: false, aborted: false, lastText: undefined });
      else if (payload.type === 'task_complete') {
        Object.assign(state, { working: false, turnEnded: true, aborted: false });
        if (typeof payload.last_agent_message === 'string') state.lastText = payload.last_agent_message;
        calls.clear();
      } else if (payload.type === 'turn_aborted') {
        Object.assign(state, { working: false, turnEnded: true, aborted: true });
        calls.clear();
      } else if (payload.type === 'item_completed' && payload.item?.type === 'UserMessage') {
        const said = userText(payload.item.content);
        if (said !== undefined && line.timestamp) state.prompts.push({ text: said, at: line.timestamp });
      }
    } else if (line.type === 'response_item') {
      if (payload.type === 'message' && payload.role === 'assistant') {
        const said = (payload.content ?? []).filter((c: any) => c?.type === 'output_text').map((c: any) => String(c.text)).join('\n');
        if (said) state.lastText = said;
      } else if (payload.type === 'message' && payload.role === 'user') {
        const said = userText(payload.content);
        if (said !== undefined && line.timestamp) state.prompts.push({ text: said, at: line.timestamp });
      } else if (payload.type === 'function_call' && typeof payload.call_id === 'string') {
        calls.set(payload.call_id, { name: String(payload.name), arguments: String(payload.arguments ?? '') });
      } else if (payload.type === 'function_call_output' && typeof payload.call_id === 'string') {
        calls.delete(payload.call_id);
      }
    }
  }
  const pending = [...calls.values()].at(-1);
  if (pending && state.working) state.pendingCall = pending;
  return state;
}

/**
 * Was `text` taken as a prompt? `taken` once the rollout records it as the user's (at or after
 * `since`, less a second of slack), `not-yet` while it does not, `unknown` while no rollout is
 * found (Codex writes it at the first prompt, so before that no reading can say more).
 */
export function promptState(state: RolloutState | undefined, text: string, since?: string): PromptState {
  return promptIn(state?.prompts, text, since);
}

/** The cursor `readUsage` hands back: how far the rollout was read and the totals so far. */
export interface UsageCursor {
  version: 1;
  path: string;
  offset: number;
  ino: number;
  model: string;
  models: Record<string, TokenCounts>;
  replies: number;
}

/**
 * What the session used: each `token_usage_record` (one per model response) counted once, under
 * the model the `turn_context` before it names. Codex counts cached input inside `input_tokens`;
 * flume's `input` is the uncached part. Reads only what the file gained since `cursor`.
 */
export async function readUsage(path: string, cursor?: unknown): Promise<{ usage: AgentUsage; cursor: UsageCursor } | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return undefined;
  const before = isCursor(cursor) && cursor.path === path && cursor.ino === info.ino && cursor.offset <= info.size ? cursor : undefined;
  const next: UsageCursor = before
    ? { ...before, models: Object.fromEntries(Object.entries(before.models).map(([k, v]) => [k, { ...v }])) }
    : { version: 1, path, offset: 0, ino: info.ino, model: 'unknown', models: {}, replies: 0 };
  if (info.size > next.offset) {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(info.size - next.offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, next.offset);
      const chunk = buffer.subarray(0, bytesRead).toString('utf8');
      // Only whole lines: a line being written is read next time.
      const end = chunk.lastIndexOf('\n') + 1;
      for (const line of parseLines(chunk.slice(0, end))) {
        if (line.type === 'turn_context' && typeof line.payload?.model === 'string') next.model = line.payload.model;
        else if (line.type === 'token_usage_record' && line.payload?.usage) {
          const u = line.payload.usage;
          const counts = (next.models[next.model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
          const cached = num(u.cached_input_tokens);
          counts.input += Math.max(0, num(u.input_tokens) - cached);
          counts.cacheRead += cached;
          counts.cacheWrite += num(u.cache_write_input_tokens);
          counts.output += num(u.output_tokens);
          next.replies++;
        }
      }
      next.offset += Buffer.byteLength(chunk.slice(0, end));
    } finally {
      await handle.close();
    }
  }
  const unchanged = before && next.offset === before.offset;
  return { usage: { models: next.models, replies: next.replies }, cursor: unchanged ? before : next };
}

function isCursor(value: unknown): value is UsageCursor {
  return typeof value === 'object' && value !== null && (value as UsageCursor).version === 1 && typeof (value as UsageCursor).offset === 'number';
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The text of a user message's content (`input_text` or `text` parts), or undefined when it has none. */
function userText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((c) => (c?.type === 'input_text' || c?.type === 'text') && typeof c.text === 'string').map((c) => c.text as string);
  return texts.length ? texts.join('\n') : undefined;
}

function parseLines(text: string): Line[] {
  return text.split('\n').flatMap((raw) => {
    if (!raw) return [];
    try {
      return [JSON.parse(raw) as Line];
    } catch {
      return [];
    }
  });
}

/** The first line of a file, parsed (the `session_meta` line carries Codex's instructions: tens of KB). */
async function firstLine(path: string): Promise<Line | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    let text = '';
    const buffer = Buffer.alloc(64 * 1024);
    for (let position = 0; position < 4 * 1024 * 1024; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      text += buffer.subarray(0, bytesRead).toString('utf8');
      position += bytesRead;
      const end = text.indexOf('\n');
      if (end >= 0) return parseLines(text.slice(0, end))[0];
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

async function names(folder: string): Promise<string[]> {
  return readdir(folder).catch(() => []);
}
