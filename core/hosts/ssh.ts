/**
 * Another host's flume, reached over OpenSSH: one connection per host kept open and reused
 * (`ControlMaster`/`ControlPersist`, its socket in flume's private state) and its handshake run
 * once per connection (held.ts), `BatchMode=yes` so a password or an unknown host key is a refusal
 * rather than a prompt nobody sees, and only flume's own fixed words on the remote's command line
 * (the command the user named for the remote's flume, then `--version --json` or the relay's
 * entry): whatever a command carries goes on ssh's standard input.
 */
import { flumeError, type FlumeError } from '../api/errors.js';
import { run, runAttached, type RunResult } from '../support/exec.js';
import { controlPath, heldVersion, readNote, sameMinor, socketIdentity, writeNote } from './held.js';
import type { NamedHost } from './list.js';
import { environmentMs } from '../support/duration.js';

/** ssh's own exit code for its own failure (the remote's never reaches it: flume exits 0, 1 or 2). */
const SSH_FAILED = 255;

/** How long the handshake waits for a host, ms (`FLUME_HOST_TIMEOUT_MS`, default 30 s). */
export function hostTimeoutMs(env: NodeJS.ProcessEnv): number {
  return environmentMs(env, 'FLUME_HOST_TIMEOUT_MS');
}

/** ssh's arguments for one remote command on `host`. */
export async function sshArguments(host: NamedHost, env: NodeJS.ProcessEnv, remoteCommand: string, terminal = false): Promise<string[]> {
  const control = await controlPath(host, env);
  return [
    '-o', 'BatchMode=yes',
    '-o', 'ControlMaster=auto',
    '-o', `ControlPath=${control}`,
    '-o', 'ControlPersist=60',
    '-o', 'ConnectTimeout=10',
    '-o', 'ServerAliveInterval=10',
    '-o', 'ServerAliveCountMax=3',
    terminal ? '-t' : '-T',
    '--', host.target, remoteCommand,
  ];
}

/**
 * Runs one remote command on `host` to its end: `input` on its standard input (held open after it
 * with `holdInput`, until ssh ends), its output handed on as it comes when asked; ssh is killed
 * past `timeoutMs` or once `signal` aborts.
 */
export async function onHost(host: NamedHost, env: NodeJS.ProcessEnv, remoteCommand: string, options: { input?: string; holdInput?: boolean; timeoutMs?: number; signal?: AbortSignal; onOutput?: { stdout(text: string): void; stderr(text: string): void } } = {}): Promise<RunResult> {
  const { holdInput, timeoutMs, signal, onOutput } = options;
  return run('ssh', await sshArguments(host, env, remoteCommand), { env: { ...env }, input: options.input ?? '', holdInput, timeoutMs, signal, killSignal: 'SIGKILL', onOutput });
}

/** ssh's own words, without its notices (a host key added to known_hosts). */
export function sshWords(result: RunResult): string {
  const lines = result.stderr.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('Warning: Permanently added'));
  return lines.slice(-4).join(' ') || (result.exitCode === null ? `ssh was ended by ${result.endedBy ?? 'a signal'}` : `ssh exited ${result.exitCode}`);
}

/** The refusal for a run of ssh that did not reach the remote's flume, or undefined when it did. */
export function unreachable(host: NamedHost, result: RunResult, timeoutMs: number, variant: 'default' | 'dropped' = 'default'): FlumeError | undefined {
  const details = { host: host.name, target: host.target };
  if (result.failedToStart) return flumeError('HOST_UNREACHABLE', { words: result.failedToStart }, { variant: 'noSsh', details });
  if (result.timedOut) return flumeError('HOST_UNREACHABLE', { host: host.name, target: host.target, seconds: Math.round(timeoutMs / 1000) }, { variant: 'timedOut', details });
  if (result.exitCode !== SSH_FAILED && result.exitCode !== null) return undefined;
  const words = sshWords(result);
  return variant === 'dropped'
    ? flumeError('HOST_UNREACHABLE', { host: host.name, target: host.target, words }, { variant: 'dropped', details: { ...details, ssh: words } })
    : flumeError('HOST_UNREACHABLE', { host: host.name, target: host.target, words }, { details: { ...details, ssh: words } });
}

/**
 * The handshake before a command on `host`, once per held connection: the remote's version from
 * the note of the handshake over the connection held now (held.ts), else {@link handshake}.
 */
export async function greeted(host: NamedHost, env: NodeJS.ProcessEnv, local: string, timeoutMs = hostTimeoutMs(env), signal?: AbortSignal): Promise<string> {
  const socket = await controlPath(host, env);
  const [note, identity] = await Promise.all([readNote(socket), socketIdentity(socket)]);
  return heldVersion(note, identity, host, local) ?? handshake(host, env, local, timeoutMs, signal);
}

/**
 * The handshake itself: the remote's `flume --version --json`, noted beside the connection it went
 * over. A host ssh cannot reach is HOST_UNREACHABLE; a remote with no flume that answers, or one of
 * another minor version, is HOST_VERSION_MISMATCH. Answers with the remote's version; `signal`
 * aborting kills ssh, and the handshake throws its reason.
 */
export async function handshake(host: NamedHost, env: NodeJS.ProcessEnv, local: string, timeoutMs = hostTimeoutMs(env), signal?: AbortSignal): Promise<string> {
  const command = `${host.flume} --version --json`;
  const result = await onHost(host, env, command, { timeoutMs, signal });
  signal?.throwIfAborted();
  const refused = unreachable(host, result, timeoutMs);
  if (refused) throw refused;
  let remote: unknown;
  try {
    remote = result.exitCode === 0 ? (JSON.parse(result.stdout) as { flume?: unknown }).flume : undefined;
  } catch {
    remote = undefined;
  }
  const details = { host: host.name, target: host.target, local };
  if (typeof remote !== 'string') {
    const words = (result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`).split('\n').slice(-3).join(' ');
    throw flumeError('HOST_VERSION_MISMATCH', { host: host.name, target: host.target, command: host.flume, words, local }, { variant: 'missing', details: { ...details, command: host.flume } });
  }
  if (!sameMinor(remote, local)) throw flumeError('HOST_VERSION_MISMATCH', { host: host.name, target: host.target, remote, local }, { details: { ...details, remote } });
  // A note that cannot be written costs the next command a handshake, nothing more.
  await writeNote(await controlPath(host, env), host, remote).catch(() => undefined);
  return remote;
}

/** A word as a POSIX shell reads it back unchanged: in single quotes, each single quote closed, escaped and reopened. */
export function quoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The remote's own live view on this terminal (`status --watch --host NAME` on a terminal): its
 * flume run under `ssh -t`, so its keys (attach, tell, stop, retry, go on, drop) act on that host,
 * and attaching to a pane is the remote's tmux (or herdr) on this terminal. Its words are a place
 * and a repository's path, never a text; each is quoted for the remote's shell. Answers with its exit code.
 */
export async function viewOnHost(host: NamedHost, env: NodeJS.ProcessEnv, local: string, words: string[]): Promise<number> {
  await greeted(host, env, local);
  const command = [host.flume, ...words.map(quoted)].join(' ');
  return (await runAttached('ssh', await sshArguments(host, env, command, true), { env: { ...env } })) ?? 1;
}
