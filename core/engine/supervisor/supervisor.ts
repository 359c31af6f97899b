/**
 * `flume watch`, the host's supervisor (DESIGN.md's ruling): one per host, woken by file-system events
 * (refs moving, transcripts growing, files appearing in places, records changing) with a slow poll as
 * a fallback. Each pass reads each repository once, decides for every place without a lock, and
 * steps (under the place's lock) only the places that have something to do; then it tidies places
 * whose work is over. A step runs on its own: a pass starts it and goes on (a stage start can wait a
 * minute for an agent's input box), so a slow place holds only itself; each place has at most one
 * step under way, and its end wakes a pass that looks at the place again.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FlumeError, flumeError } from '../../api/errors.js';
import { sameProcess } from '../../support/process.js';
import { longTimeout } from '../../support/duration.js';
import { openRepository, type Repository } from '../../config/repository.js';
import { requireTrust } from '../../config/trust.js';
import type { FlumePlugin } from '../../api/plugin.js';
import { reachDriver } from '../../drivers/reach.js';
import { acquireLock } from '../../state/lock.js';
import { ensureHostStateDir, hostStateDir, knownRepositories } from '../../state/host.js';
import { keyOf, placesStateDir, readRecords } from '../../state/store.js';
import { decide, type Facts } from '../stage/decide.js';
import { readPlaces, type PlaceReading, type Reading } from '../status/reading.js';
import { advance, gather, limitsOf } from '../stage/step.js';
import { tidy } from '../tidy/tidy.js';
import { workOver } from '../tidy/over.js';
import type { KindDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';
import { rewatch, type Watched } from './files.js';
import { isOwnNote, supervisorLock, writePassNote } from './supervisor-state.js';
import { notePanes, paneSweep, sweepPanes, type PaneSweep } from './panes.js';
import type { PaneHost } from '../../api/pane-host.js';

export { supervisorLock };

/** How the supervisor runs. */
export interface SupervisorOptions {
  /** The slow poll, ms (default 30 s): the fallback when no event comes, and the clock for stuck. */
  pollMs?: number;
  /** Exit after this long with no place on the host (default 10 min); 0 never exits. */
  lingerMs?: number;
  /** Where lines about what it did go. */
  log?: (line: string) => void;
  /** Stops the loop when aborted. */
  signal?: AbortSignal;
  /**
   * Started once the supervisor holds the host's lock, closed before it lets the lock go: the CLI
   * answers read commands on the host's socket with it (core/cli/warm.ts).
   */
  serve?: () => Promise<{ close(): Promise<void> } | undefined>;
  /**
   * What a pass does with each step it starts: by default nothing (the pass goes on, and the step's end
   * wakes the next). A caller that wants each pass to wait for its steps (the supervisor benchmark's
   * side-by-side figure, bench/watch-awaiting.mjs) returns the step.
   */
  afterStep?: (step: Promise<void>) => Promise<void> | void;
}

