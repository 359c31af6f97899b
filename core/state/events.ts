/**
 * The repository's event stream: every event flume records for its places, one JSON line each in
 * `<common>/flume/events.jsonl`, with an id that only grows (taken under `events.lock`), the place,
 * the time and the event's own fields. A caller resumes after an id and sees nothing twice and
 * misses nothing; it outlives the places: a tidied place's events stay readable there. When the
 * log passes 2 MiB and its first event is over 7 days old, it becomes `events.1.jsonl` (the one
 * before is dropped) and a new log begins, ids going on: events stay readable at least 7 days.
 *
 * The place's own log (`places/<key>.events.jsonl`, store.ts) is flume's record for recovery and
 * goes with the place; this one is the public stream, its shape published as events.schema.json.
 */
import { existsSync, watch } from 'node:fs';
import { appendFile, open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withLock } from './lock.js';
import { privateDir, PRIVATE_FILE_MODE } from './private.js';

/** The events of the public stream, and what each says. */
export const EVENT_NAMES = {
  launched: 'The place was made: its branch, base and folder.',
  readied: 'Readying the place ended: `state` ready, failed (with the failed step) or none.',
  'not-ready': 'A stage was refused because readying failed.',
  'stage-started': 'A stage started with a fresh agent.',
  'prompt-sent': 'The stage\'s prompt was typed (`sends`: the how-many-th time).',
  'prompt-taken': 'The agent\'s transcript shows the prompt taken.',
  'prompt-unknown': 'The agent has not taken input yet: whether the prompt arrived is not known.',
  'never-started': 'The agent never took its prompt (`needs`: why, when its agent could not start, exited first, or its prompt cannot be sent).',
  waiting: 'The stage stopped short: `needs` says what it needs.',
  working: 'A stage that stopped short or went quiet works again.',
  stuck: 'The stage went quiet past its limit.',
  'over-budget': 'The stage passed its token budget.',
  delivered: 'The stage\'s deliverable is there: `what` names it.',
  'awaits-caller': 'The place waits for its caller: `after` the stage that delivered, `gate` when it is one stage\'s gate.',
  finished: 'Every stage delivered, or a landing landed: the launch is over.',
  told: 'A tell reached the agent as a prompt.',
  stopped: 'The stage\'s agent was ended.',
  dropped: 'The launch was dropped.',
  tidied: 'The place was removed: `reason` says why it was over.',
  kept: 'Tidying kept the place or its branch: `reason` says why.',
  recovered: 'An interrupted launch was found and its work kept.',
} as const;

/** An event's name. */
export type EventName = keyof typeof EVENT_NAMES;

/** One event of the stream. */
export interface FlumeEvent {
  /** Grows by one with each event of the repository. */
  id: number;
  at: string;
  /** `<kind>/<name>`. */
  place: string;
  event: EventName;
  [field: string]: unknown;
}

/** The names flume's own log gives what the stream calls otherwise (its actions'). */
const PUBLIC_NAMES: Record<string, EventName | null> = {
  made: 'launched',
  'mark-delivered': 'delivered',
  'mark-taken': 'prompt-taken',
  'mark-waiting': 'waiting',
  'clear-waiting': 'working',
  'mark-stuck': 'stuck',
  'mark-over-budget': 'over-budget',
  'mark-not-ready': 'not-ready',
  'await-caller': 'awaits-caller',
  finish: 'finished',
  'agent-stopped': 'stopped',
  'worktree-removed': 'tidied',
  'send-again': null,
  'note-held': null,
};

const LOG = 'events.jsonl';
const OLDER = 'events.1.jsonl';
const ROTATE_BYTES = 2 * 1024 * 1024;
const ROTATE_AGE_MS = 7 * 24 * 3600_000;

function flumeDir(commonDir: string): string {
  return join(commonDir, 'flume');
}

/** The name the stream gives an event of flume's own log; null for one it leaves out. */
export function publicName(event: string, fields: Record<string, unknown>): EventName | null {
  if (event === 'mark-delivery') return fields.delivery === 'never-started' ? 'never-started' : 'prompt-unknown';
  if (event in PUBLIC_NAMES) return PUBLIC_NAMES[event];
  return event in EVENT_NAMES ? (event as EventName) : null;
}

/**
 * This process's publishing, one event after another: the file lock is then contended only by
 * other processes (a supervisor stepping many places at once would otherwise queue on its own lock).
 */
let publishing: Promise<unknown> = Promise.resolve();

/** Appends one event to the repository's stream, with the next id. */
export function publishEvent(commonDir: string, place: string, event: EventName, fields: Record<string, unknown>, at: string): Promise<void> {
  const next = publishing.then(() => publishNow(commonDir, place, event, fields, at));
  publishing = next.catch(() => undefined);
  return next;
}

