/**
 * OpenCode's own record of a session, read from the TUI's HTTP server (1.18.33). Its store is a
 * SQLite database (`<data>/opencode/opencode.db`) that Node 20 cannot read without a native module,
 * and `opencode export` / `opencode db` boot a whole OpenCode each time (~2 s); the server started
 * with `--port` answers in milliseconds, so the driver starts the TUI with one, on 127.0.0.1, behind
 * a password of the agent's own (HTTP basic, user `opencode`).
 *
 * Read (pinned in test/e2e-opencode/opencode-vs-real.test.ts):
 * - `GET /session`: the sessions, each `{id, directory, parentID?, time: {created}}`. The TUI takes
 *   no session id of flume's (`-s` only opens one that exists), so the session is the newest one in
 *   the place's folder created since the agent started; it is made at the first prompt.
 * - `GET /session/<id>/message`: `[{info, parts}]`; a `user` message's `text` parts are the prompt,
 *   an `assistant` message has `time.completed` once done, `error` when interrupted, and a
 *   `step-finish` part with `tokens` for each model response.
 * - `GET /session/status`: `{<id>: {type: "busy"}}` while a turn runs, `{}` when idle.
 * - `GET /permission`, `GET /question`: what waits on the user, by `sessionID`.
 */
import type { AgentUsage, PromptState, TokenCounts } from '../../core/index.js';
import { promptIn } from '../prompts.js';

/** Where an agent's server listens and its password. */
export interface Server {
  port: number;
  password?: string;
}

/** A session's first message may be this long before the agent's recorded start (clocks). */
const START_SLACK_MS = 5_000;
/** One request's limit: a server that does not answer in this long reads as gone. */
const REQUEST_MS = 2_000;

/** What the record says of the session. */
export interface RecordState {
  sessionId: string;
  /** A turn runs (the server's status says busy). */
  working: boolean;
  /** The last message is the agent's, finished, and no turn runs. */
  turnEnded: boolean;
  /** The last turn was interrupted (Esc, Ctrl-C): its message carries an abort error. */
  aborted: boolean;
  lastText?: string;
  /** A permission asked and not yet answered: what it is for. */
  permission?: string;
  /** A question (OpenCode's `question` tool) open. */
  question?: string;
  lastActivity?: string;
  /** The prompts the user gave, with when each was recorded. */
  prompts: Array<{ text: string; at: string }>;
  messages: Message[];
}

/** One message as the server answers it. */
export interface Message {
  info: { id: string; role: string; time?: { created?: number; completed?: number }; modelID?: string; error?: { name?: string }; finish?: string; [key: string]: unknown };
  parts: Array<{ type: string; text?: string; synthetic?: boolean; tokens?: Tokens; tool?: string; state?: { status?: string; input?: Record<string, unknown> }; [key: string]: unknown }>;
}

interface Tokens {
  input?: number;
  output?: number;
  reasoning?: number;
  cache?: { read?: number; write?: number };
}

/** GETs `path` from the agent's server; undefined when it does not answer (not up yet, or gone). */
export async function get<T>(server: Server, path: string): Promise<T | undefined> {
  const headers: Record<string, string> = server.password ? { authorization: `Basic ${Buffer.from(`opencode:${server.password}`).toString('base64')}` } : {};
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers, signal: AbortSignal.timeout(REQUEST_MS) });
    if (!response.ok) return undefined;
    return (await response.json()) as T;
  } catch {
    return undefined;
  }
}

/** The id of the session the agent started in `cwd` at or after `startedAt`; undefined while none is made. */
export async function findSession(server: Server, cwd: string, startedAt: string): Promise<string | undefined> {
  const sessions = await get<Array<{ id: string; directory?: string; parentID?: string; time?: { created?: number } }>>(server, '/session');
  const from = Date.parse(startedAt) - START_SLACK_MS;
  const mine = (sessions ?? []).filter((s) => s.directory === cwd && !s.parentID && (s.time?.created ?? 0) >= from);
  return mine.sort((a, b) => (b.time?.created ?? 0) - (a.time?.created ?? 0))[0]?.id;
}

/** Reads the session the agent started; undefined while there is none or the server does not answer. */
export async function readRecord(server: Server, cwd: string, startedAt: string): Promise<RecordState | undefined> {
  const sessionId = await findSession(server, cwd, startedAt);
  if (!sessionId) return undefined;
  const [messages, status, permissions, questions] = await Promise.all([
    get<Message[]>(server, `/session/${encodeURIComponent(sessionId)}/message`),
    get<Record<string, { type?: string }>>(server, '/session/status'),
    get<Array<{ sessionID?: string; permission?: string; patterns?: string[]; metadata?: Record<string, unknown> }>>(server, '/permission'),
    get<Array<{ sessionID?: string; questions?: Array<{ question?: string }> }>>(server, '/question'),
  ]);
  if (!messages) return undefined;
  const state = recordState(sessionId, messages, status?.[sessionId]?.type);
  const permission = permissions?.find((p) => p.sessionID === sessionId);
  if (permission) state.permission = describePermission(permission);
  const question = questions?.find((q) => q.sessionID === sessionId);
  if (question) state.question = question.questions?.map((q) => q.question).filter(Boolean).join(' / ') || 'a question';
  return state;
}

