/**
 * `flume wait`: blocks until a place's current (or next) stage reaches one of the named outcomes, and
 * answers with the place as status shows it. It wakes on what the supervisor writes (the event
 * stream, the place's record: events.ts `watchState`), on its place's branch moving (a delivery is
 * read then, as status shows it before any step records it), and on a 1 s poll behind them; it reads
 * the events after the one it started at, so an outcome the supervisor records is never missed
 * however briefly it stands (a stage delivered and the next already started).
 */
import { lastEventId, readEvents, streamStamp, watchState, type EventName } from '../../state/events.js';
import { readRecord } from '../../state/store.js';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isFlumeError } from '../../api/errors.js';
import { longTimeout } from '../../support/duration.js';
import type { FlumePlugin } from '../../api/plugin.js';
import { status, type PlaceStatus, type StatusReport } from './status.js';

/** What a wait may wait for, and what each means. */
export const OUTCOMES = {
  delivered: 'the stage\'s deliverable is there',
  waiting: 'the stage stopped short: its agent says what it needs',
  stuck: 'the stage went quiet past its limit',
  'never-started': 'its agent never took its prompt',
  'over-budget': 'the stage passed its token budget',
  'awaits-caller': 'the place waits for its caller (a caller\'s kind, or a gate)',
  'not-ready': 'the stage was refused: readying the place failed',
  dropped: 'the launch was dropped',
  kept: 'tidying kept the place or its branch (status says why)',
  gone: 'the place was tidied (or its record removed)',
} as const;

/** An outcome `flume wait` knows. */
export type Outcome = keyof typeof OUTCOMES;

/** The outcome each event of the stream reports. */
const EVENT_OUTCOMES: Partial<Record<EventName, Outcome>> = {
  delivered: 'delivered',
  waiting: 'waiting',
  stuck: 'stuck',
  'never-started': 'never-started',
  'over-budget': 'over-budget',
  'awaits-caller': 'awaits-caller',
  'not-ready': 'not-ready',
  dropped: 'dropped',
  tidied: 'gone',
  kept: 'kept',
};

/**
 * Every outcome a place's status shows now, first the one that says most. A place can show more than
 * one at once: a stage delivered whose place now waits for its caller (a gate, a caller's kind) shows
 * both `awaits-caller` and `delivered`, and a wait for either is answered.
 */
export function outcomesOf(place: PlaceStatus | undefined): Outcome[] {
  if (!place) return ['gone'];
  if (place.state === 'kept') return ['kept'];
  if (place.state === 'dropped') return ['dropped'];
  const shown: Outcome[] = place.awaits ? ['awaits-caller'] : [];
  const state = place.stage?.state;
  if (state === 'delivered' || state === 'done') shown.push('delivered');
  if (state === 'waiting' || state === 'stuck' || state === 'never-started' || state === 'over-budget' || state === 'not-ready') shown.push(state);
  return shown;
}

/** The first outcome the place shows that the wait is for, if any. */
export function wantedOutcome(place: PlaceStatus | undefined, wanted: ReadonlySet<Outcome>): Outcome | undefined {
  return outcomesOf(place).find((outcome) => wanted.has(outcome));
}

/** What a wait is for. */
export interface WaitRequest {
  root: string;
  commonDir: string;
  /** `<kind>/<name>`. */
  place: string;
  outcomes: readonly Outcome[];
  timeoutMs?: number;
  /**
   * Count only what happens after this event (a command that acted just now: `--wait`); without
   * it, an outcome the place shows already counts.
   */
  after?: number;
  signal?: AbortSignal;
  /** The slow poll behind the file-system events (default 5 s). */
  pollMs?: number;
  /**
   * Where no supervisor moves the place on (it was launched with --no-watch, or the wait was told
   * --no-watch), the wait steps it itself before each look, as an acting command does.
   */
  step?: () => Promise<unknown>;
}

/** How a wait ended: the outcome reached (none on timeout), and the place as status shows it then. */
export interface WaitResult {
  reached?: Outcome;
  report: StatusReport;
  place?: PlaceStatus;
}

