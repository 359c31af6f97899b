/**
 * The one error flume throws on purpose. Every refusal and failure a person (or an agent reading the
 * text) can act on is a FlumeError: a SCREAMING_SNAKE code, a one-line message, and a fix that names
 * the safe next step. Only the CLI turns one into output and an exit code.
 */
import { ERROR_CATALOGUE, catalogueWording, fillShape, type CatalogueCode, type CatalogueValues, type CatalogueVariant } from './error-catalogue.js';

/** Every code flume raises, with the exit code it maps to (from the catalogue, core/api/error-catalogue.ts). */
export const ERROR_CODES = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, entry.exit])) as {
  readonly [C in CatalogueCode]: (typeof ERROR_CATALOGUE)[C]['exit'];
};

/** A code from the catalogue. */
export type FlumeErrorCode = CatalogueCode;

/**
 * A code a plugin raises of its own (`ACME_QUOTA`), kept as the plugin gave it when flume reports the
 * error; it maps to exit code 1. flume's own code never uses one: the catalogue test holds to that.
 */
export type PluginErrorCode = string & { readonly pluginCode?: never };

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
  readonly code: FlumeErrorCode | PluginErrorCode;
  readonly fix?: string;
  readonly details: Record<string, unknown>;
  readonly plugin?: string;
  readonly hook?: string;

  constructor(code: FlumeErrorCode | PluginErrorCode, message: string, options: FlumeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlumeError';
    this.code = code;
    this.fix = options.fix;
    this.details = options.details ?? {};
    this.plugin = options.plugin;
    this.hook = options.hook;
  }

  /** An error as `toJSON` gave it, raised again (one a child process built and reported). */
  static fromJSON(json: { code: FlumeErrorCode | PluginErrorCode; message: string; fix?: string; details?: Record<string, unknown>; plugin?: string; hook?: string }): FlumeError {
    return new FlumeError(json.code, json.message, { fix: json.fix, details: json.details, plugin: json.plugin, hook: json.hook });
  }

  /** The process exit code this error maps to: 2 for bad usage, 1 otherwise. */
  get exitCode(): number {
    return ERROR_CODES[this.code as FlumeErrorCode] ?? 1;
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

/** What `flumeError` takes beside the code and the values: which wording, and what the error carries. */
export interface FlumeErrorBuild<V extends string = string> extends Pick<FlumeErrorOptions, 'details' | 'plugin' | 'hook' | 'cause'> {
  /** The catalogue's named wording of the code to use (`'default'`, or none: the entry's own). */
  variant?: V;
}

/**
 * The FlumeError for `code`, worded by its catalogue entry (core/api/error-catalogue.ts): the message and
 * the fix with each `{word}` filled from `values`. A word without a value throws, so a call site that
 * forgets one fails its first test rather than printing `{word}`.
 */
export function flumeError<C extends CatalogueCode, V extends CatalogueVariant<C> | 'default' = 'default'>(
  code: C,
  values: CatalogueValues<C, V>,
  options: FlumeErrorBuild<V> = {},
): FlumeError {
  const { variant, ...carried } = options;
  const wording = catalogueWording(code, variant);
  const filled = values as Record<string, unknown>;
  return new FlumeError(code, fillShape(wording.message, filled, code), { ...carried, fix: fillShape(wording.fix, filled, code) });
}

/**
 * The error another host's flume answered with (its `--json` error), as an error here: its code,
 * words, fix and details are the remote's own, never worded again.
 */
export function answeredError(error: { code: string; message: string; fix?: string; details?: Record<string, unknown> }): FlumeError {
  return new FlumeError(error.code as FlumeErrorCode, error.message, { fix: error.fix, details: error.details ?? {} });
}

/** True for a FlumeError, optionally of one code. */
export function isFlumeError(error: unknown, code?: FlumeErrorCode): error is FlumeError {
  return error instanceof FlumeError && (code === undefined || error.code === code);
}

/**
 * Wraps an error thrown inside a plugin's tap so the message says which plugin and hook failed.
 * The plugin's own code is kept: a FlumeError's, or an Error's string `code` (`ACME_QUOTA`), so a
 * caller matching on it still can; anything else becomes PLUGIN_FAILED. Node's own codes (`ENOENT`,
 * `ERR_…`) are the plugin failing, not its word, and also become PLUGIN_FAILED.
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
  const own = pluginCode(error);
  const carried = (error ?? {}) as { fix?: unknown; details?: unknown };
  const worded = flumeError('PLUGIN_FAILED', { plugin, hook, message });
  return new FlumeError(own ?? 'PLUGIN_FAILED', worded.message, {
    fix: typeof carried.fix === 'string' ? carried.fix : worded.fix,
    details: carried.details && typeof carried.details === 'object' ? (carried.details as Record<string, unknown>) : undefined,
    plugin,
    hook,
    cause: error,
  });
}

/** The code a plugin gave its error, when it gave one of its own (SCREAMING_SNAKE, not Node's). */
function pluginCode(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const { code } = error as { code?: unknown };
  if (typeof code !== 'string' || !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(code)) return undefined;
  if ('errno' in error || 'syscall' in error || code.startsWith('ERR_')) return undefined;
  return code;
}
