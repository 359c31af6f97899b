/**
 * The host's own state: the list of repositories that have places (so `flume status` with no
 * `--repo` reports every place on the host), and the folder for flume's tmux socket and supervisor.
 * `FLUME_STATE_DIR` overrides the folder (tests give each run its own). The folder is the user's
 * alone (700, see private.ts): panes' environment scripts and the supervisor's log pass through it.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { withLock } from './lock.js';
import { flumeError } from '../api/errors.js';
import { readRecords } from './store.js';
import { privateDir, PRIVATE_FILE_MODE } from './private.js';
import { hostStateDir } from './dir.js';

export { hostStateDir, WARM_SOCKET } from './dir.js';

/** A repository the host knows has places. */
export interface KnownRepository {
  root: string;
  commonDir: string;
}

/** Makes the host's state folder, or narrows it to 700 when an older flume made it open to others. */
export async function ensureHostStateDir(): Promise<string> {
  const dir = hostStateDir();
  await privateDir(dir);
  return dir;
}

function listFile(): string {
  return join(hostStateDir(), 'repositories.json');
}

/** Every repository the host knows has places. */
export async function knownRepositories(): Promise<KnownRepository[]> {
  let text: string;
  try {
    text = await readFile(listFile(), 'utf8');
  } catch {
    return [];
  }
  let value: { repositories?: KnownRepository[] };
  try {
    value = JSON.parse(text) as { repositories?: KnownRepository[] };
  } catch {
    // A list nobody can read is reported, never taken for empty: the next launch would drop every other repository.
    throw flumeError('BAD_STATE', { file: listFile() }, {
      variant: 'hostList',
      details: { file: listFile() },
    });
  }
  return Array.isArray(value.repositories) ? value.repositories.filter((r) => typeof r?.root === 'string' && typeof r?.commonDir === 'string') : [];
}

/** Adds a repository to the host's list (idempotent). */
export async function rememberRepository(repository: KnownRepository): Promise<void> {
  await updateList((list) => (list.some((r) => r.commonDir === repository.commonDir) ? list : [...list, repository]));
}

/**
 * Drops a repository from the host's list once it has no place records. The records are read again
 * under the list's lock: a launch that wrote its record meanwhile (and remembers the repository after
 * writing it) keeps the repository listed.
 */
export async function forgetRepository(commonDir: string): Promise<void> {
  await updateList(async (list) => {
    const { records, broken } = await readRecords(commonDir);
    return records.length || broken.length ? list : list.filter((r) => r.commonDir !== commonDir);
  });
}

async function updateList(change: (list: KnownRepository[]) => KnownRepository[] | Promise<KnownRepository[]>): Promise<void> {
  const dir = await ensureHostStateDir();
  await withLock(join(dir, 'repositories.lock'), async () => {
    const before = await knownRepositories();
    const after = await change(before);
    if (after === before || JSON.stringify(after) === JSON.stringify(before)) return;
    const temp = join(dir, `.repositories.${randomUUID()}.tmp`);
    await writeFile(temp, JSON.stringify({ repositories: after }, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
    await rename(temp, listFile());
  }, { what: 'The host list of repositories' });
}
