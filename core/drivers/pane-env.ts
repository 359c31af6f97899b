/**
 * How a pane host hands an agent its environment without putting a value in any process's argv
 * (argv is readable by every user in `ps`, and a tmux server keeps the argv it started with for its
 * whole life). The host writes a POSIX sh script of mode 600 in a private folder of flume's state and
 * starts `env -i /bin/sh SCRIPT`: `env -i` drops everything of the host's own (tmux's server
 * environment, a user's shell), and the script removes itself, exports exactly flume's variables and
 * `exec`s the program, so the program keeps the pane's pid and no value ever stands in an argv.
 *
 * Also here, for every host that types: text as one bracketed paste, text without paste markers, and
 * long text split into bursts.
 */
import { checkPaneSpec, type PaneSpec } from '../api/pane-host.js';

/** Names a POSIX shell can export; others (bash's `BASH_FUNC_f%%`) cannot cross a shell and are left out. */
export const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables a POSIX shell sets by itself; unset unless flume's environment names them. */
const SHELL_OWN = ['PWD', 'OLDPWD'];

/**
 * The script's text: removes itself (`$0`), optionally enters `spec.cwd`, exports `spec.env` exactly
 * (every value single-quoted; the shell's own PWD and OLDPWD unset), then `exec`s `spec.argv`.
 */
export function paneEnvScript(spec: PaneSpec, options: { cd?: boolean } = {}): string {
  checkPaneSpec(spec);
  const names = Object.keys(spec.env).filter((name) => SHELL_NAME.test(name));
  const unset = SHELL_OWN.filter((name) => !(name in spec.env));
  return [
    '# Written by flume for one pane; it holds the agent\'s environment and deletes itself as it starts.',
    'rm -f -- "$0"',
    ...(options.cd ? [`cd -- ${shellQuote(spec.cwd)} || exit 111`] : []),
    ...(unset.length ? [`unset ${unset.join(' ')}`] : []),
    ...names.map((name) => `export ${name}=${shellQuote(spec.env[name])}`),
    `exec ${spec.argv.map(shellQuote).join(' ')}`,
    '',
  ].join('\n');
}

/** A word for sh: single-quoted unless it is plainly safe. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The text without bracketed-paste markers. One pass is not enough: removing the inner marker of
 * `ESC[20ESC[200~1~` joins its halves into a closing marker, which would end the paste early and let
 * the rest arrive as typed keys (a newline among them submitting). So it strips until nothing changes.
 */
export function withoutPasteMarkers(text: string): string {
  for (let before = ''; before !== text; ) {
    before = text;
    text = text.replace(/\u001b\[20[01]~/g, '');
  }
  return text;
}

/**
 * The text as one bracketed paste (`ESC[200~ … ESC[201~`), its own markers stripped first: what a
 * host sends for `type(pane, text, { paste: true })` (core/api/pane-host.ts TypeOptions).
 */
export function asPaste(text: string): string {
  return `\u001b[200~${withoutPasteMarkers(text)}\u001b[201~`;
}

/**
 * Text split into bursts of at most `size` characters, never inside a surrogate pair: a host types
 * long text a burst at a time, with a pause between, so the agent's input reader keeps up.
 */
export function splitBursts(text: string, size: number): string[] {
  const chars = Array.from(text);
  const bursts: string[] = [];
  for (let i = 0; i < chars.length; i += size) bursts.push(chars.slice(i, i + size).join(''));
  return bursts;
}
