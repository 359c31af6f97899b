/**
 * The process's terminal for the interactive view: keys in raw mode, the alternate screen (so no
 * frame is left in the scrollback, and the shell's screen comes back as it was), the size and its
 * changes. Besides process-io.ts, the one module that touches the process's streams, and only for
 * `status --watch` on a terminal.
 */
import { emitKeypressEvents } from 'node:readline';

/** A key as readline names it (`up`, `j`, `return`, `escape`), with the text it typed. */
export interface Key {
  name?: string;
  sequence: string;
  ctrl: boolean;
  shift: boolean;
}

/** What the view needs of a terminal. */
export interface Terminal {
  columns(): number;
  rows(): number;
  write(text: string): void;
  /** Takes the terminal: raw keys, the alternate screen, no cursor. */
  start(onKey: (key: Key) => void, onResize: () => void): void;
  /** Hands the terminal back for a while (another program runs on it); `resume` takes it again. */
  suspend(): void;
  resume(): void;
  /** Hands the terminal back for good: cooked mode, the main screen, the cursor. */
  stop(): void;
}

/** True when both ends of the process are a terminal: only then is the view interactive. */
export function interactiveTerminal(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

const ENTER = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const LEAVE = '\x1b[?25h\x1b[?1049l';

/** The process's own terminal. */
export function processTerminal(): Terminal {
  const stdin = process.stdin;
  const stdout = process.stdout;
  let keyListener: ((text: string, key: Partial<Key> | undefined) => void) | undefined;
  let resizeListener: (() => void) | undefined;
  let taken = false;
  const take = () => {
    stdin.setRawMode(true);
    stdin.resume();
    stdout.write(ENTER);
    taken = true;
  };
  const give = () => {
    if (!taken) return;
    taken = false;
    stdout.write(LEAVE);
    stdin.setRawMode(false);
    stdin.pause();
  };
  return {
    columns: () => stdout.columns || 80,
    rows: () => stdout.rows || 24,
    write: (text) => void stdout.write(text),
    start(onKey, onResize) {
      emitKeypressEvents(stdin);
      keyListener = (text, key) => onKey({ name: key?.name, sequence: key?.sequence ?? text ?? '', ctrl: Boolean(key?.ctrl), shift: Boolean(key?.shift) });
      resizeListener = onResize;
      stdin.on('keypress', keyListener);
      stdout.on('resize', resizeListener);
      take();
    },
    suspend: give,
    resume: take,
    stop() {
      give();
      if (keyListener) stdin.off('keypress', keyListener);
      if (resizeListener) stdout.off('resize', resizeListener);
    },
  };
}
