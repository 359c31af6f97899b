/**
 * flume's state holds briefs, prompts and, for a moment, an agent's environment: its folders are the
 * user's alone (700) and its files 600. A folder made by an older flume (755) is narrowed the next
 * time flume writes there, so an upgrade needs no step of the user's.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { flumeError } from '../api/errors.js';

/** The mode of a folder of flume's state. */
export const PRIVATE_DIR_MODE = 0o700;
/** The mode of a file of flume's state. */
export const PRIVATE_FILE_MODE = 0o600;

/** Makes `dir` (and any missing parent, 700 too) and narrows it to 700 when it is wider. */
export async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const { mode } = await stat(dir);
  if ((mode & 0o777) === PRIVATE_DIR_MODE) return;
  try {
    await chmod(dir, PRIVATE_DIR_MODE);
  } catch (error) {
    throw flumeError('IO_FAILED', { dir, mode: (mode & 0o777).toString(8) }, {
      details: { dir, mode: (mode & 0o777).toString(8), cause: (error as NodeJS.ErrnoException).code },
    });
  }
}
