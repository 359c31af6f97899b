/**
 * The handshake once per held connection. ssh keeps one connection per host open (its control
 * socket, named here after the host's target); after a handshake flume writes a note beside the
 * socket holding the remote's version, the command that ran it and the socket's identity (device,
 * inode, birth time). While that socket is the one the note names and a master answers on it, the
 * connection is the one the handshake went over and the handshake is not run again; a new master
 * (a new socket) means a new handshake. A remote upgraded while the connection was held is caught
 * by its relay entry, which refuses a request from another minor version (relay.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from '../state/private.js';
import { sshDir, type NamedHost } from './list.js';

/** Which file a control socket is: it changes with each new master, even at the same path. */
export interface SocketIdentity {
  dev: string;
  ino: string;
  /** Birth time, ns (0 where the file system keeps none). */
  birth: string;
}

/** What a handshake over a held connection found. */
export interface HandshakeNote {
  /** The remote's flume version. */
  remote: string;
  /** The command that runs the remote's flume (a host's `--flume`). */
  command: string;
  socket: SocketIdentity;
}

/**
 * The control socket of `host`'s connection: the first 24 hex digits of the sha256 of its target,
 * in flume's private ssh folder. Short on purpose: a Unix socket's path is limited to about 104
 * bytes, and ssh binds a name 17 bytes longer before it renames it.
 */
export async function controlPath(host: Pick<NamedHost, 'target'>, env: NodeJS.ProcessEnv): Promise<string> {
  return join(await sshDir(env), createHash('sha256').update(host.target).digest('hex').slice(0, 24));
}

/** The same minor version: `0.1.0` and `0.1.4` agree, `0.1.0` and `0.2.0` do not. */
export function sameMinor(a: string, b: string): boolean {
  const minor = (version: string) => version.split('.').slice(0, 2).join('.');
  return minor(a) === minor(b);
}

/**
 * The remote's version when the note vouches for the connection held now (`identity`, undefined
 * when no master answers): the same socket, the same remote command, a version of `local`'s minor.
 */
export function heldVersion(note: HandshakeNote | undefined, identity: SocketIdentity | undefined, host: Pick<NamedHost, 'flume'>, local: string): string | undefined {
  if (!note || !identity) return undefined;
  const same = note.socket.dev === identity.dev && note.socket.ino === identity.ino && note.socket.birth === identity.birth;
  return same && note.command === host.flume && sameMinor(note.remote, local) ? note.remote : undefined;
}

/** The identity of the control socket at `path`, or undefined when there is none or no master answers on it. */
export async function socketIdentity(path: string): Promise<SocketIdentity | undefined> {
  let found;
  try {
    found = await stat(path, { bigint: true });
  } catch {
    return undefined;
  }
  if (!found.isSocket() || !(await answers(path))) return undefined;
  return { dev: String(found.dev), ino: String(found.ino), birth: String(found.birthtimeNs) };
}

/** The note beside the socket at `path`, if there is one that reads. */
export async function readNote(path: string): Promise<HandshakeNote | undefined> {
  try {
    const note = JSON.parse(await readFile(noteFile(path), 'utf8')) as HandshakeNote;
    const socket = note?.socket;
    return typeof note.remote === 'string' && typeof note.command === 'string' && typeof socket?.dev === 'string' && typeof socket.ino === 'string' && typeof socket.birth === 'string' ? note : undefined;
  } catch {
    return undefined;
  }
}

/** Notes a handshake over the connection whose socket is at `path`; with no master there, removes any note. */
export async function writeNote(path: string, host: Pick<NamedHost, 'flume'>, remote: string): Promise<void> {
  const socket = await socketIdentity(path);
  if (!socket) return void (await rm(noteFile(path), { force: true }));
  const temp = `${noteFile(path)}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify({ remote, command: host.flume, socket } satisfies HandshakeNote)}\n`, { mode: PRIVATE_FILE_MODE });
  await rename(temp, noteFile(path));
}

function noteFile(path: string): string {
  return `${path}.handshake`;
}

/** True when something accepts on the socket: a master killed outright leaves its socket behind. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
