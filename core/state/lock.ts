/**
 * A lock file that a crashed holder cannot keep: it names its holder's pid, and a lock whose holder
 * is gone is taken over. Taking over renames the stale file aside first, so two takers cannot both
 * win: only one rename of that file succeeds.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { FlumeError } from '../errors.js';

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

/** Takes the lock at `path`, waiting while a live process holds it. */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<Lock> {
  const token = `${process.pid} ${HOST} ${randomUUID()}`;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let wait = 5;
  for (;;) {
    if (await tryCreate(path, token)) return { release: () => releaseLock(path, token) };
    const holder = await readFile(path, 'utf8').catch(() => undefined);
    if (holder !== undefined && !isAlive(holder)) {
      await takeOver(path, holder);
      continue;
    }
    if (Date.now() > deadline) {
      throw new FlumeError('PLACE_BUSY', `${options.what ?? path} is held by another flume (${holder?.split(' ')[0] ?? '?'}).`, {
        fix: 'Wait for the other flume command to finish, then run this again.',
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

async function tryCreate(path: string, token: string): Promise<boolean> {
  // Write the token to a private file, then link it into place: the lock never exists half-written.
  const temp = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temp, 'wx');
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

async function takeOver(path: string, staleToken: string): Promise<void> {
  const aside = `${path}.${randomUUID()}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return; // someone else took it over first
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved !== staleToken && moved !== undefined) {
    // We moved a live lock taken between our read and our rename: put it back unless another now holds.
    await link(aside, path).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

async function releaseLock(path: string, token: string): Promise<void> {
  const holder = await readFile(path, 'utf8').catch(() => undefined);
  if (holder === token) await unlink(path).catch(() => undefined);
}

function isAlive(token: string): boolean {
  const [pidText, host] = token.split(' ');
  const pid = Number(pidText);
  if (host && host !== HOST) return true; // another host's holder cannot be checked; never steal it
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