/** Runs the supervisor until aborted, or until the host has had no place for `lingerMs`. */
export async function supervise(preset: () => Promise<FlumePlugin[]>, options: SupervisorOptions = {}): Promise<void> {
  await ensureHostStateDir();
  const lock = await acquireLock(supervisorLock(), { timeoutMs: 0, what: 'The supervisor of this host' }).catch((error) => {
    if (error instanceof FlumeError && error.code === 'PLACE_BUSY') {
      throw flumeError('WATCH_RUNNING', {}, {
        details: { lock: supervisorLock() },
      });
    }
    throw error;
  });
  const log = options.log ?? (() => undefined);
  const pollMs = options.pollMs ?? 30_000;
  const lingerMs = options.lingerMs ?? 10 * 60_000;
  const repositories = new Map<string, RepositoryEntry>();
  const skipped = new Map<string, string>();
  const watchers = new Map<string, Watched>();
  let wake: (() => void) | undefined;
  let dirty = true;
  // How many events each watched path has had: a memo read before the last of them is read again.
  const touched = new Map<string, number>();
  let touches = 0;
  const poke = (_event?: unknown, filename?: string | null, path?: string) => {
    // The note of a pass is written after it: it must not wake the next one.
    if (isOwnNote(filename)) return;
    if (path) {
      touched.set(path, ++touches);
      if (typeof filename === 'string') touched.set(join(path, filename), touches);
    }
    dirty = true;
    wake?.();
  };
  options.signal?.addEventListener('abort', poke);
  let emptySince = Date.now();
  let passes = 0;
  const run: Run = { log, pollMs, judged: 0, steps: new Map(), started: new Map(), stalled: new Set(), ended: new Map(), ends: 0, full: true, sweep: paneSweep(), touched, poke: () => poke(), afterStep: options.afterStep };
  let lastFull = 0;
  const opening = new Map<string, Promise<Opened>>();
  // A repository whose opening takes longer than a moment is left to finish on its own; the next pass
  // (woken when it ends) takes it. So a config that hangs stalls no other repository's places.
  const opened = async (root: string): Promise<Opened | undefined> => {
    let promise = opening.get(root);
    if (!promise) {
      promise = repositoryFor(preset, repositories, root).then((entry) => ({ entry }), (error: unknown) => ({ error }));
      opening.set(root, promise);
    }
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([promise, new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), OPEN_GRACE_MS)))]);
    clearTimeout(timer);
    if (result) {
      opening.delete(root);
      return result;
    }
    void promise.then(poke);
    return undefined;
  };
  const served = await options.serve?.().catch((error: Error) => void log(`not answering read commands: ${error.message}`));
  try {
    while (!options.signal?.aborted) {
      dirty = false;
      // A full look at the slow poll, beside the events: every place read afresh (no memo), so
      // whatever a missed event or a lost wake-up left unread is read within one poll.
      run.full = Date.now() - lastFull >= pollMs;
      if (run.full) lastFull = Date.now();
      const paths = new Set<string>([hostStateDir()]);
      let places = 0;
      // Dead panes are swept at a full look that read every known repository: a skipped one's places are unknown.
      let whole = run.full;
      const hosts = new Map<string, PaneHost>();
      for (const { root } of await knownRepositories().catch((error: Error) => (log(error.message), []))) {
        const result = await opened(root);
        // Its config is still loading (probed for the first time): the pass goes on without it.
        if (!result) {
          whole = false;
          continue;
        }
        if ('entry' in result) skipped.delete(root);
        else {
          const error = result.error;
          // An untrusted, hung or broken config stops its own repository only: named once, then
          // passed over (a hung one answers from the host's probe record at once) until it changes.
          repositories.delete(root);
          whole = false;
          const line = `${root}: skipped: ${error instanceof FlumeError ? `${error.code} ` : ''}${(error as Error).message.split('\n')[0]}`;
          if (skipped.get(root) !== line) log(line);
          skipped.set(root, line);
          paths.add(root);
          continue;
        }
        try {
          places += await pass(result.entry, paths, run);
          for (const host of result.entry.repository.flume.hosts.all()) if (!hosts.has(host.key)) hosts.set(host.key, host);
        } catch (error) {
          whole = false;
          log(`${root}: ${(error as Error).message.split('\n')[0]}`);
        }
      }
      if (whole) {
        const closed = await sweepPanes(run.sweep, [...hosts.values()], log);
        if (closed > 0) log(`closed ${closed} dead ${closed === 1 ? 'pane' : 'panes'} no place needs`);
      } else run.sweep = paneSweep();
      // A path watched for the first time (a new place's folder, its agent's transcript) may have
      // changed after this pass read it and before its watcher opened: one more pass reads it.
      if (rewatch(watchers, paths, poke) > 0) dirty = true;
      if (run.full) forgetUntouched(touched, paths, repositories);
      reportStalls(run);
      // Status reads when the last pass ended; tests wait on passes rather than on the clock.
      await writePassNote({ pid: process.pid, passes: ++passes, judged: run.judged, steps: run.steps.size, at: new Date().toISOString() }).catch((error: Error) => log(error.message));
      if (places > 0) emptySince = Date.now();
      else if (lingerMs > 0 && Date.now() - emptySince >= lingerMs) break;
      if (!dirty) await new Promise<void>((done) => {
        const timer = longTimeout(done, pollMs);
        wake = () => {
          timer.clear();
          // Let a burst of events settle into one pass.
          setTimeout(done, 50);
        };
      });
      wake = undefined;
    }
  } finally {
    for (const { watcher } of watchers.values()) watcher.close();
    // Steps under way end before the lock goes: a new supervisor never steps a place beside them.
    await Promise.allSettled(run.steps.values());
    await served?.close();
    await lock.release();
  }
}

