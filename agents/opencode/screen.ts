/**
 * What the OpenCode TUI (1.18.33) shows, read from a pane's plain-text screen: a permission request,
 * a working turn, and the input box with its draft. The strings are pinned against the real program
 * in test/e2e-opencode/opencode-vs-real.test.ts.
 *
 * The input box is a left bar `┃` over a bottom edge `╹▀▀▀…` as wide as the box:
 *
 *     ┃
 *     ┃  <draft, or the placeholder `Ask anything… "<an example>"` on the start screen>
 *     ┃
 *     ┃  Build · <model> <provider>
 *     ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
 *
 * Earlier prompts in the history are drawn with the same bar but no edge below, and a sidebar may
 * share the box's lines to its right, so the draft is read between the bar and the edge's width.
 */
import { squash } from '../prompts.js';

/** What a screen shows, most specific first. */
export type OpencodeView = 'permission' | 'working' | 'input-ready' | 'unknown';

/** A permission request: `△ Permission required` … `Allow once   Allow always   Reject`. */
const PERMISSION = /Permission required|Allow once\s+Allow always\s+Reject/;
/** A turn running: `⬝⬝⬝⬝■⬝⬝⬝  esc interrupt` in the footer. */
const WORKING = /esc interrupt/;
/** The input box's bottom edge. */
const EDGE = /╹(▀+)/;
/** What the empty box shows on the start screen (dimmed on a terminal; plain text here). */
export const PLACEHOLDER = 'Ask anything…';

/** What the screen shows. */
export function classifyScreen(screen: string): OpencodeView {
  if (PERMISSION.test(screen)) return 'permission';
  if (WORKING.test(screen)) return 'working';
  return inputBox(screen.split('\n')) ? 'input-ready' : 'unknown';
}

/** The text in the input box ('' when empty or showing its placeholder); its lines joined by newlines. */
export function draftText(screen: string): string {
  const lines = screen.split('\n');
  const box = inputBox(lines);
  if (!box) return '';
  const draft: string[] = [];
  // Up from the agent line above the edge, while the bar goes on.
  for (let i = box.edge - 2; i >= 0; i--) {
    const line = lines[i]!;
    if (line[box.column] !== '┃') break;
    draft.unshift(line.slice(box.column + 1, box.column + box.width).trim());
  }
  const text = draft.join('\n').trim();
  return text.startsWith(PLACEHOLDER) ? '' : text;
}

/**
 * A paste of three lines or more, or of more than 150 characters, shown folded in the box:
 * `[Pasted ~N lines]`, N the paste's lines.
 */
const FOLDED = /^\[Pasted ~(\d+) lines?\]$/;

/** True when a draft on screen is `text` (the box wraps long lines; a paste may show folded or shortened). */
export function sameDraft(draft: string, text: string): boolean {
  const folded = FOLDED.exec(draft.trim());
  if (folded) return Number(folded[1]) === text.split(/\r\n?|\n/).length;
  const a = squash(draft);
  const b = squash(text);
  return a === b || a.replace(/ /g, '') === b.replace(/ /g, '') || (b.length > 200 && a.length >= 50 && b.startsWith(a.slice(0, 100)));
}


/** The last input box: its edge's line, the bar's column and the box's width. */
function inputBox(lines: string[]): { edge: number; column: number; width: number } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = EDGE.exec(lines[i]!);
    if (found) return { edge: i, column: found.index, width: found[1]!.length + 1 };
  }
  return undefined;
}
