/**
 * The process's own streams, in a module of its own that imports nothing: the bin writes a warm
 * answer (core/cli/warm.ts) through it without loading the rest of the CLI. output.ts re-exports it.
 */

/** Where the CLI writes; tests and the MCP server pass their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when stdout is a terminal (progress lines, live views). */
  isTTY: boolean;
}

/**
 * The process's own streams. A reader that stops reading (`flume status | head -3`) closes the pipe:
 * what is left unwritten had no one to read it, so flume stops writing rather than dying with a trace.
 */
export const processIo: Io = {
  stdout: (text) => void (stdoutOpen() && process.stdout.write(text)),
  stderr: (text) => process.stderr.write(text),
  isTTY: Boolean(process.stdout.isTTY),
};

let stdoutClosed = false;
function stdoutOpen(): boolean {
  if (!stdoutWatched) {
    stdoutWatched = true;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      stdoutClosed = true;
    });
  }
  return !stdoutClosed;
}
let stdoutWatched = false;
