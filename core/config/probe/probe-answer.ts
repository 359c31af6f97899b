/**
 * What the config probe (probe.ts, a process of its own) answers the guard. Kept apart so that the
 * guard never imports the probe's own module: a config importing flume would import it again.
 */

/** The mark before the probe's answer, so a config that prints cannot be taken for it. */
export const PROBE_MARK = '@@flume-config-probe@@';

/** What the probe prints after its mark. */
export interface ProbeAnswer {
  ok: boolean;
  /** Files of the repository the config read while loading (its own modules, its plugins). */
  files: string[];
  error?: { code: string; message: string; fix?: string; details?: Record<string, unknown> };
}
