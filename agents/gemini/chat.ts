/**
 * The Gemini CLI's own record of a session, its chat file (0.61.0):
 * `<home>/.gemini/tmp/<project>/chats/session-<start, to the minute>-<first 8 of the session id>.jsonl`,
 * where `<project>` is the short name `<home>/.gemini/projects.json` gives the folder it runs in. It
 * is written from the start, before any prompt. flume gives each agent its session id
 * (`--session-id`), so the file is found by that id whatever other sessions the home holds.
 *
 * Lines read (pinned in test/e2e-gemini/gemini-vs-real.test.ts):
 * - the first: `{sessionId, projectHash, startTime, lastUpdated, kind}`;
 * - a message: `{id, timestamp, type, content, …}`, where `type` is `user` (a prompt, `content:
 *   [{text}]`, with `displayContent` as typed; or a tool's answer, `[{functionResponse}]`), `gemini` (a
 *   model reply: `content` its text, `tokens`, `model`, and `toolCalls` once its calls ran), `info`
 *   (`Request cancelled.`) or `error`. A message written again under the same id replaces it (a
 *   reply calling a tool is written first with no text and no calls, then with its `toolCalls`);
 * - `{"$set": {…}}`: `lastUpdated`, or the whole `messages` list set anew (at the start, with the
 *   `<session_context>` message Gemini sends first; and after a cancelled turn, which it takes back).
 *   Before that list, a cancelled turn writes the history it keeps again as new messages: the
 *   `<session_context>` message and each earlier reply, whose `content` is then a list of parts, not
 *   a string. Those are history, not a turn: a reply is read only when its `content` is a string.
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { keptCache, type AgentUsage, type PromptState, type TokenCounts } from '../../core/index.js';
import { promptIn, squash } from '../prompts.js';

/** One message of the chat. */
interface Message {
  id?: string;
  timestamp?: string;
  type?: string;
  content?: unknown;
  displayContent?: unknown;
  model?: string;
  tokens?: { input?: number; output?: number; cached?: number; thoughts?: number; tool?: number; total?: number };
  toolCalls?: Array<{ id?: string; name?: string; args?: unknown; status?: string }>;
}

/** One line of the chat file. */
type Line = Message & { sessionId?: string; $set?: { messages?: Message[]; lastUpdated?: string } };

/** The statuses of a tool call that ran (or was refused): nothing more comes of it. */
const DONE = new Set(['success', 'error', 'cancelled']);

/** The chat file of each session, found once and kept: it does not move. */
const found = keptCache<string, string>('gemini chat files', { holds: 'the chat file of each Gemini CLI session, by its home and session id', entries: 500 });

/** The chat folder of each project under `<home>/.gemini/tmp`. */
async function chatFolders(home: string): Promise<string[]> {
  const tmp = join(home, '.gemini', 'tmp');
  return (await names(tmp)).map((project) => join(tmp, project, 'chats'));
}

/** The chat file of the session `sessionId` under `home`; undefined while none is written. */
export async function findChat(home: string, sessionId: string): Promise<string | undefined> {
  const key = `${home}\0${sessionId}`;
  const known = found.get(key);
  if (known) return known;
  const suffix = `-${sessionId.slice(0, 8)}.jsonl`;
  for (const folder of await chatFolders(home)) {
    for (const file of await names(folder)) {
      if (!file.startsWith('session-') || !file.endsWith(suffix)) continue;
      const path = join(folder, file);
      if ((await firstLine(path))?.sessionId !== sessionId) continue;
      found.set(key, path);
      return path;
    }
  }
  return undefined;
}

/**
 * The chat folder of the project `cwd` under `home`: the one `projects.json` names once Gemini has
 * registered the folder, else the one it will name (the folder's name slugified; a name another folder
 * holds gets `-1`, `-2`…, which only projects.json can tell).
 */
export function chatFolderOf(home: string, cwd: string): string {
  let name: string | undefined;
  try {
    name = (JSON.parse(readFileSync(join(home, '.gemini', 'projects.json'), 'utf8')) as { projects?: Record<string, string> }).projects?.[cwd];
  } catch {
    // not written yet, or being written
  }
  const base = basename(cwd).toLowerCase().replace(/[^a-z0-9]/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '') || 'project';
  return join(home, '.gemini', 'tmp', name ?? base, 'chats');
}

