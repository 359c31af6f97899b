/**
 * What the Codex TUI (0.171.0) shows, read from a pane's plain-text screen: its folder-trust
 * question, an approval request, a working turn, and the input line with its draft. The strings are
 * pinned against the real program in test/integration/codex-vs-real.test.ts.
 */
import { squash } from '../prompts.js';

/** What a screen shows, most specific first. */
export type CodexView = 'trust' | 'permission' | 'working' | 'input-ready' | 'unknown';
// A `request_user_input` question has no screen of its own here: 0.171.0 offers the tool only in Plan
// mode and answers it in Default mode with "request_user_input is unavailable in Default mode" (FACTS.md).

/** The first run in an untrusted folder: "Trust this folder?" with `1. Trust and continue`. */
const TRUST = /Trust this folder\?|Trust and continue/;
/** An approval request: "Would you like to run the following command?" … "Press enter to confirm or esc to cancel". */
const PERMISSION = /Would you like to (?:run the following command|make the following edits|allow)|Press enter to confirm or esc to cancel/;
/** A turn running: `• Working (0s • esc to interrupt)`. */
const WORKING = /esc to interrupt/;
/** The input line's mark. */
const INPUT = /^› ?(.*)$/;
/** What the input line shows while empty (dimmed on a terminal; plain text here). */
export const PLACEHOLDERS = ['Ask Codex to do anything', 'Ask a follow-up question'];

/** What the screen shows. */
export function classifyScreen(screen: string): CodexView {
  if (TRUST.test(screen)) return 'trust';
  if (PERMISSION.test(screen)) return 'permission';
  if (WORKING.test(screen)) return 'working';
  return inputLine(screen.split('\n')) >= 0 ? 'input-ready' : 'unknown';
}

/** The text in the input line ('' when empty or showing its placeholder); lines of a draft joined by newlines. */
export function draftText(screen: string): string {
  const lines = screen.split('\n');
  const at = inputLine(lines);
  if (at < 0) return '';
  const draft = [INPUT.exec(lines[at]!)![1]!.trimEnd()];
  // A draft of several lines continues below, indented two spaces, up to the blank line above the footer.
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === '') break;
    draft.push(line.replace(/^ {2}/, '').trimEnd());
  }
  const text = draft.join('\n').trim();
  return PLACEHOLDERS.includes(text) ? '' : text;
}

/** The line of the input box: the last line starting `›` (earlier ones are prompts in the history). */
function inputLine(lines: string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) if (INPUT.test(lines[i]!)) return i;
  return -1;
}

/** True when a draft on screen is `text` (the screen wraps lines; a long paste shows as `[Pasted Content N chars]`). */
export function sameDraft(draft: string, text: string): boolean {
  const folded = /^\[Pasted Content (\d+) chars\]$/.exec(draft.trim());
  if (folded) return Number(folded[1]) === Array.from(text).length || Number(folded[1]) === text.length;
  const a = squash(draft);
  const b = squash(text);
  return a === b || (b.length > 200 && a.length >= 50 && b.startsWith(a.slice(0, 100)));
}
