/**
 * Claude Code transcript records, one JSON object a line: reading them from the end of the file,
 * and what each means for a prompt (offered) and for the agent's state (kindOf). transcript.ts
 * builds its readings from these; every format detail it depends on comes from patterns.ts.
 */
import { awayFromMenus } from '../prompts.js';
import { openPlainFile } from '../../core/index.js';
import type { ClaudeCodePatterns } from './patterns.js';

/** Bytes read at a time from the end of a transcript. */
const CHUNK = 64 * 1024;

/** What a record means for the agent's state. */
export type Kind = 'prompt' | 'command' | 'interrupt' | 'results' | 'assistant' | 'end' | 'compact' | 'local-output' | 'skip';

/** The fields of a transcript record flume reads; anything else is ignored. */
export interface Rec {
  type?: string;
  subtype?: string;
  isSidechain?: boolean;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  isApiErrorMessage?: boolean;
  timestamp?: unknown;
  uuid?: string;
  /** The record this one follows (null for a session's first); of two prompts with one parent, the earlier is a dead branch. */
  parentUuid?: string | null;
  operation?: string;
  content?: unknown;
  compactMetadata?: { trigger?: string };
  attachment?: { type?: string; prompt?: unknown };
  message?: { id?: string; content?: unknown; stop_reason?: string | null };
}

/** A content block of a message. */
export interface Block {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: { questions?: Array<{ question?: string }> };
  tool_use_id?: string;
}

/**
 * The file's lines, last first, read in CHUNK-sized pieces from the end. Splitting at newline bytes
 * is safe in UTF-8 (0x0a is never part of a multi-byte character); a line cut by a chunk boundary is
 * kept in pieces until its start is read, so a huge line costs its size once.
 */
export async function* linesFromEnd(path: string): AsyncGenerator<string> {
  // Not a plain file (a link, a FIFO put there): read as none, never followed or waited on.
  const file = await openPlainFile(path);
  if (!file) throw Object.assign(new Error(`not a plain file: ${path}`), { code: 'ENOENT' });
  try {
    let pos = (await file.stat()).size;
    let tail: Buffer[] = [];
    while (pos > 0) {
      const size = Math.min(CHUNK, pos);
      pos -= size;
      const chunk = Buffer.allocUnsafe(size);
      await file.read(chunk, 0, size, pos);
      let end = size;
      for (let nl = chunk.lastIndexOf(10, end - 1); nl !== -1; nl = end > 0 ? chunk.lastIndexOf(10, end - 1) : -1) {
        const piece = chunk.subarray(nl + 1, end);
        const line = tail.length > 0 ? Buffer.concat([piece, ...tail]) : piece;
        tail = [];
        if (line.length > 0) yield line.toString('utf8');
        end = nl;
      }
      if (end > 0) tail.unshift(chunk.subarray(0, end));
    }
    const first = Buffer.concat(tail);
    if (first.length > 0) yield first.toString('utf8');
  } finally {
    await file.close();
  }
}

/** One line as a record; undefined for a line still being written, or not JSON at all. */
export function parse(line: string): Rec | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Rec) : undefined;
  } catch {
    return undefined;
  }
}

/** What a record means for the agent's state. */
export function kindOf(rec: Rec, t: ClaudeCodePatterns['transcript']): Kind {
  if (rec.type === 'assistant') return 'assistant';
  if (rec.type === 'system') {
    if (t.turnEnd.includes(rec.subtype ?? '')) return 'end';
    return rec.subtype === 'compact_boundary' ? 'compact' : 'skip';
  }
  if (rec.type !== 'user' || rec.isMeta === true || rec.isCompactSummary === true) return 'skip';
  const content = rec.message?.content;
  if (blocks(content).some((block) => block.type === 'tool_result')) return 'results';
  const text = texts(content).join('\n');
  if (t.interrupted.test(text.trim())) return 'interrupt';
  if (t.localOutput.test(text)) return 'local-output';
  return t.commandEcho.test(text) ? 'command' : 'prompt';
}

/** The texts a record offers as a prompt, and whether it takes one back. */
export function offered(rec: Rec, p: ClaudeCodePatterns): { kind: 'prompt' | 'enqueue' | 'revoke'; texts: string[] } | undefined {
  if (rec.type === 'user' && rec.isMeta !== true && rec.isCompactSummary !== true) {
    const parts = texts(rec.message?.content);
    return { kind: 'prompt', texts: parts.length > 1 ? [...parts, parts.join('\n')] : parts };
  }
  if (rec.type === 'attachment' && rec.attachment?.type === 'queued_command') {
    return { kind: 'prompt', texts: [texts(rec.attachment.prompt).join('\n')] };
  }
  if (rec.type === 'queue-operation' && rec.operation === 'enqueue') return { kind: 'enqueue', texts: texts(rec.content) };
  if (rec.type === 'queue-operation' && p.transcript.queueRevoke.includes(rec.operation ?? '')) {
    return { kind: 'revoke', texts: texts(rec.content) };
  }
  return undefined;
}

/**
 * Equal after normalising. A long paste is compared with its tags taken off and all whitespace
 * ignored: Claude Code adds line breaks around the block, and which of them were typed is not kept.
 */
export function sameText(offer: string, want: string, p: ClaudeCodePatterns): boolean {
  const have = normalize(offer);
  if (have === want) return true;
  if (!have.includes('<pasted_content')) return false;
  const unwrapped = have.replace(p.transcript.pasteBlock, (_whole, body: string) => body);
  return squash(unwrapped) === squash(want);
}

/**
 * The text as Claude Code records it, which is what the driver sends: each TAB made what the agent
 * makes of one (patterns `transcript.tab`), so a prompt taken once is found, never sent again; and
 * a space before a first character that would make it a command (`transcript.keyStart`), and one
 * after a last word that opens a menu (agents/prompts.ts awayFromMenus).
 */
export function asRecorded(text: string, p: ClaudeCodePatterns): string {
  const tabbed = text.replace(/\t/g, p.transcript.tab);
  return awayFromMenus(p.transcript.keyStart.test(tabbed) ? ` ${tabbed}` : tabbed);
}

/** CRLF to LF, trailing spaces off every line, blank lines off both ends. */
export function normalize(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+|\n+$/g, '');
}

function squash(text: string): string {
  return text.replace(/\s+/g, '');
}

/** A string, or the text blocks of a content array (tool results and images are not text). */
export function texts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  return blocks(content).flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []));
}

/** The blocks of a content array (none for a plain string). */
export function blocks(content: unknown): Block[] {
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === 'object' && b !== null) : [];
}