/** What a chat says of its session. */
export interface ChatState {
  /** A turn is running: a prompt (or a tool's answer) with no reply that ended it after. */
  working: boolean;
  /** The last turn ended (answered, cancelled, or failed) and no other began. */
  turnEnded: boolean;
  /** The last turn was cancelled (Esc, a refused tool). */
  aborted: boolean;
  /** What the agent said last (its last reply of the last turn, or the error that ended it). */
  lastText?: string;
  /** The tool call of the running turn that has not run yet, if the chat names it. */
  pendingCall?: { name: string; args: unknown };
  /** The newest line's time. */
  lastActivity?: string;
  /** The prompts the user gave, with when each was recorded (one a message, however often rewritten or taken back). */
  prompts: Array<{ text: string; typed?: string; at: string }>;
}

/** Reads the chat at `path`; undefined when it does not exist. */
export async function readChat(path: string): Promise<ChatState | undefined> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const state: ChatState = { working: false, turnEnded: false, aborted: false, prompts: [] };
  const prompted = new Set<string>();
  const prompt = (message: Message) => {
    const said = texts(message.content);
    if (message.type !== 'user' || said === undefined || said.startsWith('<session_context>')) return false;
    if (message.id && prompted.has(message.id)) return false;
    if (message.id) prompted.add(message.id);
    const typed = texts(message.displayContent);
    state.prompts.push({ text: said, ...(typed !== undefined && typed !== said ? { typed } : {}), at: message.timestamp ?? '' });
    return true;
  };
  for (const line of parseLines(text.slice(0, text.lastIndexOf('\n') + 1))) {
    if (line.$set) {
      if (line.$set.lastUpdated) state.lastActivity = line.$set.lastUpdated;
      // A list set anew may hold prompts written before (kept once) and takes back nothing of what happened.
      for (const message of line.$set.messages ?? []) prompt(message);
      continue;
    }
    if (line.timestamp) state.lastActivity = line.timestamp;
    if (line.type === 'user') {
      if (prompt(line)) Object.assign(state, { working: true, turnEnded: false, aborted: false, lastText: undefined, pendingCall: undefined });
      // A tool's answer goes back to the model, unless the turn was cancelled (the refused call's answer).
      else if (hasToolAnswer(line.content) && !state.aborted) Object.assign(state, { working: true, turnEnded: false });
    } else if (line.type === 'gemini' && typeof line.content === 'string') {
      const calls = line.toolCalls ?? [];
      const said = line.content;
      if (said) state.lastText = said;
      const waiting = calls.find((call) => !DONE.has(String(call.status)));
      if (waiting) Object.assign(state, { working: true, turnEnded: false, pendingCall: { name: String(waiting.name), args: waiting.args } });
      else if (calls.some((call) => call.status === 'cancelled')) Object.assign(state, { working: false, turnEnded: true, aborted: true, pendingCall: undefined });
      // Calls that ran go back to the model; a reply with no text and no calls yet is about to call one.
      else if (calls.length || !said) Object.assign(state, { working: true, turnEnded: false, pendingCall: undefined });
      else Object.assign(state, { working: false, turnEnded: true, pendingCall: undefined });
    } else if (line.type === 'info' && /cancel/i.test(texts(line.content) ?? String(line.content ?? ''))) {
      Object.assign(state, { working: false, turnEnded: true, aborted: true, pendingCall: undefined });
    } else if (line.type === 'error') {
      Object.assign(state, { working: false, turnEnded: true, pendingCall: undefined, lastText: texts(line.content) ?? String(line.content ?? '') });
    }
  }
  return state;
}

/**
 * Was `text` taken as a prompt? `taken` once the chat records it as the user's (at or after `since`,
 * less a second of slack), alone or as one of the messages Gemini held queued and then
 * submitted together (joined by a blank line); `not-yet` while it does not, `unknown` while no chat
 * is found. Whether Gemini holds it queued meanwhile is on its screen (screen.ts, isQueued).
 */
export function promptState(state: ChatState | undefined, text: string, since?: string): PromptState {
  // A prompt counts as recorded both as sent and as typed (`displayContent`, where it differs).
  const said = state?.prompts.flatMap((p) => [{ text: p.text, at: p.at }, ...(p.typed === undefined ? [] : [{ text: p.typed, at: p.at }])]);
  const size = text.trim().replace(/\r\n?/g, '\n').split('\n\n').length;
  return promptIn(said, text, since, (recorded, want) => joined(recorded, size).some((part) => squash(part) === want));
}

