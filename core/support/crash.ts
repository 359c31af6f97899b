/**
 * Crash points for the crash tests: with `FLUME_CRASH_AT=<point>` in its environment, flume kills
 * itself with SIGKILL when it reaches that point, as a power cut would. Every step of launch and tidy
 * that changes something has a point before and after it; the tests walk all of them.
 */

/** Every crash point, in the order the flows reach them. */
export const CRASH_POINTS = [
  'launch:locked',
  'launch:recorded',
  'launch:branch-made',
  'launch:worktree-added',
  'launch:made',
  'launch:readied',
  'tidy:locked',
  'tidy:marked',
  'tidy:worktree-removed',
  'tidy:branch-judged',
  'tidy:branch-deleted',
  'stage:agent-opened',
  'stage:agent-started',
  'stage:prompt-sent',
  'stage:ended',
  'stage:recorded',
] as const;

/** A crash point's name. */
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Dies here when the environment asks for a crash at this point. */
export function crashPoint(point: CrashPoint): void {
  if (process.env.FLUME_CRASH_AT === point) process.kill(process.pid, 'SIGKILL');
}
