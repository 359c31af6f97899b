/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for running the real Claude Code
 * in tests. It streams replies as server-sent events in the order and shape the real API uses, and
 * records every request so a test can see the prompt or tool result that came in.
 *
 * Claude Code 2.1.332 sends one kind of request: `POST /v1/messages?beta=true`, streaming, with
 * its tools, once per model turn (see test/fixtures/claude-2.1.332/README.md). Older builds
 * (2.1.250, 2.1.300) also ask, beside the first turn, for a session title: a request with no tools.
 * Such side requests are answered with a title and kept in `side`, never taking a scripted reply;
 * 2.1.250's `HEAD /api/hello` at start is answered 200 and kept in `probes`.
 * Anything else is answered sensibly and recorded in `other`, so a new kind of request shows up in a test.
 * A model turn the script has no reply for (a list run out, a function that answers undefined) gets
 * the fallback and is kept in `unscripted`; `unexpected()` names it and any `other` traffic, and the
 * end-to-end helper fails a test whose API saw any (test/e2e/real-repo.ts).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HANG_MS } from './wait.js';

/** One content block of a scripted reply. */
export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

/** A scripted reply: its blocks, when it is sent, and why it stops. */
export interface Reply {
  blocks: ReplyBlock[];
  /** Default: `tool_use` when a block is a tool call, else `end_turn`. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  /** Wait this long after `message_start` before the first block: a slow model, a busy agent. */
  delayMs?: number;
  /** Hold the reply after `message_start` until this settles: busy until the test says so. */
  until?: Promise<unknown>;
  /**
   * The reply's usage: input and cache figures go in `message_start`, `output_tokens` in
   * `message_delta`, as the API sends them. Default 100 in, 20 out, no cache.
   */
  usage?: Usage;
}

/** A reply's token counts, as the Messages API names them. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** A reply as a test writes it: a bare string is one text block. */
export type ReplyLike = string | Reply;

/**
 * What the server answers: replies in order, or a function of the request. A function answers
 * undefined for a turn it has no reply for: that turn is unscripted (the fallback, and recorded).
 */
export type Script = ReplyLike[] | ((request: MessagesRequest, index: number) => ReplyLike | undefined | Promise<ReplyLike | undefined>);

/** A request to `/v1/messages` as it came in. */
export interface MessagesRequest {
  url: string;
  headers: IncomingMessage['headers'];
  body: MessagesBody;
  receivedAt: number;
}

/** The part of a Messages API request body the tests read. */
export interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  tools?: Array<{ name: string; input_schema?: unknown }>;
  messages: Array<{ role: string; content: string | ContentBlock[] }>;
  [key: string]: unknown;
}

/** A content block of a message in a request. */
export type ContentBlock = { type: string; text?: string; tool_use_id?: string; content?: unknown; is_error?: boolean; [key: string]: unknown };

/** A tool result Claude Code sent back. */
export interface ToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

/** The running server. */
export interface MessagesApi {
  /** `http://127.0.0.1:<port>`: the value for `ANTHROPIC_BASE_URL`. */
  url: string;
  port: number;
  /** Every model turn requested (`POST /v1/messages`), in order. */
  requests: MessagesRequest[];
  /** Side requests to `/v1/messages` with no tools (a session title), answered without the script. */
  side: MessagesRequest[];
  /** Reachability checks the agent makes at start (`HEAD /api/hello` in 2.1.250), answered 200. */
  probes: string[];
  /** Every other request (count_tokens, unknown paths), so a test can notice new traffic. */
  other: Array<{ method: string; url: string; body: string }>;
  /** The model turns the script had no reply for (a list run out, a function's undefined), answered with the fallback. */
  unscripted: MessagesRequest[];
  /**
   * What the API saw that no test scripted, one line each: unscripted turns (with the last thing the
   * user said) and `other` traffic. Side requests (a session title) and probes are not in it: the
   * agent makes those beside the conversation, and they never take a scripted reply.
   */
  unexpected(): string[];
  /** Adds replies to the end of a list script. */
  push(...replies: ReplyLike[]): void;
  /** Resolves with the `n`th request (1-based) once it has arrived. */
  waitForRequest(n: number, timeoutMs?: number): Promise<MessagesRequest>;
  close(): Promise<void>;
}

/** Options for {@link startMessagesApi}. */
export interface MessagesApiOptions {
  script?: Script;
  /** Sent when a list script has run out. Default: a short text reply. */
  fallback?: ReplyLike;
  /** Called with a one-line summary of each request, for debugging. */
  log?: (line: string) => void;
}

