/**
 * What the CLI writes: JSON for `--json`, plain lines otherwise, and errors as `CODE message` then
 * how to fix it. The only module besides cli/index.ts that touches the process's streams.
 */
import { FlumeError } from '../errors.js';
import type { Logger } from '../types.js';

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
  return new FlumeError('IO_FAILED', message, { fix: 'This is unexpected; run again, and report it with the command that failed if it persists.', cause: error });
}

/** A command as one shell line, each word quoted where it needs it (for the operator to paste). */
/**
 * A printed agent command as one line that runs where it is pasted: into the place first (the agent
 * must work there, and its transcript is found under the place's folder), then the command.
 */
export function printedLine(argv: string[], cwd: string): string {
  return `cd ${shellLine([cwd])} && ${shellLine(argv)}`;
}

export function shellLine(argv: string[]): string {
  // `NAME="$NAME"` is how a printed command refers to a secret it must not show: the shell fills it.
  const reference = (word: string) => /^([A-Za-z_]\w*)="\$\1"$/.test(word);
  return argv.map((word) => (/^[\w@%+=:,./-]+$/.test(word) || reference(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * Progress of a long command: on a terminal, the step under way stands on one line marked `…` and is
 * ticked `✓` when the next begins; elsewhere each step is a plain line. `--json` callers pass none.
 */
export function progress(io: Io): { step(text: string): void; done(): void } {
  let pending: string | undefined;
  const finish = () => {
    if (pending !== undefined) io.stdout(`\r\x1b[K✓ ${pending}\n`);
    pending = undefined;
  };
  return {
    step(text) {
      if (!io.isTTY) {
        io.stdout(`${text}\n`);
        return;
      }
      finish();
      pending = text;
      io.stdout(`… ${text}`);
    },
    done: finish,
  };
}
