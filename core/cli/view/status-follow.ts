/**
 * The loop behind `flume status --watch`, plain or interactive: a status reading each time flume's
 * own files change (each repository's event stream and place records, the host's state, branch refs,
 * the places' folders, the agents' transcripts), with a slow poll behind the events. Idle, it sleeps:
 * no timer shorter than the poll runs (bench/view-idle.bench.mjs measures it).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isFlumeError } from '../../api/errors.js';
import { rewatch, type Watched } from '../../engine/supervisor/files.js';
import type { StatusReport } from '../../engine/status/status.js';
import { isOwnNote } from '../../engine/supervisor/supervisor-state.js';
import { followStreams } from '../../state/events.js';
import { hostStateDir } from '../../state/host.js';

/** The slow poll behind the file-system events. */
export const FOLLOW_POLL_MS = 60_000;

/** One reading as the view shows it: the report, and the places seen earlier that are gone (tidied). */
export interface Followed {
  report: StatusReport;
  gone: string[];
}

/** How the loop runs. `place`: the one place watched (its going ends the loop with 'gone'). */
export interface FollowOptions {
  signal: AbortSignal;
  pollMs?: number;
  place?: string;
  /** Called with a function that wakes the loop for a new reading now (after an action). */
  onPoke?(poke: () => void): void;
}

/**
 * Reads and hands each reading to `show` until `signal` aborts ('aborted') or the one place watched
 * is gone ('gone'). A place unknown at the first reading is the caller's error (UNKNOWN_PLACE).
 */
export async function followStatus(read: () => Promise<StatusReport>, options: FollowOptions, show: (followed: Followed) => void | Promise<void>): Promise<'aborted' | 'gone'> {
  const watchers = new Map<string, Watched>();
  const streams = new Map<string, () => void>();
  const seen = new Set<string>();
  let wake: (() => void) | undefined;
  let dirty = false;
  const poke = (_event?: unknown, filename?: string | Buffer | null) => {
    // The supervisor's note after each pass (in the host's folder) changes nothing this view shows.
    if (typeof filename === 'string' && isOwnNote(filename)) return;
    dirty = true;
    wake?.();
  };
  options.signal.addEventListener('abort', () => wake?.());
  options.onPoke?.(() => poke());
  let first = true;
  try {
    while (!options.signal.aborted) {
      dirty = false;
      let report: StatusReport;
      try {
        report = await read();
      } catch (error) {
        // The one place watched was tidied since the view began: it is gone, not a mistake.
        if (!first && options.place !== undefined && isFlumeError(error) && error.code === 'UNKNOWN_PLACE') return 'gone';
        throw error;
      }
      first = false;
      const ids = new Set(report.places.map((p) => p.id));
      for (const id of ids) seen.add(id);
      await show({ report, gone: [...seen].filter((id) => !ids.has(id)) });
      // A path watched for the first time may have changed after the reading and before its watcher
      // opened (the first frame shown, a new place's transcript): one more reading sees it.
      const opened = rewatch(watchers, pathsOf(report), poke) + followReport(streams, report, () => poke());
      if (opened > 0) dirty = true;
      if (dirty || options.signal.aborted) continue;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, options.pollMs ?? FOLLOW_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          // A burst of events (a commit, a record and its event line) settles into one reading.
          setTimeout(done, options.signal.aborted ? 0 : 100);
        };
      });
      wake = undefined;
    }
    return 'aborted';
  } finally {
    for (const { watcher } of watchers.values()) watcher.close();
    for (const stop of streams.values()) stop();
  }
}

/** Follows the event stream (and place records) of each repository of the report that has them, and no other. */
function followReport(streams: Map<string, () => void>, report: StatusReport, poke: () => void): number {
  return followStreams(streams, [...report.repositories.map((r) => r.root), ...report.places.map((p) => p.repo)], poke);
}

/** What the view watches besides the event streams: the host's state, each repository's branch refs, each place's folder and transcript. */
function pathsOf(report: StatusReport): Set<string> {
  const paths = new Set<string>([hostStateDir()]);
  for (const p of report.places) {
    const common = join(p.repo, '.git');
    for (const path of [join(common, 'refs', 'heads'), join(common, 'refs', 'heads', p.kind), p.path]) {
      if (existsSync(path)) paths.add(path);
    }
    const transcript = p.stage?.agent?.transcript;
    if (transcript && existsSync(dirname(transcript))) paths.add(dirname(transcript));
  }
  return paths;
}
