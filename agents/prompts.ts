/**
 * How the drivers of a program with a terminal UI tell a prompt in their agent's record from the text
 * flume sent: the same words, whitespace aside (a screen wraps lines, a program trims a prompt and may
 * make a TAB spaces), recorded at or after the sending.
 */
import { flumeError, type PromptState } from '../core/index.js';

/**
 * A record may stamp a prompt this long before the sending's `since` (a stamp rounded down). The
 * program and flume read one clock (a container shares its host's; another host runs its own flume),
 * so no more: a minute let a tell match the same words taken a minute before, and read `taken` at once.
 */
const CLOCK_SLACK_MS = 1000;

/** Whitespace runs as one space, trimmed: how a prompt is compared across a screen and a record. */
export function squash(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/**
 * Was `text` taken as a prompt? `taken` once one of the record's `prompts` is it (`same`: the same
 * words, by default) at or after `since`, less a second of slack; `not-yet` while none is;
 * `unknown` while there is no record to read (undefined).
 */
export function promptIn(prompts: ReadonlyArray<{ text: string; at: string }> | undefined, text: string, since?: string, same: (said: string, want: string) => boolean = (said, want) => squash(said) === want): PromptState {
  if (!prompts) return 'unknown';
  const want = squash(text);
  const from = since === undefined ? -Infinity : Date.parse(since) - CLOCK_SLACK_MS;
  return prompts.some((p) => Date.parse(p.at) >= from && same(p.text, want)) ? 'taken' : 'not-yet';
}

/**
 * A last word that opens a program's menu where the cursor stands (`@file`, `$skill`, `/command`,
 * `#…`): Enter there picks from the menu (Codex 0.171.0 put `$imagegen` in place of a tell `@`)
 * instead of submitting. A space after it closes the menu; the programs trim it from the prompt.
 */
const MENU_WORD = /(^|\s)[@$/#]\S*$/;

/** `text` with a space after a last word that opens a menu ({@link MENU_WORD}). */
export function awayFromMenus(text: string): string {
  return MENU_WORD.test(text) ? `${text} ` : text;
}

/**
 * The `refuse` of a program that reads a text starting with `/` as its own command past any space
 * or invisible character before it, pasted or typed (Claude Code and the Gemini CLI: ` /init …` ran `/init`): BAD_TEXT,
 * variant `command`. `agent` names the program in the error's words.
 */
export function commandsRefused(agent: string): (text: string) => Error | undefined {
  return (text) => (COMMAND_START.test(text) ? flumeError('BAD_TEXT', { start: '`/`', agent }, { variant: 'command', details: { start: '/' } }) : undefined);
}

/**
 * A `/` after nothing but spaces and characters that show as nothing (a zero-width space, a joiner,
 * a soft hyphen: Unicode's default-ignorable code points). Claude Code and the Gemini CLI read
 * `\u200b/init` as `/init` (the Gemini CLI ran it; Claude Code opened its menu).
 */
const COMMAND_START = /^[\s\p{Default_Ignorable_Code_Point}]*\//u;