/** What the passes of one supervisor share. */
interface Run {
  log: (line: string) => void;
  pollMs: number;
  /** How many times tidying judged a place whose work is over. */
  judged: number;
  /** The steps under way, by place (its repository's common dir and key): at most one a place. */
  steps: Map<string, Promise<void>>;
  /** When each step under way began (ms), by place; and the places whose long step was reported. */
  started: Map<string, { at: number; id: string }>;
  stalled: Set<string>;
  /** This pass is a full look: every place's facts read afresh. */
  full: boolean;
  /** When each place's last step ended, as a count of step ends (`ends` at that moment). */
  ended: Map<string, number>;
  /** How many steps have ended so far. */
  ends: number;
  /** Wakes the next pass. */
  poke: () => void;
  /** How many events each watched path has had (a count of all events at its last one). */
  touched: Map<string, number>;
  /** The panes the places name, and the dead ones no place needed at the last full look. */
  sweep: PaneSweep;
  /** The caller's `afterStep`. */
  afterStep?: SupervisorOptions['afterStep'];
}

/**
 * One pass over a repository: decide for every place from one reading; start a step for those with
 * work, without waiting for it. A place whose step is under way is left to it; so is a place whose
 * step ended after this pass began reading (the reading predates the step's work; the end woke the
 * next pass, which reads afresh).
 */
