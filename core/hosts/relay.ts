/**
 * A command run on another host's flume. What the command carries travels on ssh's standard input
 * as one JSON request, read by the remote flume's relay entry (`flume __relay`), which runs the
 * command in its own process: every argument reaches the remote flume exactly as given, whatever
 * the remote's shell, and no brief, tell or note stands on either side's command line. A file a
 * command names (`--brief-file`, `--file`) is a file on this host: its text is sent, and the remote
 * hands the command a private file of its own holding it.
 *
 * The request carries this host's flume version; the relay entry refuses one of another minor
 * version (the remote's flume upgraded while the connection that skipped its handshake was held),
 * and takes a request with none, as an older flume sends.
 *
 * The request is one line; this host holds ssh's standard input open after it until ssh ends. Its
 * end on the remote says the caller is gone (this flume ended, however; its ssh killed; the
 * connection dropped): a command there that follows or waits stops then; one that acts runs to its end.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { flumeError, type FlumeError } from '../api/errors.js';
import { PRIVATE_FILE_MODE } from '../state/private.js';
import { sameMinor } from './held.js';
import { greeted, hostTimeoutMs, onHost, unreachable } from './ssh.js';
import type { NamedHost } from './list.js';

/** The hidden first argument of the remote's relay entry. */
export const RELAY_ENTRY = '__relay';

/** The options whose value names a file on the caller's host. */
const FILE_OPTIONS = ['--brief-file', '--file'];

/** What the relay entry reads on its standard input. */
export interface RelayRequest {
  relay: 1;
  /** The caller's flume version (absent from an older caller's request). */
  version?: string;
  argv: string[];
  /** The text of each file the command names, by the index in argv of the file's name. */
  files: Array<{ index: number; text: string }>;
  /**
   * Instead of a command line, a command and its arguments as values (what a surface such as the
   * MCP server hands a command's `run`): no parser reads them on either host.
   */
  call?: { command: string; args: Record<string, unknown> };
}

/** A command and its arguments as values, run on `host`'s flume with `--json`; answers with what it printed and its exit code. */
export async function relayCall(host: NamedHost, call: { command: string; args: Record<string, unknown> }, options: { env: NodeJS.ProcessEnv; version: string; timeoutMs?: number }): Promise<{ code: number; stdout: string }> {
  const { env } = options;
  await greeted(host, env, options.version, options.timeoutMs ?? hostTimeoutMs(env));
  const request: RelayRequest = { relay: 1, version: options.version, argv: [], files: [], call };
  const result = await onHost(host, env, `${host.flume} ${RELAY_ENTRY}`, { input: line(request), holdInput: true, timeoutMs: options.timeoutMs });
  const dropped = unreachable(host, result, options.timeoutMs ?? 0, 'dropped');
  if (dropped) throw dropped;
  return { code: result.exitCode ?? 1, stdout: result.stdout };
}

/** Where a relayed command's output goes, as it comes. */
export interface RelayOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The request for `argv`: each `--brief-file X` / `--file X` read here (`--opt=X` split in two first). */
export async function relayRequest(argv: string[], cwd: string): Promise<RelayRequest> {
  const out: string[] = [];
  const files: RelayRequest['files'] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const joined = FILE_OPTIONS.find((option) => arg.startsWith(`${option}=`));
    const option = FILE_OPTIONS.includes(arg) && i + 1 < argv.length ? arg : joined;
    if (!option) {
      out.push(arg);
      continue;
    }
    const name = joined ? arg.slice(option.length + 1) : argv[++i];
    let text: string;
    try {
      text = await readFile(resolve(cwd, name), 'utf8');
    } catch {
      throw flumeError('BAD_USAGE', { file: name }, { variant: 'unreadableFile', details: { file: name } });
    }
    out.push(option, name);
    files.push({ index: out.length - 1, text });
  }
  return { relay: 1, argv: out, files };
}

/**
 * Runs `argv` on `host`'s flume: the handshake (once per held connection), then the request on ssh's standard input, the
 * remote's output handed on as it comes; answers with the remote's exit code. ssh failing before
 * the remote answered is HOST_UNREACHABLE (nothing runs here instead); the connection dropping
 * while the remote works is HOST_UNREACHABLE too, saying how to see where the remote stands.
 * `signal` aborting kills ssh, which ends the remote's command; the relay then throws its reason.
 */
export async function relay(host: NamedHost, argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv; version: string; output: RelayOutput; timeoutMs?: number; signal?: AbortSignal }): Promise<number> {
  const { env, output, signal } = options;
  const request = { ...(await relayRequest(argv, options.cwd)), version: options.version };
  await greeted(host, env, options.version, options.timeoutMs ?? hostTimeoutMs(env), signal);
  const result = await onHost(host, env, `${host.flume} ${RELAY_ENTRY}`, { input: line(request), holdInput: true, timeoutMs: options.timeoutMs, signal, onOutput: output });
  signal?.throwIfAborted();
  const dropped = unreachable(host, result, options.timeoutMs ?? 0, 'dropped');
  if (dropped) throw dropped;
  return result.exitCode ?? 1;
}