/** The state of a session from its messages and the server's status of it (`busy`, `retry`, or none: idle). */
export function recordState(sessionId: string, messages: Message[], status?: string): RecordState {
  const state: RecordState = { sessionId, working: status === 'busy' || status === 'retry', turnEnded: false, aborted: false, prompts: [], messages };
  let latest = 0;
  for (const { info, parts } of messages) {
    latest = Math.max(latest, info.time?.completed ?? 0, info.time?.created ?? 0);
    if (info.role === 'user') {
      const text = parts.filter((p) => p.type === 'text' && !p.synthetic && typeof p.text === 'string').map((p) => p.text!).join('\n');
      if (text && info.time?.created) state.prompts.push({ text, at: new Date(info.time.created).toISOString() });
    } else if (info.role === 'assistant') {
      const said = parts.filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text!).join('\n').trim();
      if (said) state.lastText = said;
    }
  }
  const last = messages.at(-1)?.info;
  if (!state.working && last?.role === 'assistant' && (last.time?.completed || last.error)) {
    state.turnEnded = true;
    state.aborted = last.error?.name === 'MessageAbortedError';
  }
  if (latest) state.lastActivity = new Date(latest).toISOString();
  return state;
}

/**
 * How many model steps the record has closed (`step-finish` parts), and whether one is open (its
 * last `step-start` has no `step-finish` after it): OpenCode writes a step's tokens only once its
 * tool calls have returned, so a step that committed is counted only after it closes.
 */
export function steps(state: RecordState): { closed: number; open: boolean } {
  let closed = 0;
  let open = false;
  for (const { info, parts } of state.messages) {
    if (info.role !== 'assistant') continue;
    for (const part of parts) {
      if (part.type === 'step-start') open = true;
      if (part.type === 'step-finish') {
        closed += 1;
        open = false;
      }
    }
  }
  return { closed, open };
}

/**
 * Was `text` taken as a prompt? `taken` once the record holds it as a user message (at or after
 * `since`, less a second of slack), `not-yet` while it does not, `unknown` while no session is
 * found (OpenCode makes it at the first prompt, so before that no reading can say more).
 */
export function promptState(state: RecordState | undefined, text: string, since?: string): PromptState {
  return promptIn(state?.prompts, text, since);
}

/** The cursor `usageOf` hands back: the session and what was counted, to tell an unchanged reading. */
export interface UsageCursor {
  version: 1;
  sessionId: string;
  usage: AgentUsage;
}

/**
 * What the session used: each model response's `step-finish` part counted once, under its message's
 * model. OpenCode's `input` is already the uncached part (`cache.read` apart); reasoning is counted
 * as output. The server answers the whole session each time, so the cursor only tells whether
 * anything changed (then handed back as it was).
 */
export function usageOf(state: RecordState, cursor?: unknown): { usage: AgentUsage; cursor: UsageCursor } {
  const models: Record<string, TokenCounts> = {};
  let replies = 0;
  for (const { info, parts } of state.messages) {
    if (info.role !== 'assistant') continue;
    for (const part of parts) {
      if (part.type !== 'step-finish' || !part.tokens) continue;
      const t = part.tokens;
      const counts = (models[info.modelID ?? 'unknown'] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
      counts.input += num(t.input);
      counts.output += num(t.output) + num(t.reasoning);
      counts.cacheRead += num(t.cache?.read);
      counts.cacheWrite += num(t.cache?.write);
      replies++;
    }
  }
  return sameUsage(state.sessionId, { models, replies }, cursor);
}

/** The usage with its cursor: `cursor` handed back as it was when it says the same. */
export function sameUsage(sessionId: string, usage: AgentUsage, cursor?: unknown): { usage: AgentUsage; cursor: UsageCursor } {
  const before = cursor as UsageCursor | undefined;
  if (before?.version === 1 && before.sessionId === sessionId && JSON.stringify(before.usage) === JSON.stringify(usage)) return { usage, cursor: before };
  return { usage, cursor: { version: 1, sessionId, usage } };
}

/** What a permission asks for: the command of a shell call, else its kind and patterns. */
function describePermission(permission: { permission?: string; patterns?: string[]; metadata?: Record<string, unknown> }): string {
  const command = permission.metadata?.command;
  if (typeof command === 'string') return `\`${command}\` (${permission.permission ?? 'permission'})`;
  return `${permission.permission ?? 'permission'}${permission.patterns?.length ? ` ${permission.patterns.join(', ')}` : ''}`;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