/**
 * The runs of `size` neighbouring messages a prompt may have been joined from: Gemini submits what it
 * held queued as one message, each trimmed and joined by a blank line, so a message holding `size - 1`
 * blank lines of its own is a run of `size` parts.
 */
function joined(said: string, size: number): string[] {
  const parts = said.replace(/\r\n?/g, '\n').split('\n\n');
  const runs: string[] = [];
  for (let from = 0; from + size <= parts.length; from++) runs.push(parts.slice(from, from + size).join('\n\n'));
  return runs;
}

/** The cursor `readUsage` hands back: how far the chat was read, the totals so far, and the last reply counted. */
export interface UsageCursor {
  version: 1;
  path: string;
  offset: number;
  ino: number;
  models: Record<string, TokenCounts>;
  replies: number;
  /** The last reply counted, with what it added: a reply written again replaces its figures. */
  last?: { id: string; model: string; counts: TokenCounts };
}

/**
 * What the session used: each reply's `tokens` counted once (a reply written again under the same id
 * replaces its figures), under its `model`. Gemini counts cached input inside `input`; flume's
 * `input` is the uncached part, and its thinking tokens are output. Reads only what the file gained
 * since `cursor`.
 */
export async function readUsage(path: string, cursor?: unknown): Promise<{ usage: AgentUsage; cursor: UsageCursor } | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return undefined;
  const before = isCursor(cursor) && cursor.path === path && cursor.ino === info.ino && cursor.offset <= info.size ? cursor : undefined;
  const next: UsageCursor = before ? structuredClone(before) : { version: 1, path, offset: 0, ino: info.ino, models: {}, replies: 0 };
  if (info.size > next.offset) {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(info.size - next.offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, next.offset);
      const chunk = buffer.subarray(0, bytesRead).toString('utf8');
      // Only whole lines: a line being written is read next time.
      const end = chunk.lastIndexOf('\n') + 1;
      for (const line of parseLines(chunk.slice(0, end))) {
        if (line.type !== 'gemini' || typeof line.content !== 'string' || !line.tokens || !line.id) continue;
        const model = line.model ?? 'unknown';
        const cached = num(line.tokens.cached);
        const counts: TokenCounts = { input: Math.max(0, num(line.tokens.input) - cached), output: num(line.tokens.output) + num(line.tokens.thoughts), cacheRead: cached, cacheWrite: 0 };
        if (next.last?.id === line.id) add(next.models, next.last.model, next.last.counts, -1);
        else next.replies++;
        add(next.models, model, counts, 1);
        next.last = { id: line.id, model, counts };
      }
      next.offset += Buffer.byteLength(chunk.slice(0, end));
    } finally {
      await handle.close();
    }
  }
  const unchanged = before && next.offset === before.offset;
  return { usage: { models: next.models, replies: next.replies }, cursor: unchanged ? before : next };
}

function add(models: Record<string, TokenCounts>, model: string, counts: TokenCounts, sign: 1 | -1): void {
  const total = (models[model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  total.input += sign * counts.input;
  total.output += sign * counts.output;
  total.cacheRead += sign * counts.cacheRead;
  total.cacheWrite += sign * counts.cacheWrite;
}

function isCursor(value: unknown): value is UsageCursor {
  return typeof value === 'object' && value !== null && (value as UsageCursor).version === 1 && typeof (value as UsageCursor).offset === 'number';
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The text parts of a message's content joined, or undefined when it has none (a tool's answer). */
function texts(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.filter((part) => typeof part?.text === 'string').map((part) => part.text as string);
  return parts.length ? parts.join('') : undefined;
}

function hasToolAnswer(content: unknown): boolean {
  return Array.isArray(content) && content.some((part) => part && typeof part === 'object' && 'functionResponse' in part);
}

function parseLines(text: string): Line[] {
  return text.split('\n').flatMap((raw) => {
    if (!raw.trim()) return [];
    try {
      return [JSON.parse(raw) as Line];
    } catch {
      return [];
    }
  });
}

/** The first line of a file, parsed (a few hundred bytes: the session's id and start). */
async function firstLine(path: string): Promise<Line | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    const end = text.indexOf('\n');
    return end >= 0 ? parseLines(text.slice(0, end))[0] : undefined;
  } finally {
    await handle.close();
  }
}

async function names(folder: string): Promise<string[]> {
  return readdir(folder).catch(() => []);
}
