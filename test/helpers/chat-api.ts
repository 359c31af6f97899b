/**
 * A scripted stand-in for the OpenAI Chat Completions API on 127.0.0.1, for running the real
 * OpenCode in tests (its provider `@ai-sdk/openai-compatible` with `baseURL` here). OpenCode 1.18.33
 * calls `POST /v1/chat/completions` with `"stream": true` once per model step and reads server-sent
 * `chat.completion.chunk`s: a text delta, or `tool_calls` (its `bash` tool, say), then a chunk with
 * `finish_reason` and `usage`, then `data: [DONE]`. A request that offers no tools (a session
 * title) is a side request: answered with a title, kept in `side`, never taking a scripted reply.
 * Anything else is recorded in `other`; a model turn the script has no reply for gets the fallback
 * and is kept in `unscripted`, so `unexpected()` can fail a test that saw what it did not script.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startScriptedApi, type ApiShape, type ScriptedApi, type ScriptOf } from './scripted-api.js';

/** One part of a scripted reply. */
export type ReplyItem = { type: 'text'; text: string } | { type: 'call'; name: string; arguments: Record<string, unknown>; callId?: string };

/** A scripted reply: its items, and when it is sent. */
export interface Reply {
  items: ReplyItem[];
  /** Wait this long after the first chunk before the items: a slow model, a busy agent. */
  delayMs?: number;
  /** Hold the reply after the first chunk until this settles: busy until the test says so. */
  until?: Promise<unknown>;
  /** The step's usage. Default 100 prompt tokens (30 cached), 20 completion. */
  usage?: Usage;
}

/** A step's token counts, as the Chat Completions API names them. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** A reply as a test writes it: a bare string is one assistant message. */
export type ReplyLike = string | Reply;

/** Replies in order, or a function of the request (undefined: unscripted, answered with the fallback). */
export type Script = ScriptOf<ChatRequest, ReplyLike>;

/** A request as it came in. */
export interface ChatRequest {
  url: string;
  headers: IncomingMessage['headers'];
  body: ChatBody;
  receivedAt: number;
}

/** The part of a request body the tests read. */
export interface ChatBody {
  model?: string;
  stream?: boolean;
  tools?: Array<{ type: string; function?: { name: string } }>;
  messages: ChatMessage[];
  [key: string]: unknown;
}

/** A message: `system`, `user`, `assistant` (with `tool_calls`), or `tool` (a call's output). */
export type ChatMessage = { role: string; content?: string | Array<{ type: string; text?: string }> | null; tool_call_id?: string; tool_calls?: unknown[]; [key: string]: unknown };

/** The running server: its `url` is `http://127.0.0.1:<port>/v1`. */
export type ChatApi = ScriptedApi<ChatRequest, ReplyLike>;

/** Options for the server. */
export interface ChatApiOptions {
  script?: Script;
  /** Sent when the script has no reply. Default: a short message. */
  fallback?: ReplyLike;
  log?: (line: string) => void;
}

/** The API's requests and replies. */
const SHAPE: ApiShape<ChatRequest, ReplyLike> = {
  name: 'chat-api',
  basePath: '/v1',
  route(req, raw) {
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/chat/completions') return undefined;
    const body = JSON.parse(raw) as ChatRequest['body'];
    const request: ChatRequest = { url: req.url ?? '', headers: req.headers, body, receivedAt: Date.now() };
    if (!body.tools || body.tools.length === 0) return { side: request, answer: (res) => stream(res, message('Scripted session'), body.model ?? 'test-model') };
    return { turn: request };
  },
  answer: (res, next, request) => stream(res, typeof next === 'string' ? message(next) : next, request.body.model ?? 'test-model'),
  describe: (request) => JSON.stringify(lastUserText(request.body) || toolOutputs(request.body)),
};

/** Starts the server on 127.0.0.1 on a free port. */
export function startChatApi(options: ChatApiOptions = {}): Promise<ChatApi> {
  return startScriptedApi(SHAPE, { ...(options.script ? { script: options.script } : {}), fallback: options.fallback ?? 'Done.', ...(options.log ? { log: options.log } : {}) });
}

/** A reply of one assistant message. */
export function message(text: string, extra: Omit<Reply, 'items'> = {}): Reply {
  return { items: [{ type: 'text', text }], ...extra };
}

/** A reply that calls one tool, optionally after a message. */
export function call(name: string, args: Record<string, unknown>, extra: Omit<Reply, 'items'> & { before?: string; callId?: string } = {}): Reply {
  const { before, callId, ...rest } = extra;
  const item: ReplyItem = { type: 'call', name, arguments: args, ...(callId ? { callId } : {}) };
  return { items: before ? [{ type: 'text', text: before }, item] : [item], ...rest };
}

/** A reply that runs a shell command through OpenCode's `bash` tool. */
export function bash(command: string, extra: Omit<Reply, 'items'> & { before?: string } = {}): Reply {
  return call('bash', { command, description: 'Run a command' }, extra);
}

/** The text of the last message of a request when it is the user's ('' when it ends in a tool output). */
export function lastUserText(body: ChatBody): string {
  const last = body.messages[body.messages.length - 1];
  if (!last || last.role !== 'user') return '';
  return textOf(last.content);
}

/** Every `user` message text of a request, in order. */
export function userTexts(body: ChatBody): string[] {
  return body.messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
}

/** The tool outputs a request carries, by call id. */
export function toolOutputs(body: ChatBody): Array<{ callId: string; output: string }> {
  return body.messages.filter((m) => m.role === 'tool').map((m) => ({ callId: String(m.tool_call_id), output: textOf(m.content) }));
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n');
}

async function stream(res: ServerResponse, reply: Reply, model: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const gone = new Promise<void>((resolve) => res.on('close', resolve));
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, unknown>): void =>
    void res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`);
  chunk({ role: 'assistant', content: '' });
  if (reply.delayMs) await Promise.race([sleep(reply.delayMs), gone]);
  if (reply.until) await Promise.race([reply.until, gone]);
  if (res.destroyed) return;
  let calls = 0;
  for (const item of reply.items) {
    if (item.type === 'text') chunk({ content: item.text });
    else {
      const index = calls++;
      chunk({ tool_calls: [{ index, id: item.callId ?? `call_${Math.random().toString(36).slice(2)}`, type: 'function', function: { name: item.name, arguments: '' } }] });
      chunk({ tool_calls: [{ index, function: { arguments: JSON.stringify(item.arguments) } }] });
    }
  }
  const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 30 };
  chunk({}, calls ? 'tool_calls' : 'stop', {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
  });
  res.write('data: [DONE]\n\n');
  res.end();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
