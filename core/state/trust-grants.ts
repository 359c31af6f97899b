/**
 * What trusting a repository made flume write into an agent program's own config: a key set to `true`
 * in a JSON file of that program (Claude Code: `projects["<folder>"].hasTrustDialogAccepted` in its
 * `.claude.json`). A driver records each key it sets that was not `true` before; `flume trust
 * --revoke` takes back exactly those, and leaves every key that was there before flume (the user's
 * own answer to the program's question) and every other key of the file.
 *
 * The records are in `<host state>/trust-grants.json`. A file is edited under `<file>.flume.lock`,
 * the lock a driver holds while it merges its own keys in, and replaced whole through a temp file
 * that keeps its mode (and, as root, its owner).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { linkOnTheWay } from './no-follow.js';
import { hostStateDir } from './host.js';
import { readJsonFile, updateJsonFile } from './json-file.js';
import { withLock } from './lock.js';

/** One key flume set to `true` for a repository's trust. */
export interface TrustGrant {
  /** The repository whose trust it follows. */
  root: string;
  /** The JSON file it is in. */
  file: string;
  /** Where it is, key by key from the top (`["projects", "/repo", "hasTrustDialogAccepted"]`). */
  path: string[];
}

interface GrantFile {
  version: 1;
  grants: TrustGrant[];
}

const EMPTY: GrantFile = { version: 1, grants: [] };

function grantFile(stateDir = hostStateDir()): string {
  return join(stateDir, 'trust-grants.json');
}

/** The lock under which flume changes another program's config file. */
export function programFileLock(file: string): string {
  // A file in a container's home: its lock is flume's own, outside what the agent writes (a lock it
  // planted there, naming another host, would hold every start and revoke for ever).
  if (file.startsWith(`${join(hostStateDir(), 'homes')}/`)) {
    const locks = join(hostStateDir(), 'locks');
    mkdirSync(locks, { recursive: true, mode: 0o700 });
    return join(locks, `home-${createHash('sha256').update(file).digest('hex').slice(0, 16)}.lock`);
  }
  return `${file}.flume.lock`;
}

/** Records keys a driver set for a repository's trust (call with the file's lock held, after writing it). */
export async function recordTrustGrants(grants: TrustGrant[], stateDir?: string): Promise<void> {
  if (!grants.length) return;
  const same = (a: TrustGrant, b: TrustGrant) => a.root === b.root && a.file === b.file && JSON.stringify(a.path) === JSON.stringify(b.path);
  await updateJsonFile<GrantFile>(grantFile(stateDir), EMPTY, (value) => {
    const known = value.grants ?? [];
    const added = grants.filter((grant) => !known.some((other) => same(grant, other)));
    return added.length ? { version: 1, grants: [...known, ...added] } : undefined;
  });
}

/**
 * Takes back every key recorded for the repository: each is removed from its file where it still
 * holds `true`; a file that is gone or not JSON is left as it is. Returns how many keys were removed.
 */
export async function takeBackTrustGrants(root: string, stateDir?: string): Promise<number> {
  const mine = ((await readJsonFile<GrantFile>(grantFile(stateDir), EMPTY)).grants ?? []).filter((grant) => grant.root === root);
  let removed = 0;
  for (const file of new Set(mine.map((grant) => grant.file))) {
    const paths = mine.filter((grant) => grant.file === file).map((grant) => grant.path);
    removed += await withLock(programFileLock(file), () => removeKeys(file, paths), { what: `the config file ${file}` });
  }
  await updateJsonFile<GrantFile>(grantFile(stateDir), EMPTY, (value) => {
    const kept = (value.grants ?? []).filter((grant) => grant.root !== root);
    return kept.length === (value.grants ?? []).length ? undefined : { version: 1, grants: kept };
  });
  return removed;
}

async function removeKeys(file: string, paths: string[][]): Promise<number> {
  // A file in a container's home is the agent's to write: a link there is never followed.
  const homes = join(hostStateDir(), 'homes');
  if (file.startsWith(`${homes}/`) && (await linkOnTheWay(file, homes)) !== undefined) return 0;
  const before = await stat(file).catch(() => undefined);
  let config: unknown;
  try {
    config = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const path of paths) {
    let node = config as Record<string, unknown> | undefined;
    for (const key of path.slice(0, -1)) node = node && typeof node[key] === 'object' && node[key] !== null ? (node[key] as Record<string, unknown>) : undefined;
    const last = path[path.length - 1];
    if (node && node[last] === true) {
      delete node[last];
      removed++;
    }
  }
  if (removed) await replaceFileKeepingMode(file, JSON.stringify(config, null, 2), before);
  return removed;
}

/** Writes `text` over `file` through a temp file and a rename, keeping the old file's mode and owner. */
export async function replaceFileKeepingMode(file: string, text: string, old: { mode: number; uid: number; gid: number } | undefined): Promise<void> {
  const mode = old ? old.mode & 0o7777 : 0o600;
  const temp = `${file}.${randomUUID()}.tmp`;
  // Made 600, then given the old file's mode and owner before a byte is written: the key is never readable by others.
  const handle = await open(temp, 'wx', 0o600);
  try {
    try {
      await handle.chmod(mode);
      if (old && process.getuid?.() === 0) {
        const mine = await handle.stat();
        if (mine.uid !== old.uid || mine.gid !== old.gid) await handle.chown(old.uid, old.gid);
      }
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
