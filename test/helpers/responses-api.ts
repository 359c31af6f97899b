/**
 * A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for running the real Codex CLI in
 * tests. Codex 0.171.0 calls `POST /v1/responses` with `"stream": true` once per model turn and reads
 * server-sent events: `response.created`, `response.output_item.added`/`.done` for each item (an
 * assistant `message`, or a `function_call` such as `exec_command`), text deltas, and
 * `response.completed` carrying the turn's `usage`. Requests that offer no tools (a thread title)
 * are side requests: answered with a title, kept in `side`, never taking a scripted reply.
 * Anything else is recorded in `other`; a model turn the script has no reply for gets the fallback
 * and is kept in `unscripted`, so `unexpected()` can fail a test that saw what it did not script.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startScriptedApi, type ApiShape, type ScriptedApi, type ScriptOf } from './scripted-api.js';

/** One output item of a scripted reply. */
export type OutputItem =
  | { type: 'text'; text: string }
  | { type: 'call'; name: string; arguments: Record<string, unknown>; callId?: string };

/** A scripted reply: its items, and when it is sent. */
export interface Reply {
  items: OutputItem[];
  /** Wait this long after `response.created` before the first item: a slow model, a busy agent. */
  delayMs?: number;
  /** Hold the reply after `response.created` until this settles: busy until the test says so. */
  until?: Promise<unknown>;
  /** The turn's usage as `response.completed` carries it. Default 100 in (20 cached), 20 out. */
  usage?: Usage;
}

/** A turn's token counts, as the Responses API names them. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

/** A reply as a test writes it: a bare string is one assistant message. */
export type ReplyLike = string | Reply;

/** Replies in order, or a function of the request (undefined: unscripted, answered with the fallback). */
export type Script = ScriptOf<ResponsesRequest, ReplyLike>;

/** A request to `/v1/responses` as it came in. */
export interface ResponsesRequest {
  url: string;
  headers: IncomingMessage['headers'];
  body: ResponsesBody;
  receivedAt: number;
}

/** The part of a Responses API request body the tests read. */
export interface ResponsesBody {
  model?: string;
  stream?: boolean;
  instructions?: string;
  tools?: Array<{ type: string; name?: string }>;
  input: InputItem[];
  [key: string]: unknown;
}

/** An input item: a message (`developer`/`user`/`assistant`), a function call, or its output. */
export type InputItem = { type: string; role?: string; content?: Array<{ type: string; text?: string }>; call_id?: string; output?: unknown; name?: string; arguments?: string; [key: string]: unknown };

/** The running server: its `url` is `http://127.0.0.1:<port>/v1`. */
export type ResponsesApi = ScriptedApi<ResponsesRequest, ReplyLike>;

/** Options for the server. */
export interface ResponsesApiOptions {
  script?: Script;
  /** Sent when the script has no reply. Default: a short message. */
  fallback?: ReplyLike;
  log?: (line: string) => void;
}

/** The API's requests and replies. */
const SHAPE: ApiShape<ResponsesRequest, ReplyLike> = {
  name: 'responses-api',
  basePath: '/v1',
  route(req, raw) {
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/responses') return undefined;
    const body = JSON.parse(raw) as ResponsesRequest['body'];
    const request: ResponsesRequest = { url: req.url ?? '', headers: req.headers, body, receivedAt: Date.now() };
    if (!body.tools || body.tools.length === 0) return { side: request, answer: (res) => stream(res, message('{"title": "Scripted session"}'), body.model ?? 'gpt-test') };
    return { turn: request };
  },
  answer: (res, next, request) => stream(res, typeof next === 'string' ? message(next) : next, request.body.model ?? 'gpt-test'),
  describe: (request) => JSON.stringify(lastUserText(request.body) || toolOutputs(request.body)),
};

/** Starts the server on 127.0.0.1 on a free port. */
export function startResponsesApi(options: ResponsesApiOptions = {}): Promise<ResponsesApi> {
  return startScriptedApi(SHAPE, { ...(options.script ? { script: options.script } : {}), fallback: options.fallback ?? 'Done.', ...(options.log ? { log: options.log } : {}) });
}