/** Starts the server on 127.0.0.1 on a free port. */
export async function startMessagesApi(options: MessagesApiOptions = {}): Promise<MessagesApi> {
  const queue: ReplyLike[] = Array.isArray(options.script) ? [...options.script] : [];
  const scriptFn = typeof options.script === 'function' ? options.script : undefined;
  const waiters: Array<() => void> = [];
  const sockets = new Set<import('node:net').Socket>();

  const api: MessagesApi = {
    url: '',
    port: 0,
    requests: [],
    side: [],
    probes: [],
    other: [],
    unscripted: [],
    unexpected: () => [
      ...api.unscripted.map((r) => `unscripted turn #${api.requests.indexOf(r) + 1}: ${describeTurn(r.body)}`),
      ...api.other.map((o) => `other request: ${o.method} ${o.url}`),
    ],
    push: (...replies) => void queue.push(...replies),
    waitForRequest: (n, timeoutMs = HANG_MS) => waitFor(() => api.requests[n - 1], waiters, timeoutMs, `request #${n}`),
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      handle(req, res, raw).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, apiError('api_error', String(error)));
        res.end();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    options.log?.(`${req.method} ${req.url} ${raw.length}B`);
    if (req.method === 'HEAD' && path === '/api/hello') {
      // 2.1.250's reachability check at start: answered, kept apart from unknown traffic.
      api.probes.push(`${req.method} ${req.url}`);
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      api.other.push({ method: req.method ?? '', url: req.url ?? '', body: raw });
      if (path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
      return sendJson(res, 404, apiError('not_found_error', `test server: no route for ${req.method} ${req.url}`));
    }
    const body = JSON.parse(raw) as MessagesBody;
    const request: MessagesRequest = { url: req.url ?? '', headers: req.headers, body, receivedAt: Date.now() };
    if (isSideRequest(body)) {
      api.side.push(request);
      const reply = text(SIDE_REPLY);
      if (body.stream) await stream(res, reply, body.model ?? 'claude-test');
      else sendJson(res, 200, message(reply, body.model ?? 'claude-test', true));
      return;
    }
    const index = api.requests.push(request) - 1;
    for (const wake of waiters.splice(0)) wake();
    let next: ReplyLike | undefined = scriptFn ? await scriptFn(request, index) : queue.shift();
    if (next === undefined) {
      api.unscripted.push(request);
      next = options.fallback ?? 'Done.';
    }
    const reply = typeof next === 'string' ? text(next) : next;
    if (body.stream) await stream(res, reply, body.model ?? 'claude-test');
    else sendJson(res, 200, message(reply, body.model ?? 'claude-test', true));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.port = (server.address() as AddressInfo).port;
  api.url = `http://127.0.0.1:${api.port}`;
  return api;
}

/** A turn in a few words: the last user text (or its tool results), cut short. */
function describeTurn(body: MessagesBody): string {
  const said = lastUserText(body);
  const results = toolResults(body);
  const what = said ? JSON.stringify(said) : results.length ? `tool results ${JSON.stringify(results.map((r) => r.text))}` : '(nothing)';
  return what.length > 200 ? `${what.slice(0, 200)}…` : what;
}

/** What a side request (a session title) gets: JSON, as a structured-output title request wants. */
const SIDE_REPLY = '{"title": "Scripted session"}';

/**
 * A request the agent makes beside the model turn (a session title in 2.1.250–2.1.300): it has a
 * system prompt and offers no tools, where every turn of the main conversation offers them.
 */
export function isSideRequest(body: MessagesBody): boolean {
  return body.system !== undefined && (!body.tools || body.tools.length === 0);
}

/** A reply of one text block. */
export function text(body: string, extra: Omit<Reply, 'blocks'> = {}): Reply {
  return { blocks: [{ type: 'text', text: body }], ...extra };
}

/** Options of a reply that calls a tool: the call's id (default: a fresh one) and text to say before it. */
export type ToolReplyOptions = Omit<Reply, 'blocks'> & { id?: string; before?: string };

/** A reply that calls one tool, optionally after some text. */
export function toolUse(name: string, input: Record<string, unknown>, extra: ToolReplyOptions = {}): Reply {
  const { id, before, ...rest } = extra;
  const call: ReplyBlock = { type: 'tool_use', name, input, ...(id ? { id } : {}) };
  return { blocks: before ? [{ type: 'text', text: before }, call] : [call], ...rest };
}

/** A reply that runs a shell command with the Bash tool. */
export function bash(command: string, description = 'Run a command', extra: ToolReplyOptions = {}): Reply {
  return toolUse('Bash', { command, description }, extra);
}

/** One question for {@link askUserQuestion}; `multiSelect` defaults to false. */
export interface Question {
  question: string;
  header: string;
  options: Array<{ label: string; description: string }>;
  multiSelect?: boolean;
}

/** A reply that opens Claude Code's question dialog (the AskUserQuestion tool, 1–4 questions of 2–4 options). */
export function askUserQuestion(questions: Question[], extra: ToolReplyOptions = {}): Reply {
  return toolUse('AskUserQuestion', { questions: questions.map((q) => ({ multiSelect: false, ...q })) }, extra);
}

/** A new id in the shape of the real API's tool call ids. */
export function toolUseId(): string {
  return `toolu_01${randomBytes(12).toString('hex')}`;
}

/** The last message in the request with role `user`. */
export function lastUserMessage(body: MessagesBody): MessagesBody['messages'][number] | undefined {
  return [...body.messages].reverse().find((m) => m.role === 'user');
}

/**
 * The text a person typed in the last user message: its text blocks without Claude Code's own
 * `<system-reminder>` blocks, joined by newlines ('' when the message holds only tool results).
 */
export function lastUserText(body: MessagesBody): string {
  const content = lastUserMessage(body)?.content ?? '';
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text' && typeof b.text === 'string' && !b.text.startsWith('<system-reminder>'))
    .map((b) => b.text as string)
    .join('\n');
}

/** The tool results in the last user message, their content flattened to text. */
export function toolResults(body: MessagesBody): ToolResult[] {
  const content = lastUserMessage(body)?.content ?? '';
  if (typeof content === 'string') return [];
  return content
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ toolUseId: String(b.tool_use_id), text: flatten(b.content), isError: b.is_error === true }));
}

