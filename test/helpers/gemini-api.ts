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
import type { ServerResponse } from 'node:http';
import { startScriptedApi, type ApiShape, type ScriptedApi, type ScriptOf } from './scripted-api.js';

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
export type Script = ScriptOf<GeminiRequest, ReplyLike>;

/** A part of a content. */
export type Part = { text?: string; functionCall?: { name: string; args?: unknown }; functionResponse?: { name: string; response?: unknown }; [key: string]: unknown };

/** A model turn as it came in. */
export interface GeminiRequest {
  url: string;
  model: string;
  body: { contents: Array<{ role: string; parts: Part[] }>; tools?: unknown[]; [key: string]: unknown };
  receivedAt: number;
}

/** The running server: its `url` is `GOOGLE_GEMINI_BASE_URL`. */
export type GeminiApi = ScriptedApi<GeminiRequest, ReplyLike>;

/** The Gemini API's requests and replies. */
const GEMINI: ApiShape<GeminiRequest, ReplyLike> = {
  name: 'gemini-api',
  route(req, raw) {
    const url = req.url ?? '';
    const route = /^\/v1beta\/models\/([^:/?]+):(streamGenerateContent|generateContent|countTokens)\b/.exec(url);
    if (req.method !== 'POST' || !route) return undefined;
    const [, model, method] = route;
    const request: GeminiRequest = { url, model: model!, body: JSON.parse(raw) as GeminiRequest['body'], receivedAt: Date.now() };
    if (method === 'countTokens') return { side: request, answer: (res) => json(res, { totalTokens: 10 }) };
    // A side question of the CLI's own (whose turn is next, a loop check): answered "the user's".
    if (method === 'generateContent') return { side: request, answer: (res) => json(res, { candidates: [{ content: { role: 'model', parts: [{ text: '{"reasoning": "scripted", "next_speaker": "user"}' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 } }) };
    return { turn: request };
  },
  async answer(res, next, request) {
    const reply: Reply = typeof next === 'string' ? { text: next } : next;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (reply.until) await Promise.race([reply.until, new Promise((resolve) => res.on('close', resolve))]);
    if (res.destroyed) return;
    const parts: Part[] = [...(reply.text ? [{ text: reply.text }] : []), ...(reply.call ? [{ functionCall: reply.call }] : [])];
    const usage = reply.usage ?? { promptTokenCount: 100, candidatesTokenCount: 20, cachedContentTokenCount: 30 };
    const usageMetadata = { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0) };
    res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: request.model })}\n\n`);
    res.end();
  },
  describe: (request) => JSON.stringify(lastUserText(request) || lastParts(request)),
};

/** Starts the server on 127.0.0.1 on a free port. */
export function startGeminiApi(options: { script?: Script; fallback?: ReplyLike } = {}): Promise<GeminiApi> {
  return startScriptedApi(GEMINI, { ...(options.script ? { script: options.script } : {}), fallback: options.fallback ?? 'Done.' });
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