async function publishNow(commonDir: string, place: string, event: EventName, fields: Record<string, unknown>, at: string): Promise<void> {
  const dir = flumeDir(commonDir);
  await privateDir(dir);
  await withLock(join(dir, 'events.lock'), async () => {
    const file = join(dir, LOG);
    const last = (await lastEvent(file)) ?? (await lastEvent(join(dir, OLDER)));
    const id = (last?.id ?? 0) + 1;
    if (last && (await rotates(file))) await rename(file, join(dir, OLDER));
    const { event: _drop, at: _at, ...rest } = fields;
    await appendFile(file, JSON.stringify({ id, at, place, event, ...rest }) + '\n', { mode: PRIVATE_FILE_MODE });
  }, { what: 'The event stream' });
}

async function rotates(file: string): Promise<boolean> {
  const size = await stat(file).then((s) => s.size, () => 0);
  if (size < ROTATE_BYTES) return false;
  const first = await firstEvent(file);
  return first !== undefined && Date.now() - Date.parse(first.at) > ROTATE_AGE_MS;
}

async function firstEvent(file: string): Promise<FlumeEvent | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    return parseLine(buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0]);
  } finally {
    await handle.close();
  }
}

async function lastEvent(file: string): Promise<FlumeEvent | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    // Lines are short; a long one (a long need) is read whole by widening the window.
    for (let span = 16 * 1024; ; span *= 4) {
      const start = Math.max(0, size - span);
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - start), 0, size - start, start);
      const lines = buffer.subarray(0, bytesRead).toString('utf8').split('\n').filter(Boolean);
      const whole = start === 0 ? lines : lines.slice(1);
      for (let i = whole.length - 1; i >= 0; i--) {
        const event = parseLine(whole[i]);
        if (event) return event;
      }
      if (start === 0) return undefined;
    }
  } finally {
    await handle.close();
  }
}

function parseLine(line: string | undefined): FlumeEvent | undefined {
  if (!line) return undefined;
  try {
    const value = JSON.parse(line) as FlumeEvent;
    return typeof value?.id === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Which events to read: those after `since`, of one place. */
export interface EventFilter {
  since?: number;
  place?: string;
}

/** Reads the repository's events after `since` (every one kept), oldest first. */
export async function readEvents(commonDir: string, filter: EventFilter = {}): Promise<FlumeEvent[]> {
  const dir = flumeDir(commonDir);
  const events: FlumeEvent[] = [];
  let seen = filter.since ?? 0;
  for (const name of [OLDER, LOG]) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const event = parseLine(line);
      if (!event || event.id <= seen) continue;
      seen = event.id;
      if (!filter.place || event.place === filter.place) events.push(event);
    }
  }
  return events;
}

/** What tells one state of the stream from another (its log's size and time): unchanged, nothing new was written. */
export async function streamStamp(commonDir: string): Promise<string> {
  const file = await stat(join(flumeDir(commonDir), LOG)).catch(() => undefined);
  return file ? `${file.ino}:${file.size}:${file.mtimeMs}` : 'none';
}

/** The id of the repository's last event; 0 when it has none. */
export async function lastEventId(commonDir: string): Promise<number> {
  const dir = flumeDir(commonDir);
  const last = (await lastEvent(join(dir, LOG))) ?? (await lastEvent(join(dir, OLDER)));
  return last?.id ?? 0;
}

/**
 * Calls `onChange(false)` whenever flume writes the repository's state (an event appended, a record
 * written), and `onChange(true)` once every `pollMs` behind the file-system events; returns the way
 * to stop.
 */
export function watchState(commonDir: string, onChange: (polled: boolean) => void, pollMs = 5000): () => void {
  const dirs = [flumeDir(commonDir), join(flumeDir(commonDir), 'places')];
  const watchers = dirs.flatMap((dir) => {
    try {
      return [watch(dir, { persistent: true }, () => onChange(false))];
    } catch {
      return [];
    }
  });
  const timer = setInterval(() => onChange(true), pollMs);
  return () => {
    clearInterval(timer);
    for (const watcher of watchers) watcher.close();
  };
}

/**
 * Keeps `streams` watching the event stream (and place records) of each repository of `roots` that
 * has flume state, and no other, each calling `poke` on a change; the follower's own slow poll
 * stands behind them, so theirs is left as long as a timer can be. Returns how many it began to follow.
 */
export function followStreams(streams: Map<string, () => void>, roots: string[], poke: () => void): number {
  let opened = 0;
  const commons = new Set(roots.map((root) => join(root, '.git')).filter((common) => existsSync(join(common, 'flume'))));
  for (const [common, stop] of streams) {
    if (commons.has(common)) continue;
    stop();
    streams.delete(common);
  }
  for (const common of commons) {
    if (streams.has(common)) continue;
    streams.set(common, watchState(common, poke, 2 ** 31 - 1));
    opened++;
  }
  return opened;
}
