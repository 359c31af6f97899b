/**
 * The one check of text a person typed that flume sends to an agent (a brief, a tell, a go-on note,
 * a stage prompt). The text is typed into a terminal as a paste: a control character in it is a
 * keystroke, not a letter (ESC can end the paste early and type the rest as commands), so any is
 * refused before anything is typed or made. Newline and TAB are text; `\r\n` becomes `\n`.
 */
import { flumeError } from '../api/errors.js';

/** Control characters refused: C0 but TAB and newline, DEL, and C1 (U+0080–U+009F). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

/** The names of the controls a person most likely meets, for the error message. */
const NAMES: Record<number, string> = { 0: 'NUL', 7: 'BEL', 8: 'BS', 0x0d: 'CR', 0x1b: 'ESC', 0x7f: 'DEL', 0x9b: 'CSI' };

/** Where a control character stands in a text: its code point, its name and its position. */
export interface ControlCharacter {
  /** `U+001B`. */
  codePoint: string;
  /** `ESC`, or the code point where it has no common name. */
  name: string;
  /** 1-based line and column (in characters), and 0-based offset. */
  line: number;
  column: number;
  offset: number;
}

/** The first control character in `text` (after `\r\n` became `\n`), or undefined. */
export function findControl(text: string): ControlCharacter | undefined {
  const normal = normalizeNewlines(text);
  const match = CONTROL.exec(normal);
  if (!match) return undefined;
  const code = match[0].codePointAt(0)!;
  const before = normal.slice(0, match.index);
  const line = before.split('\n').length;
  const column = [...before.slice(before.lastIndexOf('\n') + 1)].length + 1;
  const codePoint = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return { codePoint, name: NAMES[code] ?? codePoint, line, column, offset: [...before].length };
}

/**
 * Returns `text` with `\r\n` made `\n`, or throws BAD_TEXT naming the first control character and
 * where it stands. `what` names the text in the message (`The brief`, `The tell`).
 */
export function checkText(text: string, what: string): string {
  const found = findControl(text);
  if (!found) return normalizeNewlines(text);
  const shown = found.name === found.codePoint ? found.codePoint : `${found.name} (${found.codePoint})`;
  throw flumeError('BAD_TEXT', { what, character: shown, line: found.line, column: found.column }, {
    details: { what, character: found.codePoint, name: found.name, line: found.line, column: found.column, offset: found.offset },
  });
}

function normalizeNewlines(text: string): string {
  return text.replace(/\r\n/g, '\n');
}
