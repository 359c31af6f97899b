/**
 * What the scripted stand-ins for a model API share (responses-api.ts for Codex, gemini-api.ts for
 * the Gemini CLI, chat-api.ts for OpenCode): an HTTP server on 127.0.0.1 that answers each model turn
 * with the script's next reply (a list, or a function of the request), keeps what it was asked, and
 * says what no test scripted. Each API brings how it routes a request and how it streams a reply.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HANG_MS } from './wait.js';

/** Replies in order, or a function of the request (undefined: unscripted, answered with the fallback). */
export type ScriptOf<Req, R> = R[] | ((request: Req, index: number) => R | undefined | Promise<R | undefined>);

/** What a request is to the API: a model turn the script answers, a side request answered apart, or neither (`other`). */
export type Routed<Req> = { turn: Req } | { side: Req | undefined; answer(res: ServerResponse): void | Promise<void> } | undefined;

/** The running server. */
export interface ScriptedApi<Req, R> {
  /** The server's root, `http://127.0.0.1:<port>`, with the API's base path. */
  url: string;
  port: number;
  /** Every model turn requested, in order. */
  requests: Req[];
  /** Side requests, answered without the script. */
  side: Req[];
  other: Array<{ method: string; url: string; body: string }>;
  unscripted: Req[];
  /** What no test scripted, one line each: unscripted turns and `other` traffic. */
  unexpected(): string[];
  push(...replies: R[]): void;
  /** Resolves with the `n`th model turn (1-based) once it has arrived. */
  waitForRequest(n: number, timeoutMs?: number): Promise<Req>;
  close(): Promise<void>;
}

/** How one API reads requests and writes replies. */
export interface ApiShape<Req, R> {
  /** For messages (`responses-api`). */
  name: string;
  /** Appended to the server's root in `url` (`/v1`). */
  basePath?: string;
  route(req: IncomingMessage, raw: string): Routed<Req>;
  /** Streams `reply` to a model turn. */
  answer(res: ServerResponse, reply: R, request: Req): Promise<void>;
  /** What an unscripted turn asked, for `unexpected()`. */
  describe(request: Req): string;
}

/** Starts the server on 127.0.0.1 on a free port. */
export async function startScriptedApi<Req, R>(shape: ApiShape<Req, R>, options: { script?: ScriptOf<Req, R>; fallback: R; log?: (line: string) => void }): Promise<ScriptedApi<Req, R>> {
  const queue: R[] = Array.isArray(options.script) ? [...options.script] : [];
  const scriptFn = typeof options.script === 'function' ? options.script : undefined;
  const waiters: Array<() => void> = [];
  const sockets = new Set<import('node:net').Socket>();
  const api: ScriptedApi<Req, R> = {
    url: '',
    port: 0,
    requests: [],
    side: [],
    other: [],
    unscripted: [],
    unexpected: () => [
      ...api.unscripted.map((r) => `unscripted turn #${api.requests.indexOf(r) + 1}: ${shape.describe(r).slice(0, 200)}`),
      ...api.other.map((o) => `other request: ${o.method} ${o.url}`),
    ],
    push: (...replies) => void queue.push(...replies),
    // The limit is a hang guard, not an assertion (test/helpers/wait.ts).
    waitForRequest: (n, timeoutMs = HANG_MS) =>
      new Promise((resolve, reject) => {
        timeoutMs = Math.max(timeoutMs, HANG_MS);
        const timer = setTimeout(() => reject(new Error(`${shape.name}: timed out after ${timeoutMs} ms waiting for request #${n}`)), timeoutMs);
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
    options.log?.(`${req.method} ${req.url} ${raw.length}B`);
    const routed = shape.route(req, raw);
    if (!routed) {
      api.other.push({ method: req.method ?? '', url: req.url ?? '', body: raw.slice(0, 2000) });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `test server: no route for ${req.method} ${req.url}`, status: 'NOT_FOUND' } }));
      return;
    }
    if (!('turn' in routed)) {
      if (routed.side !== undefined) api.side.push(routed.side);
      return routed.answer(res);
    }
    const request = routed.turn;
    const index = api.requests.push(request) - 1;
    for (const wake of waiters.splice(0)) wake();
    let next = scriptFn ? await scriptFn(request, index) : queue.shift();
    if (next === undefined) {
      api.unscripted.push(request);
      next = options.fallback;
    }
    await shape.answer(res, next, request);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.port = (server.address() as AddressInfo).port;
  api.url = `http://127.0.0.1:${api.port}${shape.basePath ?? ''}`;
  return api;
}
