/**
 * The hosts the user named (`flume hosts add`), kept in the user's own flume state on this host
 * (hosts.json), never in a repository's config; beside it, the time of each host's last good
 * reading (`status --all-hosts` shows it for a host that does not answer) and the folder of the
 * ssh connections flume reuses (`ControlPath`). All of it is in the private state folder (700).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { flumeError } from '../api/errors.js';
import { hostStateDir } from '../state/dir.js';
import { withLock } from '../state/lock.js';
import { privateDir, PRIVATE_FILE_MODE } from '../state/private.js';

/** A host the user named: where ssh reaches it, and the command that runs its flume there. */
export interface NamedHost {
  name: string;
  /** Whatever `ssh` accepts as a destination: `user@build-1`, a `~/.ssh/config` alias. */
  target: string;
  /** The remote command that runs flume, as the remote's login shell reads it (default `flume`). */
  flume: string;
  addedAt: string;
}

/** The name that stands for this host in a merged reading; no named host may take it. */
export const THIS_HOST = 'local';

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** True for a name a host may be given. */
export function isHostName(name: string): boolean {
  return NAME.test(name) && name !== THIS_HOST;
}

function listFile(env: NodeJS.ProcessEnv): string {
  return join(hostStateDir(env), 'hosts.json');
}

/** The folder of the ssh connections flume keeps open (`ControlPath`), made private. */
export async function sshDir(env: NodeJS.ProcessEnv): Promise<string> {
  const dir = join(hostStateDir(env), 'ssh');
  await privateDir(hostStateDir(env));
  await privateDir(dir);
  return dir;
}

/** Every host the user named, in the order they were added. */
export async function namedHosts(env: NodeJS.ProcessEnv): Promise<NamedHost[]> {
  let text: string;
  try {
    text = await readFile(listFile(env), 'utf8');
  } catch {
    return [];
  }
  let value: { hosts?: NamedHost[] };
  try {
    value = JSON.parse(text) as { hosts?: NamedHost[] };
  } catch {
    throw flumeError('BAD_STATE', { file: listFile(env) }, { details: { file: listFile(env) } });
  }
  return Array.isArray(value.hosts) ? value.hosts.filter((h) => typeof h?.name === 'string' && typeof h?.target === 'string' && typeof h?.flume === 'string') : [];
}

/** The host named `name`, or UNKNOWN_HOST. */
export async function namedHost(name: string, env: NodeJS.ProcessEnv): Promise<NamedHost> {
  const found = (await namedHosts(env)).find((h) => h.name === name);
  if (!found) throw flumeError('UNKNOWN_HOST', { host: name }, { details: { host: name } });
  return found;
}

/** Adds a host to the list; a name taken already is refused. */
export async function addNamedHost(host: NamedHost, env: NodeJS.ProcessEnv): Promise<void> {
  await updateList(env, (list) => {
    const taken = list.find((h) => h.name === host.name);
    if (taken) throw flumeError('UNKNOWN_HOST', { host: host.name, target: taken.target }, { variant: 'exists', details: { host: host.name, target: taken.target } });
    return [...list, host];
  });
}

/** Removes a host from the list (and its last reading); an unknown name is UNKNOWN_HOST. */
export async function removeNamedHost(name: string, env: NodeJS.ProcessEnv): Promise<NamedHost> {
  let removed: NamedHost | undefined;
  await updateList(env, (list) => {
    removed = list.find((h) => h.name === name);
    if (!removed) throw flumeError('UNKNOWN_HOST', { host: name }, { details: { host: name } });
    return list.filter((h) => h.name !== name);
  });
  return removed!;
}

async function updateList(env: NodeJS.ProcessEnv, change: (list: NamedHost[]) => NamedHost[]): Promise<void> {
  const dir = hostStateDir(env);
  await privateDir(dir);
  await withLock(join(dir, 'hosts.lock'), async () => {
    const after = change(await namedHosts(env));
    const temp = join(dir, `.hosts.${randomUUID()}.tmp`);
    await writeFile(temp, JSON.stringify({ hosts: after }, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
    await rename(temp, listFile(env));
  }, { what: 'The list of hosts' });
}

function readingFile(env: NodeJS.ProcessEnv, name: string): string {
  return join(hostStateDir(env), 'host-readings', `${name}.json`);
}

/** When the host last answered a reading, if it ever did. */
export async function lastGoodReading(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const value = JSON.parse(await readFile(readingFile(env, name), 'utf8')) as { at?: unknown };
    return typeof value.at === 'string' ? value.at : undefined;
  } catch {
    return undefined;
  }
}

/** Notes that the host answered a reading at `at`. */
export async function noteGoodReading(name: string, at: string, env: NodeJS.ProcessEnv): Promise<void> {
  const file = readingFile(env, name);
  await mkdir(join(hostStateDir(env), 'host-readings'), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify({ at }) + '\n', { mode: PRIVATE_FILE_MODE });
  await rename(temp, file);
}
