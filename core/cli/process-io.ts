/**
 * The process's own streams, and what stops a command that runs until stopped, in a module of its
 * own that imports nothing: the bin writes a warm answer (core/cli/warm.ts) through it without
 * loading the rest of the CLI. output.ts re-exports it.
 */

/** Where the CLI writes; tests and the MCP server pass their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when stdout is a terminal (progress lines, live views). */
  isTTY: boolean;
}

/**
 * The process's own streams. A reader that stops reading (`flume status | head -3`, or the connection
 * of a relayed command dropped) closes the pipe: what is left unwritten had no one to read it, so
 * flume stops writing to it rather than dying with a trace.
 */
export const processIo: Io = {
  stdout: (text) => void (open(process.stdout) && process.stdout.write(text)),
  stderr: (text) => void (open(process.stderr) && process.stderr.write(text)),
  isTTY: Boolean(process.stdout.isTTY),
};

/**
 * Calls `stop` once when the command is to stop: on SIGINT or SIGTERM, or once the caller of a
 * relayed command is gone (at once, should it be gone already). Answers with the way to stop listening.
 * A command that follows or waits listens; one that acts does not, and runs to its end.
 */
export function onStop(stop: () => void): () => void {
  if (callerIsGone) {
    stop();
    return () => undefined;
  }
  const once = () => {
    off();
    stop();
  };
  const off = () => {
    stops.delete(once);
    process.off('SIGINT', once);
    process.off('SIGTERM', once);
  };
  stops.add(once);
  process.once('SIGINT', once);
  process.once('SIGTERM', once);
  return off;
}

/** Says the caller of the relayed command this process runs is gone: what listens `onStop`, now and later, stops. */
export function callerGone(): void {
  callerIsGone = true;
  for (const stop of [...stops]) stop();
}

const closed = new Set<NodeJS.WriteStream>();
const watched = new Set<NodeJS.WriteStream>();
function open(stream: NodeJS.WriteStream): boolean {
  if (!watched.has(stream)) {
    watched.add(stream);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      closed.add(stream);
    });
  }
  return !closed.has(stream);
}

const stops = new Set<() => void>();
let callerIsGone = false;
