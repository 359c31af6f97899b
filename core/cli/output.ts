/**
 * What the CLI writes: JSON for `--json`, plain lines otherwise, and errors as `CODE message` then
 * how to fix it. The only module besides cli/index.ts that touches the process's streams.
 */
import { FlumeError, flumeError } from '../api/errors.js';
import type { Logger } from '../api/plugin.js';

export { processIo, type Io } from './process-io.js';
import type { Io } from './process-io.js';

/** Writes a value as indented JSON. */
export function printJson(io: Io, value: unknown): void {
  io.stdout(JSON.stringify(value, null, 2) + '\n');
}

/** Writes an error: `CODE message` and its fix on stderr, or `{ "error": … }` on stdout for --json. */
export function printError(io: Io, error: FlumeError, json: boolean): void {
  if (json) {
    printJson(io, { error: error.toJSON() });
    return;
  }
  io.stderr(`${error.code} ${error.message}\n`);
  if (error.fix) io.stderr(`  fix: ${error.fix}\n`);
}

/**
 * The logger plugins are handed (`flume.logger`), writing to stderr so `--json` output stays whole:
 * warnings always, info with `FLUME_LOG=info`, debug too with `FLUME_LOG=debug`.
 */
export function cliLogger(io: Io, env: NodeJS.ProcessEnv = process.env): Logger {
  const level = env.FLUME_LOG === 'debug' ? 2 : env.FLUME_LOG === 'info' ? 1 : 0;
  return {
    warn: (message) => io.stderr(`warn: ${message}\n`),
    info: (message) => void (level >= 1 && io.stderr(`info: ${message}\n`)),
    debug: (message) => void (level >= 2 && io.stderr(`debug: ${message}\n`)),
  };
}

/** Any thrown value as a FlumeError (an unexpected one keeps its message under IO_FAILED). */
export function asFlumeError(error: unknown): FlumeError {
  if (error instanceof FlumeError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return flumeError('IO_FAILED', { message }, { variant: 'unexpected', cause: error });
}

/** A command as one shell line, each word quoted where it needs it (for the operator to paste). */
/**
 * A printed agent command as one line that runs where it is pasted: into the place first (the agent
 * must work there, and its transcript is found under the place's folder), then the command.
 */
export function printedLine(argv: string[], cwd: string): string {
  return `cd ${shellLine([cwd])} && ${shellLine(argv)}`;
}

/**
 * The note that goes under a printed command holding secrets as `NAME="$NAME"` references: their
 * values are the config's (or differ from the caller's), flume never prints them, and the shell that
 * runs the command fills each from its own variable, empty where it has none. Undefined when the
 * command refers to none.
 */
export function printedNote(argv: string[]): string | undefined {
  const names = argv.flatMap((word) => /^([A-Za-z_]\w*)="\$\1"$/.exec(word)?.[1] ?? []);
  if (!names.length) return undefined;
  const list = names.join(', ');
  return `set ${list} in the shell that runs it first: ${names.length === 1 ? 'its value is' : 'their values are'} the agent's own (from the config), which flume does not print, and the command takes ${names.length === 1 ? 'it' : 'them'} from that shell (empty where it has none)`;
}

export function shellLine(argv: string[]): string {
  // `NAME="$NAME"` is how a printed command refers to a secret it must not show: the shell fills it.
  const reference = (word: string) => /^([A-Za-z_]\w*)="\$\1"$/.test(word);
  return argv.map((word) => (/^[\w@%+=:,./-]+$/.test(word) || reference(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** How a finished progress step is marked: done, failed, or held (the place waits on the operator). */
export const PROGRESS_MARKS = { done: '✓', failed: '✗', held: '‖' } as const;

/** A long command's progress printer (see progress). */
export interface Progress {
  /** A step begins; the one under way before it is ticked done. */
  step(text: string): void;
  /** The step under way failed; `text`, if given, is the outcome, printed failed after it. */
  fail(text?: string): void;
  /** The step under way left the place held; `text`, if given, says why, printed held after it. */
  hold(text?: string): void;
  /** The step under way is done; nothing more is under way. */
  done(): void;
}

/**
 * Progress of a long command: on a terminal, the step under way stands on one row marked `…` (its
 * first line, cut to the terminal's width, so a carriage return can always redraw it) and is marked
 * when it ends: `✓` done, `✗` failed, `‖` held, then written whole. Elsewhere each step is a plain
 * line. `--json` callers pass none.
 */
export function progress(io: Io, columns: () => number | undefined = () => process.stdout.columns): Progress {
  let pending: string | undefined;
  const finish = (mark: string) => {
    if (pending !== undefined) io.stdout(`\r\x1b[K${mark} ${pending}\n`);
    pending = undefined;
  };
  const outcome = (mark: string, text: string | undefined) => {
    finish(mark);
    if (text === undefined) return;
    io.stdout(io.isTTY ? `${mark} ${text}\n` : `${text}\n`);
  };
  return {
    step(text) {
      if (!io.isTTY) {
        io.stdout(`${text}\n`);
        return;
      }
      finish(PROGRESS_MARKS.done);
      pending = text;
      // One row only: a second line, or a first one the terminal wraps, is beyond `\r`'s reach.
      const width = Math.max(10, (columns() || 80) - 3);
      const first = Array.from(text.split('\n')[0]);
      io.stdout(`… ${first.length > width ? `${first.slice(0, width - 1).join('')}…` : first.join('')}`);
    },
    fail: (text) => outcome(PROGRESS_MARKS.failed, text),
    hold: (text) => outcome(PROGRESS_MARKS.held, text),
    done: () => finish(PROGRESS_MARKS.done),
  };
}
