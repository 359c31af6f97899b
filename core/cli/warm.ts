/**
 * Read commands answered by the running supervisor. `flume status` starting cold pays node's start,
 * then loading flume, the config and the plugins, then reading every place: several times a bare
 * `node -e 0`. The host's supervisor has all of that loaded already, so the bin first asks it, over
 * a socket in the host's private state folder, to run the same command with the same code and hand
 * back what it printed. The answer is the command's own (the supervisor runs `runCli` on the same
 * arguments: nothing is kept from an earlier answer but what a reading keeps by file identity), so
 * asking warm changes when an answer comes, never what it says.
 *
 * Only read commands are asked (`status [place] [--json] [--repo DIR]` and `kinds [--json]
 * [--repo DIR]`), and only of a supervisor started from the same flume build with the same
 * environment flume reads; in any other case, or when no supervisor answers within a moment, the
 * command runs in its own process as before. This module is loaded by the bin before anything else:
 * it imports little beyond node's own modules.
 */
import { createHash } from 'node:crypto';
import { chmod, rm } from 'node:fs/promises';
import { realpathSync, statSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import type { Io } from './process-io.js';
import { WARM_SOCKET } from '../state/dir.js';
import { plainArgs } from './plain-args.js';
import { ROUTING_VARIABLES } from '../support/environment.js';


/** How long the bin waits for the supervisor's answer before running the command itself, ms. */
const ANSWER_MS = 3000;

/** What the bin sends: the command (its arguments made independent of the caller's folder) and what must match. */
interface WarmRequest {
  argv: string[];
  build: string;
  env: string;
  isTTY: boolean;
}

/** What the supervisor answers: what the command printed and its exit code, or why it did not run it. */
type WarmAnswer = { stdout: string; stderr: string; code: number } | { refused: string };

/**
 * The arguments to send for a command the supervisor may answer, with `--repo` made absolute (and,
 * for `kinds`, the caller's folder named): undefined for any other command line.
 */
export function warmArgs(argv: string[], cwd: string): string[] | undefined {
  const read = plainArgs(argv);
  if (!read || (read.command !== 'status' && read.command !== 'kinds')) return undefined;
  const { place, repo: given, json } = read.args as { place?: string; repo?: string; json?: boolean };
  const out: string[] = [read.command];
  const repo = given ?? (read.command === 'kinds' ? cwd : undefined);
  if (place !== undefined) out.push(place);
  if (repo !== undefined) out.push('--repo', isAbsolute(repo) ? repo : resolve(cwd, repo));
  if (json) out.push('--json');
  return out;
}

/** True for arguments exactly as `warmArgs` sends them: the supervisor runs nothing else. */
export function isWarmArgs(argv: string[]): boolean {
  const again = warmArgs(argv, '/');
  return again !== undefined && again.length === argv.length && again.every((arg, i) => arg === argv[i]) && (argv[0] !== 'kinds' || argv.includes('--repo'));
}

/** The flume build a process runs: its executable's real path and when that file was written. */
export function buildOf(self: string): string {
  const path = realpathSync(self);
  return `${path}:${statSync(path).mtimeMs}`;
}

/**
 * A digest of the environment flume reads (its own variables, the agents' and hosts', where state
 * and caches live, PATH for the programs it runs): an answer from a supervisor started elsewhere
 * could differ, so none is asked of it. A digest, so no value (an API key) crosses the socket. The
 * routing variables are left out: a command asked here was routed here already, and no supervisor
 * has them (core/support/environment.ts).
 */
export function environmentOf(env: NodeJS.ProcessEnv): string {
  const names = Object.keys(env)
    .filter((name) => (/^(FLUME_|CLAUDE_|ANTHROPIC_|HERDR_|XDG_)/.test(name) || name === 'HOME' || name === 'PATH') && !ROUTING_VARIABLES.includes(name))
    .sort();
  return createHash('sha256')
    .update(JSON.stringify(names.map((name) => [name, env[name]])))
    .digest('hex');
}

/**
 * Asks the supervisor of the host (its socket in `stateDir`) to run a read command: what it printed
 * and its exit code, or undefined when it cannot answer (none runs, another build, another
 * environment, a command it does not answer, no answer in time): then the caller runs it itself.
 */
export async function askWarm(argv: string[], options: { stateDir: string; self: string; cwd?: string; env?: NodeJS.ProcessEnv; isTTY?: boolean }): Promise<{ stdout: string; stderr: string; code: number } | undefined> {
  const args = warmArgs(argv, options.cwd ?? process.cwd());
  if (!args) return undefined;
  let request: WarmRequest;
  try {
    request = { argv: args, build: buildOf(options.self), env: environmentOf(options.env ?? process.env), isTTY: options.isTTY ?? false };
  } catch {
    return undefined;
  }
  const answer = await new Promise<WarmAnswer | undefined>((done) => {
    const socket = createConnection(join(options.stateDir, WARM_SOCKET));
    let text = '';
    const finish = (value: WarmAnswer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      done(value);
    };
    const timer = setTimeout(() => finish(undefined), ANSWER_MS);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(JSON.stringify(request) + '\n'));
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) finish(parseAnswer(text.slice(0, end)));
    });
    socket.on('error', () => finish(undefined));
    socket.on('close', () => finish(undefined));
  });
  return answer && !('refused' in answer) ? answer : undefined;
}