async function stream(res: ServerResponse, reply: Reply, model: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${hex(12)}` });
  const gone = new Promise<void>((resolve) => res.on('close', resolve));
  const send = (event: string, data: unknown): void => void res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const { content: _content, stop_reason: stopReason, usage: _usage, ...start } = message(reply, model, false);
  const usage = reply.usage ?? DEFAULT_USAGE;
  send('message_start', { type: 'message_start', message: { ...start, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  send('ping', { type: 'ping' });
  if (reply.delayMs) await Promise.race([sleep(reply.delayMs), gone]);
  if (reply.until) await Promise.race([reply.until, gone]);
  if (res.destroyed) return;
  reply.blocks.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const part of halves(block.text)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } });
    } else {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id ?? toolUseId(), name: block.name, input: {} } });
      for (const part of halves(JSON.stringify(block.input))) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function message(reply: Reply, model: string, withIds: boolean) {
  const hasTool = reply.blocks.some((b) => b.type === 'tool_use');
  return {
    id: `msg_01${hex(12)}`,
    type: 'message',
    role: 'assistant',
    model,
    content: reply.blocks.map((b) => (b.type === 'text' ? b : { type: 'tool_use', id: b.id ?? (withIds ? toolUseId() : ''), name: b.name, input: b.input })),
    stop_reason: reply.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: reply.usage ?? DEFAULT_USAGE,
  };
}

const DEFAULT_USAGE: Usage = { input_tokens: 100, output_tokens: 20 };

/** Waits for a request to come; the limit is a hang guard, not an assertion (test/helpers/wait.ts). */
function waitFor<T>(get: () => T | undefined, waiters: Array<() => void>, timeoutMs: number, what: string): Promise<T> {
  timeoutMs = Math.max(timeoutMs, HANG_MS);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`messages-api: timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
    const check = (): void => {
      const value = get();
      if (value === undefined) return void waiters.push(check);
      clearTimeout(timer);
      resolve(value);
    };
    check();
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function apiError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

function flatten(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c: { text?: unknown }) => (typeof c.text === 'string' ? c.text : '')).join('\n');
}

/** Splits a string in two so every block arrives as more than one delta, as the real API does. */
function halves(s: string): string[] {
  const chars = Array.from(s);
  const cut = Math.ceil(chars.length / 2);
  return chars.length < 2 ? [s] : [chars.slice(0, cut).join(''), chars.slice(cut).join('')];
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