/** A reply of one assistant message. */
export function message(text: string, extra: Omit<Reply, 'items'> = {}): Reply {
  return { items: [{ type: 'text', text }], ...extra };
}

/** A reply that calls one function, optionally after a message. */
export function call(name: string, args: Record<string, unknown>, extra: Omit<Reply, 'items'> & { before?: string; callId?: string } = {}): Reply {
  const { before, callId, ...rest } = extra;
  const item: OutputItem = { type: 'call', name, arguments: args, ...(callId ? { callId } : {}) };
  return { items: before ? [{ type: 'text', text: before }, item] : [item], ...rest };
}

/** A reply that runs a shell command through Codex's `exec_command` tool. */
export function exec(cmd: string, extra: Omit<Reply, 'items'> & { before?: string } = {}): Reply {
  return call('exec_command', { cmd }, extra);
}

/** A reply that asks the user through Codex's `request_user_input` tool. */
export function askUser(question: string, options: Array<{ label: string; description: string }>, extra: Omit<Reply, 'items'> = {}): Reply {
  return call('request_user_input', { questions: [{ id: 'q1', header: 'Question', question, options }] }, extra);
}

/** The text of the last `user` message of a request ('' when it ends in a tool output). */
export function lastUserText(body: ResponsesBody): string {
  const last = body.input[body.input.length - 1];
  if (!last || last.type !== 'message' || last.role !== 'user') return '';
  return (last.content ?? []).filter((c) => c.type === 'input_text').map((c) => c.text ?? '').join('\n');
}

/** Every `user` message text of a request, in order (Codex's own `<environment_context>` included). */
export function userTexts(body: ResponsesBody): string[] {
  return body.input.filter((i) => i.type === 'message' && i.role === 'user').map((i) => (i.content ?? []).map((c) => c.text ?? '').join('\n'));
}

/** The function-call outputs a request carries, by call id. */
export function toolOutputs(body: ResponsesBody): Array<{ callId: string; output: string }> {
  return body.input
    .filter((i) => i.type === 'function_call_output')
    .map((i) => ({ callId: String(i.call_id), output: typeof i.output === 'string' ? i.output : JSON.stringify(i.output) }));
}

async function stream(res: ServerResponse, reply: Reply, model: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const gone = new Promise<void>((resolve) => res.on('close', resolve));
  const send = (type: string, data: Record<string, unknown>): void => void res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const id = `resp_${hex(12)}`;
  send('response.created', { response: { id, object: 'response', model, status: 'in_progress', output: [] } });
  if (reply.delayMs) await Promise.race([sleep(reply.delayMs), gone]);
  if (reply.until) await Promise.race([reply.until, gone]);
  if (res.destroyed) return;
  const output = reply.items.map((item, index) => {
    if (item.type === 'text') {
      const done = { type: 'message', id: `msg_${hex(12)}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: item.text, annotations: [] }] };
      send('response.output_item.added', { output_index: index, item: { ...done, status: 'in_progress', content: [] } });
      send('response.output_text.delta', { output_index: index, item_id: done.id, content_index: 0, delta: item.text });
      send('response.output_item.done', { output_index: index, item: done });
      return done;
    }
    const done = { type: 'function_call', id: `fc_${hex(12)}`, call_id: item.callId ?? `call_${hex(12)}`, name: item.name, arguments: JSON.stringify(item.arguments), status: 'completed' };
    send('response.output_item.added', { output_index: index, item: { ...done, arguments: '', status: 'in_progress' } });
    send('response.output_item.done', { output_index: index, item: done });
    return done;
  });
  const usage = reply.usage ?? { input_tokens: 100, output_tokens: 20, cached_tokens: 20 };
  send('response.completed', {
    response: {
      id,
      object: 'response',
      model,
      status: 'completed',
      output,
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    },
  });
  res.end();
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
