/**
 * Reads a Claude Code pane's screen (tmux capture-pane text). The screen is read only to know that
 * the agent accepts input and to refuse typing while a dialog is open; a prompt is never confirmed
 * here. Every pattern comes from patterns.ts. When unsure it answers `unknown`, and a caller types
 * nothing into an unknown screen.
 */
import { claudeCodePatterns, type ClaudeCodePatterns } from './patterns.js';
import { squash } from '../prompts.js';

/** What a Claude Code screen shows. */
export type ScreenState = 'input-ready' | 'working' | 'permission' | 'question' | 'trust' | 'unknown';

/**
 * Classifies a capture. A dialog is named by the lowest of its markers on screen (an open dialog
 * replaces the input box, and nothing is drawn below it); otherwise the input box decides, `working`
 * when the spinner stands above it.
 */
export function classifyScreen(screen: string, patterns: ClaudeCodePatterns = claudeCodePatterns): ScreenState {
  const s = patterns.screen;
  const lines = screenLines(screen, s);
  const box = inputBox(lines, s);
  // Markers above a live input box are scrollback (an agent quoting a dialog), never an open dialog.
  const from = box ? box.top + 1 : 0;
  const dialog = openDialog(lines, from, s);
  if (dialog) return dialog;
  if (box) {
    const above = lines.slice(Math.max(0, box.top - s.spinnerLookback), box.top);
    const busy = above.some((line) => s.spinner.test(line)) || lines.slice(box.bottom).some((l) => s.interruptHint.test(l));
    return busy ? 'working' : 'input-ready';
  }
  return lines.slice(-s.spinnerLookback).some((line) => s.spinner.test(line)) ? 'working' : 'unknown';
}

/**
 * The text typed into the input box and not submitted: '' when the box is empty, shows only a
 * placeholder hint, or is not on screen (a dialog is open, or the screen is not Claude Code's).
 * Lines of a multi-line draft are joined with `\n`; so are the rows of a line the terminal wrapped,
 * since a capture cannot tell them apart. Callers ask whether it is empty, not for the exact text.
 */
export function draftText(screen: string, patterns: ClaudeCodePatterns = claudeCodePatterns): string {
  const s = patterns.screen;
  const lines = screenLines(screen, s);
  const box = inputBox(lines, s);
  if (!box || openDialog(lines, box.top + 1, s)) return '';
  const first = s.input.exec(lines[box.prompt] ?? '')?.[1] ?? '';
  // Continuation lines are indented to stand under the text after `❯ `.
  const rest = lines.slice(box.prompt + 1, box.bottom).map((line) => line.replace(/^ {1,2}/, ''));
  const draft = [first, ...rest].join('\n').trimEnd();
  return s.placeholders.some((hint) => hint.test(draft.trim())) ? '' : draft;
}

/**
 * True when the input box is drawn and the footer under it has had its second render (the
 * patterns' `readyFooter`), after which Claude Code takes keys; false while no box is open.
 */
export function footerReady(screen: string, patterns: ClaudeCodePatterns = claudeCodePatterns): boolean {
  const s = patterns.screen;
  const lines = screenLines(screen, s);
  const box = inputBox(lines, s);
  if (!box || !s.readyFooter || openDialog(lines, box.top + 1, s)) return false;
  return lines.slice(box.bottom + 1).some((line) => s.readyFooter!.test(line));
}

/**
 * The tool an open permission dialog names in its header (the patterns' `permissionTools`), read
 * between the dialog's rule and its question; undefined when no permission dialog is open or its
 * header names no tool known here.
 */
