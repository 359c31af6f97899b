/**
 * The one error flume throws on purpose. Every refusal and failure a person (or an agent reading the
 * text) can act on is a FlumeError: a SCREAMING_SNAKE code, a one-line message, and a fix that names
 * the safe next step. Only the CLI turns one into output and an exit code.
 */

/** Every code flume uses, with the exit code it maps to. Callers match on codes, never on text. */
export const ERROR_CODES = {
  BAD_USAGE: 2,
  BAD_NAME: 1,
  BAD_CONFIG: 1,
  UNTRUSTED_CONFIG: 1,
  CONFIG_HUNG: 1,
  BAD_STATE: 1,
  UNKNOWN_KIND: 1,
  UNKNOWN_STAGE: 1,
  UNKNOWN_PLACE: 1,
  UNKNOWN_AGENT: 1,
  NOT_A_REPOSITORY: 1,
  NO_COMMIT: 1,
  BAD_REF: 1,
  PLACE_EXISTS: 1,
  BRANCH_EXISTS: 1,
  WORKTREE_EXISTS: 1,
  PLACE_BUSY: 1,
  PLACE_NOT_READY: 1,
  PLACE_OVER: 1,
  GIT_FAILED: 1,
  READY_FAILED: 1,
  TIDY_REFUSED: 1,
  PLUGIN_FAILED: 1,
  AGENT_NOT_UP: 1,
  AGENT_ASKING: 1,
  AGENT_WORKING: 1,
  CANNOT_GO_ON: 1,
  AGENT_BUSY: 1,
  AGENT_RUNNING: 1,
  AGENT_DID_NOT_EXIT: 1,
  AGENT_START_FAILED: 1,
  PROMPT_NOT_TAKEN: 1,
  NO_PANE_HOST: 1,
  WATCH_RUNNING: 1,
  BRIEF_MISSING: 1,
  BAD_TEXT: 1,
  PLACES_UNSAFE: 1,
  NO_TARGET: 1,
  IO_FAILED: 1,
} as const;

/** A code from the catalogue above. */
export type FlumeErrorCode = keyof typeof ERROR_CODES;

/** What a FlumeError carries beside its code and message. */
export interface FlumeErrorOptions {
  /** How to fix it: the safe next step, never the override flag. */
  fix?: string;
  /** The offending values and anything else a caller may want to read (printed with --json). */
  details?: Record<string, unknown>;
  /** The plugin in which it arose, when one did. */
  plugin?: string;
  /** The hook in which it arose, when one did. */
  hook?: string;
  cause?: unknown;
}

/** flume's error: a code from the catalogue, a one-line message, how to fix it. */
export class FlumeError extends Error {
  readonly code: FlumeErrorCode;
  readonly fix?: string;
  readonly details: Record<string, unknown>;
  readonly plugin?: string;
  readonly hook?: string;

  constructor(code: FlumeErrorCode, message: string, options: FlumeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlumeError';
    this.code = code;
    this.fix = options.fix;
    this.details = options.details ?? {};
    this.plugin = options.plugin;
    this.hook = options.hook;
  }

  /** The process exit code this error maps to: 2 for bad usage, 1 otherwise. */
  get exitCode(): number {
    return ERROR_CODES[this.code];
  }

  /** The JSON form printed by `--json` commands and returned over MCP. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.fix ? { fix: this.fix } : {}),
      ...(this.plugin ? { plugin: this.plugin } : {}),
      ...(this.hook ? { hook: this.hook } : {}),
      ...(Object.keys(this.details).length ? { details: this.details } : {}),
    };
  }
}

/** True for a FlumeError, optionally of one code. */
export function isFlumeError(error: unknown, code?: FlumeErrorCode): error is FlumeError {
  return error instanceof FlumeError && (code === undefined || error.code === code);
}

/**
 * Wraps an error thrown inside a plugin's tap so the message says which plugin and hook failed.
 * A FlumeError keeps its code; anything else becomes PLUGIN_FAILED.
 */
export function inPlugin(error: unknown, plugin: string, hook: string): FlumeError {
  if (error instanceof FlumeError) {
    if (error.plugin) return error;
    return new FlumeError(error.code, `[${plugin}] ${error.message}`, {
      fix: error.fix,
      details: error.details,
      plugin,
      hook,
      cause: error.cause,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new FlumeError('PLUGIN_FAILED', `[${plugin}] ${hook} failed: ${message}`, {
    fix: `Check the plugin "${plugin}"; the error came from its ${hook} tap.`,
    plugin,
    hook,
    cause: error,
  });
}
