/**
 * A scripted stand-in for the Gemini API on 127.0.0.1, for running the real Gemini CLI in tests
 * (its `GOOGLE_GEMINI_BASE_URL`). The CLI 0.61.0 calls `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
 * once per model turn and reads server-sent events, each `data: {candidates: [{content: {role:
 * "model", parts}, finishReason}], usageMetadata}`; a part is `{text}` or `{functionCall: {name, args}}`.
 * A turn whose last content is a tool's answer carries `{functionResponse}` parts. Other calls it
 * may make (`:generateContent`, `:countTokens`) are side requests, answered without the script.
 * Anything else is recorded in `other`; a model turn the script has no reply for gets the fallback
 * and is kept in `unscripted`, so `unexpected()` can fail a test that saw what it did not script.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted reply: text, or one function call (optionally after text), sent when `until` settles. */
export interface Reply {
  text?: string;
  call?: { name: string; args: Record<string, unknown> };
  /** Hold the reply until this settles: busy until the test says so. */
  until?: Promise<unknown>;
  /** The turn's usage as `usageMetadata` carries it. Default 100 in (30 cached), 20 out. */
  usage?: Usage;
}

/** A turn's token counts, as the Gemini API names them. */
export interface Usage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** A reply as a test writes it: a bare string is text. */
export type ReplyLike = string | Reply;

/** Replies in order, or a function of the request (undefined: unscripted, answered with the fallback). */
export type Script = ReplyLike[] | ((request: GeminiRequest, index: number) => ReplyLike | undefined | Promise<ReplyLike | undefined>);

/** A part of a content. */
export type Part = { text?: string; functionCall?: { name: string; args?: unknown }; functionResponse?: { name: string; response?: unknown }; [key: string]: unknown };

/** A model turn as it came in. */
export interface GeminiRequest {
  url: string;
  model: string;
  body: { contents: Array<{ role: string; parts: Part[] }>; tools?: unknown[]; [key: string]: unknown };
  receivedAt: number;
}

/** The running server. */
export interface GeminiApi {
  /** `http://127.0.0.1:<port>`: `GOOGLE_GEMINI_BASE_URL`. */
  url: string;
  requests: GeminiRequest[];
  side: Array<{ url: string; body: string }>;
  other: Array<{ method: string; url: string; body: string }>;
  unscripted: GeminiRequest[];
  /** What no test scripted, one line each: unscripted turns and `other` traffic. */
  unexpected(): string[];
  push(...replies: ReplyLike[]): void;
  /** Resolves with the `n`th model turn (1-based) once it has arrived. */
  waitForRequest(n: number, timeoutMs?: number): Promise<GeminiRequest>;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 on a free port. */
export async function startGeminiApi(options: { script?: Script; fallback?: ReplyLike } = {}): Promise<GeminiApi> {
  const queue: ReplyLike[] = Array.isArray(options.script) ? [...options.script] : [];
  const scriptFn = typeof options.script === 'function' ? options.script : undefined;
  const waiters: Array<() => void> = [];
  const sockets = new Set<import('node:net').Socket>();
  const api: GeminiApi = {
    url: '',
    requests: [],
    side: [],
    other: [],
    unscripted: [],
    unexpected: () => [
      ...api.unscripted.map((r) => `unscripted turn #${api.requests.indexOf(r) + 1}: ${JSON.stringify(lastUserText(r) || lastParts(r)).slice(0, 200)}`),
      ...api.other.map((o) => `other request: ${o.method} ${o.url}`),
    ],
    push: (...replies) => void queue.push(...replies),
    waitForRequest: (n, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`gemini-api: timed out after ${timeoutMs} ms waiting for request #${n}`)), timeoutMs);
        const check = (): void => {
          const found = api.requests[n - 1];
          if (!found) return void waiters.push(check);
          clearTimeout(timer);
          resolve(found);
        };
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = req.url ?? '';
    const route = /^\/v1beta\/models\/([^:/?]+):(streamGenerateContent|generateContent|countTokens)\b/.exec(url);
    if (req.method !== 'POST' || !route) {
      api.other.push({ method: req.method ?? '', url, body: raw.slice(0, 2000) });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `test server: no route for ${req.method} ${url}`, status: 'NOT_FOUND' } }));
      return;
    }
    const [, model, method] = route;
    if (method === 'countTokens') {
      api.side.push({ url, body: raw.slice(0, 2000) });
      return json(res, { totalTokens: 10 });
    }
    if (method === 'generateContent') {
      // A side question of the CLI's own (whose turn is next, a loop check): answered "the user's".
      api.side.push({ url, body: raw.slice(0, 2000) });
      return json(res, { candidates: [{ content: { role: 'model', parts: [{ text: '{"reasoning": "scripted", "next_speaker": "user"}' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 } });
    }
    const request: GeminiRequest = { url, model: model!, body: JSON.parse(raw) as GeminiRequest['body'], receivedAt: Date.now() };
    const index = api.requests.push(request) - 1;
    for (const wake of waiters.splice(0)) wake();
    let next = scriptFn ? await scriptFn(request, index) : queue.shift();
    if (next === undefined) {
      api.unscripted.push(request);
      next = options.fallback ?? 'Done.';
    }
    const reply: Reply = typeof next === 'string' ? { text: next } : next;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (reply.until) await Promise.race([reply.until, new Promise((resolve) => res.on('close', resolve))]);
    if (res.destroyed) return;
    const parts: Part[] = [...(reply.text ? [{ text: reply.text }] : []), ...(reply.call ? [{ functionCall: reply.call }] : [])];
    const usage = reply.usage ?? { promptTokenCount: 100, candidatesTokenCount: 20, cachedContentTokenCount: 30 };
    const usageMetadata = { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0) };
    res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: model })}\n\n`);
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}

/** A reply that calls one tool (`run_shell_command` with `{command}`, for one). */
export function call(name: string, args: Record<string, unknown>, extra: Omit<Reply, 'call'> = {}): Reply {
  return { call: { name, args }, ...extra };
}

/** A reply that runs a shell command through Gemini's `run_shell_command` tool. */
export function shell(command: string, extra: Omit<Reply, 'call'> = {}): Reply {
  return call('run_shell_command', { command }, extra);
}

/**
 * The prompt the request carries: the text of its last user content ('' when it is a tool's answer),
 * less the `<session_context>` part Gemini puts before the first prompt of a session.
 */
export function lastUserText(request: GeminiRequest): string {
  const last = request.body.contents.at(-1);
  if (!last || last.role !== 'user') return '';
  return last.parts.filter((part) => typeof part.text === 'string' && !part.text.startsWith('<session_context>')).map((part) => part.text).join('');
}

/** The parts of the request's last content. */
export function lastParts(request: GeminiRequest): Part[] {
  return request.body.contents.at(-1)?.parts ?? [];
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
