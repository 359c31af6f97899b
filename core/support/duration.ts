/**
 * Durations, in config and on the command line: a number of seconds, or a string such as "90s",
 * "20m", "2h", "500ms"; at most MAX_DURATION_MS. Anything else is refused, never read as a default.
 */
import { flumeError } from '../api/errors.js';

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
