/**
 * What the Gemini CLI (0.61.0) shows, read from a pane's plain-text screen: its folder-trust
 * question, a tool's approval request, a working turn, and the input box with its draft. The strings
 * are pinned against the real program in test/e2e-gemini/gemini-vs-real.test.ts.
 */
import { squash } from '../prompts.js';

/** What a screen shows, most specific first. */
export type GeminiView = 'trust' | 'permission' | 'question' | 'working' | 'input-ready' | 'unknown';

/** The first run in an untrusted folder: "Do you trust the files in this folder?" with `1. Trust folder (<name>)`. */
const TRUST = /Do you trust the files in this folder\?|Trust folder \(/;
/**
 * A tool's approval request, boxed below the history with the input box hidden: `? Shell  <command>`,
 * "Allow execution of [Shell]?", `● 1. Allow once`, `2. Allow for this session`, `3. No, suggest
 * changes (esc)`; an edit asks "Apply this change?" with the same options.
 */
const PERMISSION = /Allow execution of|Apply this change\?|\d\. Allow once|No, suggest changes \(esc\)/;
/**
 * The model's question (its `ask_user` tool), boxed with the input box hidden: `Answer Questions`,
 * the question, `> Enter your response` (or numbered choices), `Enter to submit · Esc to cancel`.
 * Text typed now answers it.
 */
const QUESTION = /Answer Questions|Enter to submit · Esc to cancel/;
/** Below the three queued texts it shows, how many more it holds. */
const MORE_QUEUED = /^ {4}\.\.\. \(\+\d+ more\)\s*$/m;
/** The title above what Gemini holds queued, each below it indented four spaces (at most three shown). */
const QUEUED = /^ {2}Queued \(press ↑ to edit\):\s*$/;
/** A turn running: `⠙ Thinking... (esc to cancel, 1s)`. */
const WORKING = /esc to cancel/;
/**
 * A line of the input box: ` > ` and its text (` * ` in yolo mode); lines of a longer draft go on
 * indented three spaces. The approval mode's line (`YOLO Ctrl+Y`, `plan Shift+Tab to manual`) and a
 * blank line may come between the rule and the box.
 */
const INPUT = /^ [>*] ?(.*)$/;
/** The rule above the input box. */
const RULE = /^─{20,}\s*$/;
/** What the input box shows while empty (dimmed on a terminal; plain text here). */
export const PLACEHOLDER = 'Type your message or @path/to/file';
/** The command an approval request names: `? Shell  <command>` in its box. */
const ASKED = /^[│ ]*\? (\S+) +(.*?)[│ ]*$/;

/** What the screen shows. */
export function classifyScreen(screen: string): GeminiView {
  const lines = screen.split('\n');
  if (TRUST.test(screen)) return 'trust';
  // A dialog hides the input box: one is open only below the last input box on screen.
  const box = inputLine(lines);
  if (lastIndex(lines, (line) => PERMISSION.test(line)) > box) return 'permission';
  if (lastIndex(lines, (line) => QUESTION.test(line)) > box) return 'question';
  if (WORKING.test(screen)) return 'working';
  return box >= 0 ? 'input-ready' : 'unknown';
}

/** The tool and what it would do, as an approval request names them (`Shell`, `touch x`); undefined when none shows. */
export function askedFor(screen: string): { tool: string; what: string } | undefined {
  const lines = screen.split('\n');
  const at = lastIndex(lines, (line) => ASKED.test(line));
  if (at < 0) return undefined;
  const [, tool, what] = ASKED.exec(lines[at]!)!;
  return { tool: tool!, what: what!.trim() };
}

/** The question the model's question box asks ('' when none shows): its lines between the title and the answer's line. */
export function questionOf(screen: string): string {
  const lines = screen.split('\n').map((line) => line.replace(/^[│ ]+|[│ ]+$/g, ''));
  const at = lastIndex(lines, (line) => line === 'Answer Questions');
  if (at < 0) return '';
  const asked: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (/^(> |● |\d+\. )|^Enter to submit/.test(line)) break;
    // With several questions, a bar of tabs above them (`← □ Colour │ □ Go on │ ≡ Review →`).
    if (line && !/^←.*→$/.test(line)) asked.push(line);
  }
  return asked.join(' ');
}

/**
 * What Gemini holds queued, to submit by itself once its start or its turn ends: each shown on one
 * line (whitespace runs as one space), cut at the screen's width.
 */
export function queuedOf(screen: string): string[] {
  const lines = screen.split('\n');
  const at = lastIndex(lines, (line) => QUEUED.test(line));
  if (at < 0) return [];
  const queued: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!/^ {4}\S/.test(line) || /^ {4}\.\.\. \(\+\d+ more\)$/.test(line)) break;
    queued.push(line.trim());
  }
  return queued;
}

/**
 * True when `text` is among what Gemini shows queued (a preview cut at the width matches the text's
 * start), or may be: past three it shows `... (+N more)`, and a text not among the three shown may be
 * one of those.
 */
export function isQueued(screen: string, text: string): boolean {
  const whole = squash(text);
  if (MORE_QUEUED.test(screen)) return true;
  return queuedOf(screen).some((shown) => {
    const preview = squash(shown.replace(/…$/, ''));
    return preview !== '' && (preview === whole || (shown.endsWith('…') && whole.startsWith(preview)));
  });
}

/** The text in the input box ('' when empty or showing its placeholder); lines of a draft joined by newlines. */
export function draftText(screen: string): string {
  const lines = screen.split('\n');
  const at = inputLine(lines);
  if (at < 0) return '';
  const draft = [INPUT.exec(lines[at]!)![1]!.trimEnd()];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('   ') || line.trim() === '') break;
    draft.push(line.slice(3).trimEnd());
  }
  const text = draft.join('\n').trim();
  return text === PLACEHOLDER ? '' : text;
}

/**
 * The line of the input box: the first ` > ` line after the last rule (earlier ` > ` lines are
 * prompts in the history); -1 while no box shows (a dialog is open, or it is still starting).
 */
function inputLine(lines: string[]): number {
  const rule = lastIndex(lines, (line) => RULE.test(line));
  if (rule < 0) return -1;
  for (let i = rule + 1; i < Math.min(lines.length, rule + 5); i++) if (INPUT.test(lines[i]!)) return i;
  return -1;
}

/**
 * True when a draft on screen is `text`: the screen wraps lines, a paste may show folded as
 * `[Pasted Text: N lines]`, and a box of more than ten lines shows its last ten (the cursor's end).
 */
export function sameDraft(draft: string, text: string): boolean {
  const folded = /^\[Pasted Text: (\d+) lines?\]$/.exec(draft.trim());
  if (folded) return Number(folded[1]) === text.split(/\r\n?|\n/).length;
  const a = squash(draft);
  const b = squash(text);
  return a === b || (a.length >= 40 && b.endsWith(a));
}


function lastIndex(lines: string[], test: (line: string) => boolean): number {
  for (let i = lines.length - 1; i >= 0; i--) if (test(lines[i]!)) return i;
  return -1;
}