/** Waits for the place to reach one of `request.outcomes`, or the time limit. */
export async function waitForPlace(preset: () => Promise<FlumePlugin[]>, request: WaitRequest): Promise<WaitResult> {
  const wanted = new Set<Outcome>(request.outcomes);
  const key = request.place.replace('/', '--');
  const gone = wanted.has('gone') ? ('gone' as const) : undefined;
  const read = async (): Promise<WaitResult & { now?: Outcome }> => {
    // `now`: the first outcome the place shows that the wait is for.
    const record = await readRecord(request.commonDir, key).catch(() => undefined);
    if (!record) return { report: emptyReport(), now: gone };
    const report = await status(preset, { repo: request.root, commonDir: request.commonDir, place: request.place }).catch((error: unknown) => {
      // Tidied between the look at its record and the reading: gone.
      if (isFlumeError(error) && error.code === 'UNKNOWN_PLACE') return undefined;
      throw error;
    });
    if (!report) return { report: emptyReport(), now: gone };
    const place = report.places[0];
    return { report, place, now: wantedOutcome(place, wanted) };
  };
  let seen = request.after ?? (await lastEventId(request.commonDir));
  if (request.after === undefined) {
    const first = await read();
    if (first.now) return { reached: first.now, report: first.report, place: first.place };
  }
  const deadline = request.timeoutMs === undefined ? Infinity : Date.now() + request.timeoutMs;
  return new Promise<WaitResult>((resolve, reject) => {
    let busy = false;
    let again = false;
    let stamp: string | undefined;
    let done = false;
    const finish = (result: WaitResult | Error) => {
      if (done) return;
      done = true;
      stop();
      unwatchBranch();
      timer?.clear();
      request.signal?.removeEventListener('abort', onAbort);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    // A step writes the place's lock and record, which wakes the watch: the wait steps only on its
    // poll, never on what the file-system says, or its own step would wake it at once, and again.
    const look = async (polled = false) => {
      if (done) return;
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        if (polled) await request.step?.();
        do {
          again = false;
          // The stream is read again only when it changed: an idle wait costs a stat a poll.
          const now = await streamStamp(request.commonDir);
          const events = now === stamp ? [] : await readEvents(request.commonDir, { since: seen, place: request.place });
          stamp = now;
          for (const event of events) {
            seen = event.id;
            const outcome = EVENT_OUTCOMES[event.event];
            if (outcome && wanted.has(outcome)) {
              // A place tidied away is gone, though its record may stand a moment longer.
              if (event.event === 'tidied') return finish({ reached: outcome, report: emptyReport() });
              const { report, place } = await read();
              return finish({ reached: outcome, report, place });
            }
          }
          // A record removed by hand, or by a flume too old to write the stream, is gone all the same.
          if (wanted.has('gone') && !(await readRecord(request.commonDir, key).catch(() => undefined))) {
            return finish({ reached: 'gone', ...(await read()) });
          }
        } while (again && !done);
      } catch (error) {
        finish(error instanceof Error ? error : new Error(String(error)));
      } finally {
        busy = false;
      }
    };
    const stop = watchState(request.commonDir, (polled) => void look(polled), request.pollMs ?? 5000);
    // A deliverable is seen in status the moment its commit is there, before any step records it (as
    // status shows it): where the wait is for a delivery, a move of the place's branch is read at once.
    const unwatchBranch = wanted.has('delivered') || wanted.has('awaits-caller') ? watchBranch(request.commonDir, key, () => void early()) : () => undefined;
    let reading = false;
    const early = async () => {
      if (done || reading) return;
      reading = true;
      try {
        const now = await read();
        if (now.now === 'delivered' || now.now === 'awaits-caller') finish({ reached: now.now, report: now.report, place: now.place });
      } catch {
        // The stream still answers.
      } finally {
        reading = false;
      }
    };
    const onTimeout = async () => {
      const { report, place } = await read().catch(() => ({ report: emptyReport(), place: undefined }));
      finish({ report, place });
    };
    // With no --timeout the wait has no timer: it ends on an outcome or when aborted.
    const timer = Number.isFinite(deadline) ? longTimeout(() => void onTimeout(), deadline - Date.now()) : undefined;
    const onAbort = () => finish({ report: emptyReport() });
    if (request.signal?.aborted) return onAbort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    void look();
  });
}

/** Calls `onMove` when the place's branch ref is written (a commit on it); returns the way to stop. */
function watchBranch(commonDir: string, key: string, onMove: () => void): () => void {
  // The branch is `<kind>/<name>` unless its kind says otherwise: the record names it.
  let watcher: FSWatcher | undefined;
  let closed = false;
  void readRecord(commonDir, key).then((record) => {
    if (!record || closed) return;
    const ref = join(commonDir, 'refs', 'heads', record.branch);
    try {
      watcher = watch(dirname(ref), (_event, name) => {
        if (name === basename(ref)) onMove();
      });
    } catch {
      // No folder to watch: the stream and the poll still answer.
    }
  }, () => undefined);
  return () => {
    closed = true;
    watcher?.close();
  };
}

/** The report of a place that is gone: status's shape, with no place. */
function emptyReport(): StatusReport {
  return { version: 1, generatedAt: new Date().toISOString(), repositories: [], places: [] };
}