/** What the relay entry reads its request from and watches the end of: its standard input. */
export interface RelayInput {
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  on(event: 'end' | 'error', listener: () => void): unknown;
  destroy(): unknown;
}

/** This flume's version, and how it answers a request it refuses (`json`: the caller asked for JSON). */
export interface RelayOwn {
  version: string;
  refuse(error: FlumeError, json: boolean): number;
}

/**
 * The remote end: reads the request's line from `input`, hands each file's text to the command as
 * a private file of its own (removed after), and runs the command with `run`; answers with its exit
 * code. A request from another minor version than `own`'s runs nothing: `own.refuse` answers it.
 * Should `input` end while the command runs, the caller is gone and `gone` is called. Once the
 * command ends, `input` is let go.
 */
export async function answerRelay(input: RelayInput, run: (argv: string[]) => Promise<number>, call: (command: string, args: Record<string, unknown>) => Promise<number>, gone: () => void, own?: RelayOwn): Promise<number> {
  const caller = readRequest(input, gone);
  try {
    return await answer(await caller.request, run, call, own);
  } finally {
    caller.release();
  }
}

/** The refusal of a request from a flume of another minor version than `version`; none for one that names no version. */
export function relayRefusal(request: Pick<RelayRequest, 'version'>, version: string): FlumeError | undefined {
  if (request.version === undefined || sameMinor(request.version, version)) return undefined;
  return flumeError('HOST_VERSION_MISMATCH', { remote: version, local: request.version }, { variant: 'relayed', details: { remote: version, local: request.version } });
}

/** The request as its line on ssh's standard input. */
function line(request: RelayRequest): string {
  return `${JSON.stringify(request)}\n`;
}

/**
 * The request on `input`, up to its newline (all of it, should it end before one). `gone` is called
 * should `input` end after the newline, until released.
 */
function readRequest(input: RelayInput, gone: () => void): { request: Promise<string>; release(): void } {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let read = false;
  let held = true;
  let answer: (text: string) => void = () => undefined;
  const request = new Promise<string>((resolve) => (answer = resolve));
  input.on('data', (chunk) => {
    if (read) return;
    text += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const at = text.indexOf('\n');
    if (at < 0) return;
    read = true;
    answer(text.slice(0, at));
  });
  const end = () => {
    if (!read) answer(text + decoder.end());
    else if (held) gone();
    read = true;
    held = false;
  };
  input.on('end', end);
  input.on('error', end);
  return {
    request,
    release: () => {
      held = false;
      input.destroy();
    },
  };
}

/** Runs the request's command. */
async function answer(text: string, run: (argv: string[]) => Promise<number>, call: (command: string, args: Record<string, unknown>) => Promise<number>, own?: RelayOwn): Promise<number> {
  let request: RelayRequest;
  try {
    request = JSON.parse(text) as RelayRequest;
  } catch {
    request = undefined as never;
  }
  const valid = request?.relay === 1 && (request.version === undefined || typeof request.version === 'string') && Array.isArray(request.argv) && request.argv.every((a) => typeof a === 'string') && Array.isArray(request.files)
    && request.files.every((f) => Number.isInteger(f?.index) && f.index >= 0 && f.index < request.argv.length && typeof f.text === 'string');
  const called = request?.call;
  const refused = valid && own ? relayRefusal(request, own.version) : undefined;
  if (refused) return own!.refuse(refused, called !== undefined || request.argv.includes('--json') || request.argv.includes('--json=true'));
  if (valid && called !== undefined) {
    if (typeof called?.command !== 'string' || !called.args || typeof called.args !== 'object' || Array.isArray(called.args)) throw flumeError('BAD_USAGE', { message: `${RELAY_ENTRY}: a call names its command and its arguments as an object.` }, { variant: 'parser' });
    return call(called.command, called.args);
  }
  if (!valid) throw flumeError('BAD_USAGE', { message: `${RELAY_ENTRY} reads a relayed command's request on its standard input; it is what flume on another host sends, not a command.` }, { variant: 'parser' });
  const argv = [...request.argv];
  if (request.files.length === 0) return run(argv);
  const dir = await mkdtemp(join(tmpdir(), 'flume-relay-'));
  try {
    for (const [n, file] of request.files.entries()) {
      const path = join(dir, `file-${n}`);
      await writeFile(path, file.text, { mode: PRIVATE_FILE_MODE });
      argv[file.index] = path;
    }
    return await run(argv);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
