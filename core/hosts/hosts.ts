/**
 * `flume hosts`: the hosts the user names, in the user's own flume state. `add` checks the host at
 * once (the handshake: ssh reaches it, its flume answers with this flume's minor version) and
 * refuses one it cannot reach; nothing is added then.
 */
import { flumeError } from '../api/errors.js';
import { addNamedHost, isHostName, lastGoodReading, namedHosts, removeNamedHost, type NamedHost } from './list.js';
import { handshake } from './ssh.js';

/** A host as `flume hosts --json` lists it. */
export interface HostListing extends NamedHost {
  lastReadingAt?: string;
}

/** Every host the user named, with the time of its last good reading. */
export async function listHosts(env: NodeJS.ProcessEnv): Promise<HostListing[]> {
  return Promise.all((await namedHosts(env)).map(async (host) => {
    const lastReadingAt = await lastGoodReading(host.name, env);
    return { ...host, ...(lastReadingAt ? { lastReadingAt } : {}) };
  }));
}

/** Checks the host and adds it; answers with it and its flume's version. */
export async function addHost(request: { name: string; target: string; flume?: string }, env: NodeJS.ProcessEnv, version: string): Promise<{ host: NamedHost; remote: string }> {
  if (!isHostName(request.name)) throw flumeError('UNKNOWN_HOST', { host: request.name }, { variant: 'badName', details: { host: request.name } });
  if (!request.target || request.target.startsWith('-')) throw flumeError('UNKNOWN_HOST', { target: request.target }, { variant: 'badTarget', details: { target: request.target } });
  const host: NamedHost = { name: request.name, target: request.target, flume: request.flume?.trim() || 'flume', addedAt: new Date().toISOString() };
  if ((await namedHosts(env)).some((h) => h.name === host.name)) {
    const taken = (await namedHosts(env)).find((h) => h.name === host.name)!;
    throw flumeError('UNKNOWN_HOST', { host: host.name, target: taken.target }, { variant: 'exists', details: { host: host.name, target: taken.target } });
  }
  const remote = await handshake(host, env, version);
  await addNamedHost(host, env);
  return { host, remote };
}

/** Removes a host from the list. */
export async function removeHost(name: string, env: NodeJS.ProcessEnv): Promise<NamedHost> {
  return removeNamedHost(name, env);
}
