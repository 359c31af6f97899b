/** Durations in config: a number of seconds, or a string such as "90s", "20m", "2h", "500ms". */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The duration in milliseconds; `fallbackMs` when none is given. */
export function toMs(value: number | string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  if (typeof value === 'number') return value * 1000;
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)$/.exec(value);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : fallbackMs;
}
