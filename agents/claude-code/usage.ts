/**
 * What a Claude Code session used, from its transcript: the `message.usage` of each model reply and
 * its `message.model`, read incrementally. Claude Code writes one line per content block of a reply,
 * every line carrying the reply's `message.id` and its usage so far (a later block's line can carry a
 * larger `output_tokens`), so each reply is counted once, by id, at the largest figures its lines
 * give. Subagent replies count too: the stage's agent spent them (older builds mix them into the main
 * file as `isSidechain` lines, newer ones keep them in `<session id>/subagents/*.jsonl`).
 *
 * The cursor the driver hands back records, per file, how far it was read, the file's identity and
 * the totals so far; the next call reads only the bytes after that offset, and starts the file again
 * when it shrank or is another file (inode changed).
 */
import { readdirSync, statSync } from 'node:fs';
import { openPlainFile } from '../../core/index.js';
import { basename, dirname, join } from 'node:path';
import type { AgentUsage, TokenCounts } from '../../core/index.js';

/** What was read of one file. */
interface FileCursor {
  /** Bytes read: up to the end of the last whole line. */
  offset: number;
  ino: number;
  dev: number;
  models: Record<string, TokenCounts>;
  replies: number;
  /** The last replies counted, by id, with what was counted for each: a later line of one replaces it. */
  recent: Array<[id: string, model: string, counts: TokenCounts]>;
  /** Claude Code's own cost of the session (a `cost-state` line), and the replies counted when it was written. */
  cost?: { amount: number; replies: number; unknown: boolean };
}

/** The cursor of a session: its files as last read. */
export interface UsageCursor {
  version: 1;
  files: Record<string, FileCursor>;
}

/** How many recent reply ids are remembered: a reply's lines are written together, so a few suffice. */
const RECENT = 64;

/** The model Claude Code names on replies it made up itself (API errors, "no response"): no model ran. */
const SYNTHETIC_MODEL = '<synthetic>';

/** Bytes read at a time. */
const CHUNK = 256 * 1024;

/**
 * Reads what the session whose transcript is at `path` used, from `cursor` on; undefined while the
 * transcript does not exist. Returns the figures and the cursor for the next call.
 */
export async function readUsage(path: string, cursor?: unknown): Promise<{ usage: AgentUsage; cursor: UsageCursor; bytesRead: number } | undefined> {
  const before = isCursor(cursor) ? cursor : { version: 1 as const, files: {} };
  const main = await readFileUsage(path, before.files[path]);
  if (!main) return undefined;
  const next: UsageCursor = { version: 1, files: { [path]: main.file } };
  let bytesRead = main.bytesRead;
  const folder = join(dirname(path), basename(path, '.jsonl'), 'subagents');
  let names: string[] = [];
  try {
    names = readdirSync(folder);
  } catch {
    // No subagent ran: no folder.
  }
  for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
    const file = join(folder, name);
    const read = await readFileUsage(file, before.files[file]).catch(() => undefined);
    if (!read) continue;
    next.files[file] = read.file;
    bytesRead += read.bytesRead;
  }
  // Nothing new in any file, and the same files: the cursor handed in is handed back as it is, so
  // a caller can tell at a glance that nothing changed.
  const unchanged = bytesRead === 0 && Object.keys(next.files).length === Object.keys(before.files).length && Object.entries(next.files).every(([file, at]) => before.files[file] === at);
  return { usage: summarize(next, path), cursor: unchanged ? (before as UsageCursor) : next, bytesRead };
}