async function pass(entry: RepositoryEntry, paths: Set<string>, run: Run): Promise<number> {
  const { repository } = entry;
  const { info } = repository;
  const { log, pollMs, steps } = run;
  const began = run.ends;
  const settled = (key: string) => !steps.has(join(info.commonDir, key)) && (run.ended.get(join(info.commonDir, key)) ?? 0) <= began;
  const { records } = await readRecords(info.commonDir);
  if (run.full) notePanes(run.sweep, records);
  // What was kept of a place whose record is gone goes with it: a supervisor that runs for days
  // holds what its live places need, not a memo of every place it ever saw.
  const live = new Set(records.map(keyOf));
  for (const key of entry.memo.keys()) if (!live.has(key)) entry.memo.delete(key);
  for (const key of run.ended.keys()) if (dirname(key) === info.commonDir && !live.has(basename(key)) && !steps.has(key)) run.ended.delete(key);
  paths.add(placesStateDir(info.commonDir));
  paths.add(join(info.commonDir, 'refs', 'heads'));
  if (records.length === 0) return 0;
  const reading = await readPlaces(info.root, records);
  const over: Array<{ key: string; stamp: string }> = [];
  await Promise.all(
    reading.places.map(async (place) => {
      const record = place.record;
      const kind = repository.flume.kinds.get(record.kind);
      paths.add(join(info.commonDir, 'refs', 'heads', record.kind));
      if (existsSync(record.path)) paths.add(record.path);
      const handle = record.stage?.agent;
      const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
      if (handle && driver) for (const path of driver.watchPaths(handle)) paths.add(path);
      for (const path of entry.memo.get(keyOf(record))?.facts.deliverable?.readFrom ?? []) paths.add(dirname(path));
      // Tidying costs a pass of its own: run it only when some place's work reads as over.
      // A landed place whose last stage the engine has not finished, its agent still running, is not
      // tidying's yet: the step ends the stage and stops the agent, and its end wakes a pass. Judged
      // now, it would read "kept: its agent is still running" for the moment in between.
      const finishing = !record.dropped && !record.finished && Boolean(record.stage?.agent?.pid && sameProcess(record.stage.agent.pid, record.stage.agent.pidStart));
      // Landed as the landing reader reads it (a lander's record, where one is installed; else git).
      if ((record.dropped && record.phase !== 'gone') || (!finishing && (await workOver(repository.flume, reading, place).catch(() => undefined)) === 'landed')) {
        over.push({ key: keyOf(record), stamp: await tidyStamp(reading, place) });
      }
      if (!kind || !settled(keyOf(record))) return;
      const { facts, fresh } = await factsOf(entry.memo, repository, reading, place, kind, run.full, run.touched);
      const action = decide(kind, record, facts, limitsOf(repository, record.stage ? kind.stages[record.stage.index] : undefined, kind));
      // A record written with events not yet published (a flume killed between the two) is stepped:
      // the step publishes them, whatever it decides.
      if (action.type === 'wait' && !record.unpublished?.length) return;
      // Checked again: deciding awaited, and only one step a place may be under way.
      if (!settled(keyOf(record))) return;
      // A reading this pass took (not a memo) may spare the step its own first reading.
      const step = stepPlace(repository, record, run, fresh ? { record, facts } : undefined);
      await run.afterStep?.(step);
    }),
  );
  // A place tidying kept is judged again only when what it was judged on changed, or at the slow
  // poll: judging takes its lock (a file event) and would otherwise wake the next pass, without end.
  const now = Date.now();
  for (const key of entry.judged.keys()) if (!over.some((o) => o.key === key)) entry.judged.delete(key);
  for (const { key, stamp } of over) {
    // A place whose step is under way is judged once the step has ended (its end wakes a pass).
    if (!settled(key)) continue;
    const last = entry.judged.get(key);
    if (last && last.stamp === stamp && now - last.at < pollMs) continue;
    entry.judged.set(key, { stamp, at: now });
    run.judged++;
    try {
      for (const outcome of await tidy(repository, { only: key })) {
        if (outcome.action === 'removed' || (outcome.action === 'kept' && outcome.reason !== last?.reason)) log(`${outcome.id}: tidy ${outcome.action}${outcome.reason ? `: ${outcome.reason}` : ''}`);
        entry.judged.set(key, { stamp, at: now, reason: outcome.reason });
      }
    } catch (error) {
      log(`${key}: tidy: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return records.length;
}

/**
 * Starts a step of the place and returns it; it is under way (in `run.steps`) until it ends. The end
 * of a step that acted wakes a pass, which looks at the place again at once: what the step did may
 * call for more. A step that did nothing wakes nobody: it read the place afresh under its lock and
 * found nothing to do, so a pass that read it otherwise (a memo, a moment earlier) would only start
 * it again, pass after pass. Nor does one that failed: one that fails at once (the place locked by a
 * launch, retry or tidy; an agent that cannot start) would fail again at once, pass after pass; what
 * it wrote before failing, and a lock's release, are file events that wake a pass anyway.
 */
function stepPlace(repository: Repository, record: PlaceRecord, run: Run, prior?: { record: PlaceRecord; facts: Facts }): Promise<void> {
  const key = join(repository.info.commonDir, keyOf(record));
  const steps = run.steps;
  let acted = false;
  const step = advance(repository, keyOf(record), { lockTimeoutMs: 0, prior })
    .then((result) => {
      acted = result.actions.length > 0;
      for (const done of result.actions) run.log(`${record.id}: ${done.type}${'reason' in done ? ` (${done.reason})` : ''}`);
    })
    .catch((error) => {
      if (!(error instanceof FlumeError && error.code === 'PLACE_BUSY')) run.log(`${record.id}: ${(error as Error).message.split('\n')[0]}`);
    })
    .finally(() => {
      steps.delete(key);
      run.started.delete(key);
      if (run.stalled.delete(key)) run.log(`${record.id}: the long step ended`);
      run.ended.set(key, ++run.ends);
      if (acted) run.poke();
    });
  steps.set(key, step);
  run.started.set(key, { at: Date.now(), id: record.id });
  return step;
}

/** How long a step may be under way before the supervisor's log says so, ms. */
const STALL_MS = 5 * 60_000;

/**
 * Says in the log, once, which place's step has been under way past STALL_MS: each place has at most
 * one step, so such a place is moved on by nothing else until it ends. (Every program a step runs has
 * a time limit; the line says where one did not hold.)
 */
function reportStalls(run: Run): void {
  const now = Date.now();
  for (const [key, { at, id }] of run.started) {
    if (now - at < STALL_MS || run.stalled.has(key)) continue;
    run.stalled.add(key);
    run.log(`${id}: a step under way for ${Math.round((now - at) / 60_000)} min; the place waits for it`);
  }
}

async function repositoryFor(preset: () => Promise<FlumePlugin[]>, cache: Map<string, RepositoryEntry>, root: string) {
  const cached = cache.get(root);
  // Trust is asked every pass (a file read and a digest): an edited or revoked config stops at once.
  const digest = (await requireTrust(root))?.digest;
  // The config is read again now and then, so an edited flume.config.ts takes effect.
  if (cached && cached.digest === digest && Date.now() - cached.openedAt < 60_000) return cached;
  const entry = { repository: await openRepository(root, await preset()), openedAt: Date.now(), digest, memo: cached?.memo ?? new Map<string, Memo>(), judged: cached?.judged ?? new Map() };
  cache.set(root, entry);
  return entry;
}

/** How long a pass waits for a repository to open before going on without it, ms. */
const OPEN_GRACE_MS = 1000;

/** A repository opened, or why it could not be. */
type Opened = { entry: RepositoryEntry } | { error: unknown };

/** A repository the supervisor keeps open, with what it last read of each place. */
interface RepositoryEntry {
  repository: Repository;
  openedAt: number;
  /** The digest of the config it was opened with (undefined: none). */
  digest?: string;
  memo: Map<string, Memo>;
  /** Places whose work is over, as tidying last judged them: the stamp it judged, when, and its answer. */
  judged: Map<string, { stamp: string; at: number; reason?: string }>;
}

/** The facts last read for a place, and the stamp of everything they were read from. */
interface Memo {
  stamp: string;
  facts: Facts;
  /** The files its stamp counted the events of. */
  files: string[];
}

/**
 * Forgets the event counts of paths neither watched nor named by a memo (a file that came and went in
 * a watched folder: each record written leaves the name of its temporary file). A memo's files are
 * kept: a count forgotten after its event would read as no event, and the memo as current.
 */
function forgetUntouched(touched: Map<string, number>, paths: Set<string>, repositories: Map<string, RepositoryEntry>): void {
  const wanted = new Set(paths);
  for (const entry of repositories.values()) for (const memo of entry.memo.values()) for (const file of memo.files) wanted.add(file);
  for (const path of touched.keys()) if (!wanted.has(path)) touched.delete(path);
}

/**
 * The facts of a place: read afresh when anything they come from changed (its record, its branch
 * head, its transcript, its agent's state file, its folder), else the last reading with the clock
 * moved on. An idle place then costs a few stat calls a pass, not an agent reading (processes). A
 * stage whose prompt is not yet taken is always read afresh: a slow start shows only on screen.
 */
async function factsOf(memo: Map<string, Memo>, repository: Repository, reading: Reading, place: PlaceReading, kind: KindDef, full = false, touched: Map<string, number> = new Map()): Promise<{ facts: Facts; fresh: boolean }> {
  const record = place.record;
  const handle = record.stage?.agent;
  const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
  // The driver names every file its readings come from (its agent's own state file too).
  const watched = handle && driver ? driver.watchPaths(handle) : [];
  const key = keyOf(record);
  const last = memo.get(key);
  // The files the last reading of its deliverable came from outside any commit (a lander's record): no ref moves when they do.
  const readFrom = last?.facts.deliverable?.readFrom ?? [];
  const files = [handle?.transcriptPath, ...watched, record.path, ...readFrom];
  const stats = await Promise.all(files.map((file) => (file ? stat(file).then((s) => `${s.size}:${s.mtimeMs}`, () => '-') : '-')));
  // A folder's own time moves only when an entry comes or goes: what grows inside it (a chat file,
  // a database's write-ahead log) shows only as an event of its watch, counted by path. A folder the
  // reading also names a file of (Claude Code's transcript, its own state file) is judged by that
  // file alone: another agent's file in a shared folder reads nothing of this place's again.
  const events = files.map((file) => (file && !files.some((other) => other !== file && other !== undefined && dirname(other) === file) ? (touched.get(file) ?? 0) : 0));
  // The target's head too: a landing changes what the place's facts mean (one pass, one reading). A
  // killed agent changes no file: whether its process runs is part of what the facts were read from.
  const { unpublished: _unpublished, ...recorded } = record;
  const stamp = JSON.stringify([recorded, place.branch?.head, reading.repository.branches.get(record.target)?.head, stats, events, handle?.pid ? sameProcess(handle.pid, handle.pidStart) : null]);
  if (!full && last && last.stamp === stamp && record.stage?.delivery === 'taken') return { facts: { ...last.facts, now: Date.now() }, fresh: false };
  const facts = await gather(repository, reading, place, kind, Date.now());
  memo.set(key, { stamp, facts, files: files.filter((file): file is string => file !== undefined) });
  return { facts, fresh: true };
}

/**
 * What tidying judges a place on, as one string: its record (less what tidying itself writes), its
 * branch's and its target's heads, its folder, and whether its agent runs. Equal stamps, equal answer.
 */
async function tidyStamp(reading: Reading, place: PlaceReading): Promise<string> {
  // Less what a recorded event leaves in the record a moment (its publishing writes the record again).
  const { kept: _kept, unpublished: _unpublished, ...record } = place.record;
  const folder = await stat(record.path).then((s) => `${s.mtimeMs}`, () => '-');
  const agent = record.stage?.agent;
  return JSON.stringify([record, place.branch?.head, reading.repository.branches.get(record.target)?.head, folder, agent?.pid ? sameProcess(agent.pid, agent.pidStart) : null]);
}

