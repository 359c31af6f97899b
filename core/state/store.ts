/**
 * Live state of places, in the repository's git common dir (`<common>/flume/places/`): one JSON file
 * per place written atomically (temp file + rename), a lock per place, and an append-only event log.
 * It survives a crash of flume, never enters a commit, and goes when the place is tidied. Records
 * and logs hold briefs and prompts: `<common>/flume/` and its `places/` are 700, the files 600, and
 * a folder an older flume made open to others is narrowed the next time flume writes there.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FlumeError, flumeError } from '../api/errors.js';
import type { PlaceRecord } from '../api/record.js';
import { withLock, type LockOptions } from './lock.js';
import { publicName, publishEvent, readEvents } from './events.js';
import { crashPoint, type CrashPoint } from '../support/crash.js';
import { privateDir, PRIVATE_FILE_MODE } from './private.js';

/** The folder of a repository's place records. */
export function placesStateDir(commonDir: string): string {
  return join(commonDir, 'flume', 'places');
}

/** Makes the repository's state folders (`<common>/flume/places/`), each 700; returns the places folder. */
export async function ensurePlacesStateDir(commonDir: string): Promise<string> {
  const dir = placesStateDir(commonDir);
  await privateDir(dirname(dir));
  await privateDir(dir);
  return dir;
}

function recordFile(commonDir: string, key: string): string {
  return join(placesStateDir(commonDir), `${key}.json`);
}

/** A record that could not be read, kept so status can explain it instead of hiding it. */
export interface BrokenRecord {
  key: string;
  file: string;
  problem: string;
}

/** Reads one place's record; undefined when there is none; BAD_STATE when it is unreadable. */
export async function readRecord(commonDir: string, key: string): Promise<PlaceRecord | undefined> {
  const file = recordFile(commonDir, key);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    // A key too long to be a file name was never written: there is no such record.
    if (['ENOENT', 'ENAMETOOLONG'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
  return parseRecord(text, file);
}

/** Reads every place record of a repository: the records, and any that are broken. */
export async function readRecords(commonDir: string): Promise<{ records: PlaceRecord[]; broken: BrokenRecord[] }> {
  const dir = placesStateDir(commonDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  const records: PlaceRecord[] = [];
  const broken: BrokenRecord[] = [];
  await Promise.all(
    names
      .filter((name) => name.endsWith('.json'))
      .map(async (name) => {
        const file = join(dir, name);
        try {
          records.push(parseRecord(await readFile(file, 'utf8'), file));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
          broken.push({ key: name.slice(0, -5), file, problem: error instanceof Error ? error.message : String(error) });
        }
      }),
  );
  records.sort((a, b) => a.id.localeCompare(b.id));
  return { records, broken };
}

/** Writes a place's record atomically: readers see the old one or the new one, never half of either. */
export async function writeRecord(commonDir: string, record: PlaceRecord): Promise<void> {
  const dir = await ensurePlacesStateDir(commonDir);
  const file = recordFile(commonDir, keyOf(record));
  const temp = join(dir, `.${keyOf(record)}.${randomUUID()}.tmp`);
  await writeFile(temp, JSON.stringify(record, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
  await rename(temp, file);
}

/** Removes a place's record and its event log (the place is gone). */
export async function removeRecord(commonDir: string, key: string): Promise<void> {
  const dir = placesStateDir(commonDir);
  await rm(join(dir, `${key}.json`), { force: true });
  await rm(join(dir, `${key}.events.jsonl`), { force: true });
}

/**
 * Appends one event to the place's log (what flume did, for status and for recovery) and, under its
 * public name, to the repository's event stream (events.ts), which outlives the place.
 */
export async function appendEvent(commonDir: string, key: string, event: Record<string, unknown> & { event: string; at?: string }): Promise<void> {
  const dir = await ensurePlacesStateDir(commonDir);
  const at = event.at ?? new Date().toISOString();
  await appendFile(join(dir, `${key}.events.jsonl`), JSON.stringify({ at, ...event }) + '\n', { mode: PRIVATE_FILE_MODE });
  const name = publicName(event.event, event);
  if (name) await publishEvent(commonDir, key.replace('--', '/'), name, event, at);
}

/**
 * Writes a place's record together with the event that says what changed, so that no crash can
 * leave one without the other: the event goes into the record (`unpublished`) in the same atomic
 * write, is then appended to the logs, and the record is written again without it. A flume killed
 * in between leaves it in the record, and the place's next step publishes it (`publishUnpublished`):
 * a caller reading the stream never misses the change a record shows. Call it holding the place's lock.
 */
export async function recordWithEvent(commonDir: string, record: PlaceRecord, event: Record<string, unknown> & { event: string }, options: { crashAt?: CrashPoint } = {}): Promise<void> {
  record.unpublished = [...(record.unpublished ?? []), { ...event, at: new Date().toISOString() }];
  await writeRecord(commonDir, record);
  if (options.crashAt) crashPoint(options.crashAt);
  await publishUnpublished(commonDir, record, { fresh: true });
}

/**
 * Appends the record's unpublished events to the logs, each once, and writes the record without
 * them. After a crash one may already be in the stream (the flume was killed after appending it and
 * before writing the record again): an event of the place with the same name and time is not
 * appended twice. `fresh`: they were written a moment ago by this flume, and none can be there yet.
 */
export async function publishUnpublished(commonDir: string, record: PlaceRecord, options: { fresh?: boolean } = {}): Promise<void> {
  const pending = record.unpublished ?? [];
  if (pending.length === 0) return;
  const key = keyOf(record);
  const already = options.fresh ? [] : await readEvents(commonDir, { place: key.replace('--', '/') });
  for (const event of pending) {
    const name = publicName(event.event, event);
    if (name && already.some((seen) => seen.event === name && seen.at === event.at)) continue;
    await appendEvent(commonDir, key, event);
  }
  record.unpublished = undefined;
  await writeRecord(commonDir, record);
}

/** Runs `fn` holding the place's lock; a crashed holder's lock is taken over. */
export async function withPlaceLock<T>(commonDir: string, key: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const dir = await ensurePlacesStateDir(commonDir);
  return withLock(join(dir, `${key}.lock`), fn, { what: `The place ${key.replace('--', '/')}`, ...options });
}

/** The place's lock file: status reads its holder to tell a live launch or tidy from an interrupted one. */
export function placeLockFile(commonDir: string, key: string): string {
  return join(placesStateDir(commonDir), `${key}.lock`);
}

/** The record's file key: `<kind>--<name>`. */
export function keyOf(record: Pick<PlaceRecord, 'kind' | 'name'>): string {
  return `${record.kind}--${record.name}`;
}

function parseRecord(text: string, file: string): PlaceRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw brokenState(file, `not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const record = value as Partial<PlaceRecord>;
  const missing = (['id', 'kind', 'name', 'repo', 'path', 'branch', 'phase'] as const).filter((key) => typeof record?.[key] !== 'string');
  if (!record || typeof record !== 'object' || record.version !== 1 || missing.length) {
    throw brokenState(file, missing.length ? `missing ${missing.join(', ')}` : 'not a flume place record of version 1');
  }
  record.history ??= [];
  record.ready ??= { state: 'none', at: record.createdAt ?? '' };
  return record as PlaceRecord;
}

function brokenState(file: string, problem: string): FlumeError {
  return flumeError('BAD_STATE', { file, problem }, {
    variant: 'placeRecord',
    details: { file, problem },
  });
}