/** One file's usage from its cursor on; undefined when the file is missing. */
async function readFileUsage(path: string, previous?: FileCursor): Promise<{ file: FileCursor; bytesRead: number } | undefined> {
  // Read to its end before and the same file at that size: nothing to open (status asks of every
  // place, and most transcripts are idle).
  if (previous) {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return undefined;
    if (info.ino === previous.ino && info.dev === previous.dev && info.size === previous.offset) return { file: previous, bytesRead: 0 };
  }
  // Not a plain file (a link, a FIFO put there): read as none, never followed or waited on.
  const handle = await openPlainFile(path);
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    const same = previous && previous.ino === info.ino && previous.dev === info.dev && previous.offset <= info.size;
    const file: FileCursor = same ? structuredClone(previous) : { offset: 0, ino: info.ino, dev: info.dev, models: {}, replies: 0, recent: [] };
    let bytesRead = 0;
    let carry: Buffer = Buffer.alloc(0);
    let pos = file.offset;
    while (pos < info.size) {
      const size = Math.min(CHUNK, info.size - pos);
      const chunk = Buffer.allocUnsafe(size);
      const { bytesRead: got } = await handle.read(chunk, 0, size, pos);
      if (got === 0) break;
      bytesRead += got;
      pos += got;
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, got)]) : chunk.subarray(0, got);
      // Only whole lines are taken: a line still being written is read again, whole, next time.
      const last = data.lastIndexOf(10);
      if (last === -1) {
        carry = data;
        continue;
      }
      for (const line of data.subarray(0, last).toString('utf8').split('\n')) take(file, line);
      file.offset += last + 1;
      carry = data.subarray(last + 1);
    }
    return { file, bytesRead };
  } finally {
    await handle.close();
  }
}

/** Counts one line into the file's figures. */
function take(file: FileCursor, line: string): void {
  // Most lines carry no usage: they are not parsed.
  if (!line.includes('"usage"') && !line.includes('"cost-state"')) return;
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  if (rec.type === 'cost-state') {
    if (typeof rec.totalCostUSD === 'number') file.cost = { amount: rec.totalCostUSD, replies: file.replies, unknown: rec.hasUnknownModelCost === true };
    return;
  }
  const message = rec.message as { id?: unknown; model?: unknown; usage?: Record<string, unknown> } | undefined;
  if (rec.type !== 'assistant' || !message?.usage || typeof message.model !== 'string' || message.model === SYNTHETIC_MODEL) return;
  const counts = countsOf(message.usage);
  const id = typeof message.id === 'string' ? message.id : typeof rec.requestId === 'string' ? rec.requestId : typeof rec.uuid === 'string' ? rec.uuid : '';
  const seen = id ? file.recent.find(([known]) => known === id) : undefined;
  const model = (file.models[seen?.[1] ?? message.model] ??= zero());
  if (seen) {
    // Another line of a reply already counted: only what it adds (its figures only grow).
    const bigger = maxOf(seen[2], counts);
    add(model, bigger, seen[2]);
    seen[2] = bigger;
    return;
  }
  add(model, counts);
  file.replies += 1;
  if (id) {
    file.recent.push([id, message.model, counts]);
    if (file.recent.length > RECENT) file.recent.shift();
  }
}

/** The session's figures from every file's; Claude Code's own cost only while it covers every reply. */
function summarize(cursor: UsageCursor, main: string): AgentUsage {
  const models: Record<string, TokenCounts> = {};
  let replies = 0;
  for (const file of Object.values(cursor.files)) {
    replies += file.replies;
    for (const [name, counts] of Object.entries(file.models)) add((models[name] ??= zero()), counts);
  }
  const cost = cursor.files[main]?.cost;
  const subagents = Object.keys(cursor.files).length > 1;
  const current = cost && !cost.unknown && cost.replies === cursor.files[main].replies && !subagents;
  return { models, replies, ...(current ? { recordedCost: { amount: cost.amount, currency: 'USD' } } : {}) };
}

function countsOf(usage: Record<string, unknown>): TokenCounts {
  const n = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  return { input: n(usage.input_tokens), output: n(usage.output_tokens), cacheRead: n(usage.cache_read_input_tokens), cacheWrite: n(usage.cache_creation_input_tokens) };
}

function zero(): TokenCounts {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

function maxOf(a: TokenCounts, b: TokenCounts): TokenCounts {
  return { input: Math.max(a.input, b.input), output: Math.max(a.output, b.output), cacheRead: Math.max(a.cacheRead, b.cacheRead), cacheWrite: Math.max(a.cacheWrite, b.cacheWrite) };
}

/** Adds `plus` (less `minus`) into `into`. */
function add(into: TokenCounts, plus: TokenCounts, minus: TokenCounts = zero()): void {
  into.input += plus.input - minus.input;
  into.output += plus.output - minus.output;
  into.cacheRead += plus.cacheRead - minus.cacheRead;
  into.cacheWrite += plus.cacheWrite - minus.cacheWrite;
}

function isCursor(value: unknown): value is UsageCursor {
  return typeof value === 'object' && value !== null && (value as UsageCursor).version === 1 && typeof (value as UsageCursor).files === 'object';
}
