/**
 * The one place the herdr plugin calls herdr's CLI, as herdr 0.8.0 documents it (README.md): a
 * command prints its JSON response `{"id", "result": {"type", …}}` on stdout and exits 0, or prints
 * `{"id", "error": {"code", "message"}}` on stderr and exits 1; bad usage exits 2. `pane read` prints
 * the screen's text itself, and commands answered with a bare `ok` print nothing.
 */
import { run } from '../../core/index.js';

/** What one herdr command answered. */
export interface HerdrReply {
  ok: boolean;
  /** The response's `result` (or the whole JSON for commands without the envelope, `status`). */
  result: unknown;
  /** herdr's error code (`pane_not_found`, `server_not_running`, …), or `exit N` for usage errors. */
  code?: string;
  message?: string;
  /** stdout as printed: the text of `pane read`. */
  text: string;
}


/** Calls herdr's CLI with argv (never through a shell). */
export type Herdr = (args: string[]) => Promise<HerdrReply>;

/** A caller of the herdr executable (`herdr` on PATH unless named). */
export function herdrCli(binary = 'herdr', timeoutMs = 15_000): Herdr {
  return async (args) => {
    const result = await run(binary, args, { timeoutMs });
    if (result.failedToStart) return { ok: false, result: {}, code: 'not_found', message: result.failedToStart, text: '' };
    if (result.exitCode === 0) {
      const json = parse(result.stdout);
      return { ok: true, result: pick(json, 'result') ?? json ?? {}, text: result.stdout };
    }
    const error = pick(parse(result.stderr), 'error');
    const message = str(error, 'message') ?? (result.stderr.trim().split('\n')[0] || `exit code ${result.exitCode}`);
    return { ok: false, result: {}, code: str(error, 'code') ?? `exit ${result.exitCode}`, message, text: result.stdout };
  };
}

/** The herdr binary a plugin command should call: herdr hands its own path in HERDR_BIN_PATH. */
export function herdrBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.HERDR_BIN_PATH || 'herdr';
}

/**
 * herdr's key names for flume's (tmux-style) ones: `Enter` → `enter`, `Escape` → `esc`, `C-c` →
 * `ctrl+c`, `M-x` → `alt+x`, `BSpace` → `backspace`; a single character stays itself.
 */
export function herdrKey(key: string): string {
  const named: Record<string, string> = { Enter: 'enter', Escape: 'esc', Tab: 'tab', BTab: 'shift+tab', BSpace: 'backspace', Space: 'space', DC: 'delete', Up: 'up', Down: 'down', Left: 'left', Right: 'right' };
  if (named[key]) return named[key];
  const chord = /^([CM])-(.)$/.exec(key);
  if (chord) return `${chord[1] === 'C' ? 'ctrl' : 'alt'}+${chord[2].toLowerCase()}`;
  return [...key].length === 1 ? key : key.toLowerCase();
}

/** A field deep in a JSON value, or undefined: herdr's answers are read loosely, field by field. */
export function pick(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

/** A string field, or undefined. */
export function str(value: unknown, ...path: string[]): string | undefined {
  const at = pick(value, ...path);
  return typeof at === 'string' ? at : undefined;
}

function parse(text: string): unknown {
  const line = text.trim().split('\n').find((l) => l.startsWith('{'));
  if (!line) return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}
