/**
 * Which places wait on the operator, and which began to since the last look: what the live view rings
 * the terminal bell for, and what a host with notifications of its own (herdr's `notification show`)
 * can call with the same readings.
 */
import type { PlaceStatus, StatusReport } from '../status/status.js';

/** Why the place waits on the operator (an agent asking, a stage stopped short, stuck, over budget), or undefined. */
export function waitingOn(place: PlaceStatus): string | undefined {
  const s = place.stage;
  if (!s) return undefined;
  if (s.agent?.state === 'asking') return s.needs ? `asks: ${s.needs}` : 'asks';
  if (s.state === 'waiting') return s.needs ? `waits: ${s.needs}` : 'waits';
  if (s.state === 'stuck') return `stuck since ${s.stuckSince ?? 'a while'}`;
  if (s.state === 'over-budget') return 'over budget';
  if (s.state === 'never-started') return 'never started';
  return undefined;
}

/** One wait: the place, why, and a key that is new for each new wait (another stage, attempt or reason). */
export interface Waiting {
  place: PlaceStatus;
  why: string;
  key: string;
}

/** Every place of the report that waits on the operator now. */
export function waitingPlaces(report: StatusReport): Waiting[] {
  return report.places.flatMap((place) => {
    const why = waitingOn(place);
    const s = place.stage;
    return why && s ? [{ place, why, key: `${place.id}\t${s.name}\t${s.attempt}\t${s.startedAt}\t${s.agent?.state === 'asking' ? 'asking' : s.state}` }] : [];
  });
}

/**
 * Tracks waits across readings: `next(report)` answers the waits that were not there at the previous
 * reading. The first reading only sets what is known (a view opened on a waiting place does not ring).
 */
export function waitingTracker(): { next(report: StatusReport): Waiting[] } {
  let known: Set<string> | undefined;
  return {
    next(report) {
      const now = waitingPlaces(report);
      const fresh = known ? now.filter((w) => !known!.has(w.key)) : [];
      known = new Set(now.map((w) => w.key));
      return fresh;
    },
  };
}