export function permissionTool(screen: string, patterns: ClaudeCodePatterns = claudeCodePatterns): string | undefined {
  if (classifyScreen(screen, patterns) !== 'permission') return undefined;
  const s = patterns.screen;
  const lines = screenLines(screen, s);
  let ask = lines.length - 1;
  while (ask >= 0 && !s.permissionAsk.test(lines[ask] ?? '')) ask--;
  for (let i = ask - 1; i >= 0 && !s.rule.test(lines[i] ?? ''); i--) {
    const named = (s.permissionTools ?? []).find(([header]) => header.test(lines[i] ?? ''));
    if (named) return named[1];
  }
  return undefined;
}

/**
 * True when the screen shows `text` sent and held, not yet in the transcript: echoed above the input
 * box (a `❯` line and the lines under it) with the patterns' `held` mark there too (a prompt hook
 * running, the text queued). `text` as recorded (asRecorded); compared whitespace aside.
 */
export function holdsPrompt(screen: string, text: string, patterns: ClaudeCodePatterns = claudeCodePatterns): boolean {
  const s = patterns.screen;
  if (!s.held) return false;
  const lines = screenLines(screen, s);
  const box = inputBox(lines, s);
  // The text still in the box was never sent: only an empty box (or its queue hint) leaves it held.
  if (box && draftText(screen, patterns) !== '') return false;
  const above = lines.slice(0, box?.top ?? lines.length);
  if (!above.some((line) => s.held!.test(line))) return false;
  // The last echo above the box is the text: the prompt the program took last.
  let last: string | undefined;
  for (let i = 0; i < above.length; i++) {
    const first = s.input.exec(above[i] ?? '');
    if (!first || s.menuOption.test(above[i] ?? '')) continue;
    // The echo's wrapped and further lines stand indented under its text, up to the next mark.
    const echo = [first[1] ?? ''];
    for (let j = i + 1; j < above.length && /^ {2}[^\s❯⎿]/.test(above[j] ?? '') && !s.spinner.test(above[j] ?? ''); j++) echo.push(above[j]!);
    last = echo.join(' ');
  }
  return last !== undefined && squash(last) === squash(text);
}

/** Where the input box is: its top rule, its `❯` line and its bottom rule (line indexes). */
interface Box {
  top: number;
  prompt: number;
  bottom: number;
}

/** The capture as lines: escape sequences removed, trailing spaces and trailing blank lines dropped. */
function screenLines(screen: string, s: ClaudeCodePatterns['screen']): string[] {
  const lines = screen.replace(s.ansi, '').replace(/\r/g, '').split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The lowest input box on screen: a `❯` line right under a rule, closed by a rule within
 * maxDraftLines. A highlighted menu option (`❯ 1. Yes`) under a rule is a dialog, not a box.
 */
function inputBox(lines: string[], s: ClaudeCodePatterns['screen']): Box | undefined {
  for (let prompt = lines.length - 1; prompt > 0; prompt--) {
    const line = lines[prompt] ?? '';
    if (!s.input.test(line) || s.menuOption.test(line) || !s.rule.test(lines[prompt - 1] ?? '')) continue;
    const limit = Math.min(lines.length, prompt + 1 + s.maxDraftLines);
    for (let bottom = prompt + 1; bottom < limit; bottom++) {
      if (s.rule.test(lines[bottom] ?? '')) return { top: prompt - 1, prompt, bottom };
    }
  }
  return undefined;
}

/** The dialog whose marker stands lowest at or below line `from`, if any. */
function openDialog(lines: string[], from: number, s: ClaudeCodePatterns['screen']): ScreenState | undefined {
  let found: ScreenState | undefined;
  let at = -1;
  let asked = false;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i] ?? '';
    // A permission prompt counts from its numbered Yes under its question, never from either alone.
    if (s.permissionAsk.test(line)) asked = true;
    const kind: ScreenState | undefined = s.trust.some((re) => re.test(line))
      ? 'trust'
      : s.question.some((re) => re.test(line))
        ? 'question'
        : asked && s.permissionOption.test(line)
          ? 'permission'
          : undefined;
    if (kind && i >= at) [found, at] = [kind, i];
  }
  return found;
}
