/**
 * A small JSON file of the host's state, read whole and changed under its lock, written atomically
 * (temp file + rename) with mode 600: trust decisions and config probes are nobody else's to read
 * or change.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { flumeError } from '../api/errors.js';
import { withLock } from './lock.js';

/** The file's value, or `empty` when it does not exist. A file that is not JSON is BAD_STATE. */
export async function readJsonFile<T>(file: string, empty: T): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return empty;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw flumeError('BAD_STATE', { file }, {
      details: { file },
    });
  }
}

/** Changes the file under its lock; `change` returns the new value, or undefined to leave it. */
export async function updateJsonFile<T>(file: string, empty: T, change: (value: T) => T | undefined): Promise<T> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return withLock(`${file}.lock`, async () => {
    const before = await readJsonFile(file, empty);
    const after = change(before);
    if (after === undefined) return before;
    const temp = join(dir, `.${basename(file)}.${randomUUID()}.tmp`);
    await writeFile(temp, JSON.stringify(after, null, 2) + '\n', { mode: 0o600 });
    await rename(temp, file);
    return after;
  }, { what: `flume's state file ${file}` });
}