function parseAnswer(line: string): WarmAnswer | undefined {
  try {
    const value = JSON.parse(line) as WarmAnswer;
    if ('refused' in value) return value;
    return typeof value.stdout === 'string' && typeof value.stderr === 'string' && Number.isInteger(value.code) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Runs one read command as the CLI would, with what it prints captured. */
export type WarmRunner = (argv: string[], io: Io) => Promise<number>;

/**
 * Answers read commands on the socket in `stateDir` until closed: the supervisor opens it once it
 * holds the host's lock (so the socket it finds there is a stale one, removed), and closes it before
 * letting the lock go. Undefined when the socket cannot be opened (a state folder whose path is too
 * long for a socket): the commands then run cold, as without a supervisor.
 */
export async function serveWarm(stateDir: string, self: string, runner: WarmRunner): Promise<{ close(): Promise<void> } | undefined> {
  const path = join(stateDir, WARM_SOCKET);
  // A socket's path is limited to about 107 bytes; a longer one is not served.
  if (Buffer.byteLength(path) > 100) return undefined;
  const build = buildOf(self);
  const env = environmentOf(process.env);
  await rm(path, { force: true });
  const server: Server = createServer((socket) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end < 0) {
        if (text.length > 1_000_000) socket.destroy();
        return;
      }
      socket.removeAllListeners('data');
      void answer(text.slice(0, end)).then((value) => socket.end(JSON.stringify(value) + '\n'));
    });
  });
  const answer = async (line: string): Promise<WarmAnswer> => {
    let request: WarmRequest;
    try {
      request = JSON.parse(line) as WarmRequest;
    } catch {
      return { refused: 'not a request' };
    }
    if (request.build !== build) return { refused: 'another build of flume' };
    if (request.env !== env) return { refused: 'another environment' };
    if (!Array.isArray(request.argv) || !request.argv.every((arg) => typeof arg === 'string') || !isWarmArgs(request.argv)) return { refused: 'not a read command' };
    let stdout = '';
    let stderr = '';
    const io: Io = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), isTTY: request.isTTY === true };
    try {
      const code = await runner(request.argv, io);
      return { stdout, stderr, code };
    } catch (error) {
      return { refused: `failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  };
  const listening = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(path, () => done(true));
  });
  if (!listening) return undefined;
  server.on('error', () => undefined);
  await chmod(path, 0o600).catch(() => undefined);
  // The supervisor's loop ends on its own terms: an open socket must not keep the process alive.
  server.unref();
  return {
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        void rm(path, { force: true });
      }),
  };
}
