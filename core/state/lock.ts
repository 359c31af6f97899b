/**
 * A lock file that a crashed holder cannot keep: it names its holder's pid, and a lock whose holder
 * is gone is taken over. Breaking a stale lock is itself done holding a second lock (`<path>.break`),
 * so a live lock taken between a taker's read and its break is never removed: only the stale token
 * read under the breaker is moved aside, and while it stands nobody else can replace it.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { flumeError } from '../api/errors.js';
import { processStart, sameProcess } from '../support/process.js';
import { PRIVATE_FILE_MODE } from './private.js';

/** Options for taking a lock. */
export interface LockOptions {
  /** How long to wait for a live holder before giving up. Default 30 s. */
  timeoutMs?: number;
  /** What is locked, for the error message. */
  what?: string;
}

/** A held lock; release it exactly once. */
export interface Lock {
  release(): Promise<void>;
}

const HOST = hostname();

/**
 * A holder's token: `<pid> <host> <uuid> <start>`, the start being its process's (processStart), so
 * a dead holder's lock is not kept by a later process given its pid. A token without it (written by
 * an older flume) is checked by its pid alone.
 */
function tokenOf(): string {
  const start = processStart(process.pid);
  return `${process.pid} ${HOST} ${randomUUID()}${start !== undefined ? ` ${start}` : ''}`;
}

/** Takes the lock at `path`, waiting while a live process holds it. */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<Lock> {
  const token = tokenOf();
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let wait = 5;
  for (;;) {
    if (await tryCreate(path, token)) return { release: () => releaseLock(path, token) };
    const holder = await readFile(path, 'utf8').catch(() => undefined);
    // A stale lock is broken and taken at once; while another taker is breaking it, wait like anyone.
    if (holder !== undefined && !isAlive(holder) && (await takeOver(path, holder))) continue;
    if (Date.now() > deadline) {
      throw flumeError('PLACE_BUSY', { what: options.what ?? path, holder: holder?.split(' ')[0] ?? '?' }, {
        details: { lock: path, holder },
      });
    }
    await new Promise((done) => setTimeout(done, wait));
    wait = Math.min(wait * 2, 100);
  }
}

/** Runs `fn` holding the lock at `path`. */
export async function withLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = await acquireLock(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

/** Who holds the lock at `path`, and whether that holder still runs; undefined when nobody holds it. */
export async function lockHolder(path: string): Promise<{ pid?: number; alive: boolean } | undefined> {
  const token = await readFile(path, 'utf8').catch(() => undefined);
  if (token === undefined) return undefined;
  const pid = Number(token.split(' ')[0]);
  return { ...(Number.isInteger(pid) && pid > 0 ? { pid } : {}), alive: isAlive(token) };
}

async function tryCreate(path: string, token: string): Promise<boolean> {
  // Write the token to a private file, then link it into place: the lock never exists half-written.
  const temp = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(token);
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Breaks the stale lock at `path` holding its breaker; false when another taker holds the breaker. */
async function takeOver(path: string, staleToken: string): Promise<boolean> {
  const breaker = `${path}.break`;
  const token = tokenOf();
  if (!(await tryCreate(breaker, token))) {
    // A breaker whose holder died mid-break would stop every taker: move it aside and try again.
    const holder = await readFile(breaker, 'utf8').catch(() => undefined);
    if (holder === undefined || isAlive(holder)) return false;
    await moveAside(breaker, holder);
    return true;
  }
  try {
    // Under the breaker, nobody else removes the lock; its dead holder never releases it: if it still
    // holds the stale token, that token is what moves aside.
    if ((await readFile(path, 'utf8').catch(() => undefined)) === staleToken) await moveAside(path, staleToken);
  } finally {
    await releaseLock(breaker, token);
  }
  return true;
}

/**
 * Renames a stale lock file aside and deletes it; a live one moved by mistake (two breakers at once,
 * one of them past a dead one's breaker) is put back unless another has taken the lock meanwhile.
 */
async function moveAside(path: string, staleToken: string): Promise<void> {
  const aside = `${path}.${randomUUID()}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return; // someone else took it over first
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved !== staleToken && moved !== undefined) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

async function releaseLock(path: string, token: string): Promise<void> {
  const holder = await readFile(path, 'utf8').catch(() => undefined);
  if (holder === token) await unlink(path).catch(() => undefined);
}

function isAlive(token: string): boolean {
  // `<pid> <host> <uuid> <start>`, as acquireLock writes it (an older flume's without its start);
  // anything else (garbled, written by hand) holds nothing.
  const match = /^(\d+) (.+) ([0-9a-f-]{36})(?: (\d+))?$/.exec(token);
  if (!match) return false;
  const [, pidText, host, , start] = match;
  const pid = Number(pidText);
  if (host !== HOST) return true; // another host's holder cannot be checked; never steal it
  if (!Number.isInteger(pid) || pid <= 0) return false;
  return sameProcess(pid, start);
}
