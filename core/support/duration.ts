/**
 * Durations, in config and on the command line: a number of seconds, or a string such as "90s",
 * "20m", "2h", "500ms"; at most MAX_DURATION_MS. Anything else is refused, never read as a default.
 */
import { flumeError, type FlumeError } from '../api/errors.js';

/** The longest duration flume takes: 100000 hours (about 11 years), in milliseconds. */
export const MAX_DURATION_MS = 100_000 * 3_600_000;

/** The longest duration flume takes, as a person writes it. */
export const MAX_DURATION = '100000h';

/** A duration string's shape: a number with its unit. */
export const DURATION_PATTERN = '^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$';

const DURATION = new RegExp(DURATION_PATTERN);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Node's longest timer, ms: a longer one fires at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration in milliseconds; `'malformed'` when `value` is no duration (a negative number, a
 * string of another shape), `'too-long'` when it is past MAX_DURATION_MS.
 */
export function durationMs(value: number | string): number | 'malformed' | 'too-long' {
  let ms: number;
  if (typeof value === 'number') ms = value * 1000;
  else {
    const match = DURATION.exec(value);
    if (!match) return 'malformed';
    ms = Number(value.slice(0, -match[2].length)) * UNIT_MS[match[2]];
  }
  if (!(ms >= 0)) return 'malformed';
  return ms > MAX_DURATION_MS ? 'too-long' : ms;
}

/**
 * The duration in milliseconds; `fallbackMs` when none is given. A value that is no duration flume
 * takes is BAD_CONFIG naming `path`, where it was read (the loader refuses such a config first).
 */
export function toMs(value: number | string | undefined, fallbackMs: number, path: string): number {
  if (value === undefined) return fallbackMs;
  const ms = durationMs(value);
  if (typeof ms === 'number') return ms;
  throw flumeError('BAD_CONFIG', { path, value: JSON.stringify(value), limit: MAX_DURATION }, {
    variant: ms === 'too-long' ? 'durationTooLong' : 'duration',
    details: { path, value },
  });
}

/** The time limits flume reads from its environment, each with its default, ms. */
export const ENVIRONMENT_LIMITS = {
  /** How long a config may take to load. */
  FLUME_CONFIG_TIMEOUT_MS: 10_000,
  /** How long status waits for a config's probe before it reports the repository as loading. */
  FLUME_STATUS_CONFIG_WAIT_MS: 1000,
  /** How long the handshake with another host waits. */
  FLUME_HOST_TIMEOUT_MS: 30_000,
  /** How long a merged reading of every host waits for each. */
  FLUME_HOST_READ_MS: 10_000,
} as const;

/** The name of one of flume's time-limit variables. */
export type EnvironmentLimit = keyof typeof ENVIRONMENT_LIMITS;

/**
 * The time limit a variable of flume's environment sets, ms: a number of milliseconds, or a duration
 * with its unit ("90s"); its default when unset or empty. Anything else (zero, a negative, "5 s",
 * past 100000h) is BAD_USAGE, never read as the default: a limit the user set and flume ignored would
 * wait where they asked it not to.
 */
export function environmentMs(env: NodeJS.ProcessEnv, name: EnvironmentLimit): number {
  const raw = env[name]?.trim();
  if (!raw) return ENVIRONMENT_LIMITS[name];
  const ms = /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : durationMs(raw);
  if (typeof ms === 'number' && ms > 0 && ms <= MAX_DURATION_MS) return ms;
  throw flumeError('BAD_USAGE', { name, value: JSON.stringify(env[name]), fallback: ENVIRONMENT_LIMITS[name], limit: MAX_DURATION }, {
    variant: 'environmentLimit',
    details: { name, value: env[name] },
  });
}

/** The refusal for the first of flume's time-limit variables set to no time limit; undefined when each is right. */
export function environmentLimitProblem(env: NodeJS.ProcessEnv): FlumeError | undefined {
  for (const name of Object.keys(ENVIRONMENT_LIMITS) as EnvironmentLimit[]) {
    try {
      environmentMs(env, name);
    } catch (error) {
      return error as FlumeError;
    }
  }
  return undefined;
}

/** A timer that can be cleared: what `longTimeout` returns. */
export interface LongTimer {
  clear(): void;
}

/**
 * Calls `fn` once `ms` have passed, however long (Node fires a timer past 2^31-1 ms at once): the
 * wait is a chain of Node timers, each at most that long.
 */
export function longTimeout(fn: () => void, ms: number): LongTimer {
  let timer: NodeJS.Timeout;
  const arm = (left: number) => {
    const now = Math.min(left, LONGEST_TIMER_MS);
    timer = setTimeout(() => (left > now ? arm(left - now) : fn()), now);
  };
  arm(Math.max(0, ms));
  return { clear: () => clearTimeout(timer) };
}
