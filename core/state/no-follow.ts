/**
 * Reading what another may write (a container's home, a place's own repository) without following a
 * link it made: flume's reading or writing must not be taken to a file of this machine's that way.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/**
 * The first link on the way from `within` (itself not judged) down to `file`, `file` included;
 * undefined when there is none. What an agent can write (a container's home) is read only so: a
 * link it made would take flume's reading or writing to a file of this machine's.
 */
export async function linkOnTheWay(file: string, within: string): Promise<string | undefined> {
  const steps = relative(within, file).split(sep).filter(Boolean);
  let at = within;
  for (const step of steps) {
    at = join(at, step);
    const seen = await lstat(at).catch(() => undefined);
    if (!seen) return undefined;
    if (seen.isSymbolicLink()) return at;
  }
  return undefined;
}

/**
 * A file's text, read without following a link at its last step; undefined when it is not a plain
 * file there, or is larger than `maxBytes` (what another writes may be made to fill the memory).
 */
export async function readNoFollow(file: string, maxBytes = 64 * 1024 * 1024): Promise<{ text: string; stat: Stats } | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const seen = await handle.stat();
    return seen.isFile() && seen.size <= maxBytes ? { text: await handle.readFile('utf8'), stat: seen } : undefined;
  } finally {
    await handle.close();
  }
}

/** How an agent's file is opened: never through a link at its last step, never waiting on a FIFO. */
const PLAIN = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * An agent's file (a transcript, a session file) opened to read: undefined where there is none, or
 * what is there is not a plain file (a link, a FIFO that would hang the reader, a folder). Its
 * program writes plain files; anything else there was put by someone else.
 */
export async function openPlainFile(path: string): Promise<FileHandle | undefined> {
  const handle = await open(path, PLAIN).catch(() => undefined);
  if (!handle) return undefined;
  if ((await handle.stat().catch(() => undefined))?.isFile()) return handle;
  await handle.close();
  return undefined;
}

/** `openPlainFile`, read whole at once; undefined where it is not a plain file. */
export function readPlainFileSync(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, PLAIN);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : undefined;
  } finally {
    closeSync(fd);
  }
}
