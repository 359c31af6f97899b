/**
 * `flume wait PLACE`, and `--wait` on the commands that act on a place: block until its stage
 * reaches an outcome, then print the place as `flume status PLACE` does (status.schema.json).
 */
import type { CliContext, Command } from '../command.js';
import { commandLine } from '../options.js';
import { placeFrom } from '../command.js';
import { printJson } from '../output.js';
import { onStop } from '../process-io.js';
import { duration, ensureSupervisor } from '../commands/watch.js';
import { describePlace } from '../view/place-words.js';
import { flumeError } from '../../api/errors.js';
import { lastEventId, readEvents, type EventName } from '../../state/events.js';
import { lockHolder } from '../../state/lock.js';
import { supervisorLock } from '../../engine/supervisor/supervisor.js';
import { OUTCOMES, waitForPlace, type Outcome } from '../../engine/status/wait.js';
import type { PlaceRecord } from '../../api/record.js';
import type { Repository } from '../../config/repository.js';

/** `flume wait PLACE [--for OUTCOMES] [--timeout DURATION] [--json]`. */
export const waitCommand: Command = {
  ...commandLine('wait'),
  describe: 'Block until the place\'s stage ends (delivered, stopped short, stuck, never started, over budget, awaiting its caller, or the place gone), then show it as status does.',
  async run(args, context) {
    waitOptions(args);
    const { repository, key } = await placeFrom(args, context);
    const place = key.replace('--', '/');
    const { readRecord } = await import('../../state/store.js');
    const record = await readRecord(repository.info.commonDir, key);
    if (!record) {
      throw flumeError('UNKNOWN_PLACE', { place, repo: repository.info.root }, { details: { place: key } });
    }
    return waitAndReport(args, context, repository, record);
  },
};

/** Where a `--wait` after acting starts counting: after the act's own event (its `anchor`), which follows event `id`. */
export interface ActMark {
  id: number;
  anchor: EventName;
}

/**
 * Marks the stream before a command acts, where it was asked to `--wait`: the last event's id, and
 * the event the act itself records (a stage started, a tell taken). Only outcomes after that event
 * count, so an end of the stage before, recorded late by the supervisor, never answers the wait.
 */
export async function beforeActing(args: Record<string, unknown>, repository: Repository, anchor: EventName): Promise<ActMark | undefined> {
  return args.wait ? { id: await lastEventId(repository.info.commonDir), anchor } : undefined;
}

/** The id after which a wait marked by `mark` counts outcomes: its act's event's, or the mark's own when the act recorded none. */
async function countFrom(repository: Repository, place: string, mark: ActMark): Promise<number> {
  const since = await readEvents(repository.info.commonDir, { since: mark.id, place });
  return since.filter((event) => event.event === mark.anchor).at(-1)?.id ?? mark.id;
}

/**
 * Waits (as `flume wait` does) for what follows the act `mark` marks, or for any outcome the place
 * shows now without one; prints the place and returns the exit code (0 reached; a timeout is
 * WAIT_TIMEOUT, exit 4). Makes sure a supervisor runs to move the place on, as acting commands do.
 */
export async function waitAndReport(args: Record<string, unknown>, context: CliContext, repository: Repository, record: PlaceRecord, mark?: ActMark): Promise<number> {
  const after = mark ? await countFrom(repository, record.id, mark) : undefined;
  const { outcomes, timeoutMs } = waitOptions(args);
  // Where no supervisor runs (none is started for a place launched with --no-watch, or with
  // --no-watch here), the wait steps the place itself, once a second, as an acting command does.
  if (args.watch !== false && record.launched?.watch !== false) await ensureSupervisor(context);
  const { advance } = await import('../../engine/stage/step.js');
  const step = async () => {
    if ((await lockHolder(supervisorLock()))?.alive) return;
    await advance(repository, record.id.replace('/', '--'), { lockTimeoutMs: 0 }).catch(() => undefined);
  };
  const controller = new AbortController();
  const off = onStop(() => controller.abort());
  try {
    const result = await waitForPlace(context.preset, {
      root: repository.info.root,
      commonDir: repository.info.commonDir,
      place: record.id,
      outcomes,
      timeoutMs,
      after,
      signal: controller.signal,
      step,
      pollMs: 1000,
    });
    if (!result.reached) {
      if (controller.signal.aborted) return 130;
      throw flumeError('WAIT_TIMEOUT', { place: record.id, outcomes: outcomes.join(', '), timeout: String(args.timeout) }, {
        details: { place: record.id, outcomes, state: result.place?.stage?.state ?? null },
      });
    }
    if (args.json) printJson(context.io, { ...result.report, reached: result.reached });
    else if (result.place) context.io.stdout(`reached: ${result.reached}\n${describePlace(result.place)}`);
    else context.io.stdout(`${record.id}: gone (tidied)\n`);
    return 0;
  } finally {
    off();
  }
}

/**
 * What `--for` and `--timeout` ask of a wait; a bad one is BAD_USAGE. A command that waits after
 * acting reads them before it acts, so a refused one changes nothing.
 */
export function waitOptions(args: Record<string, unknown>): { outcomes: Outcome[]; timeoutMs?: number } {
  return { outcomes: outcomesFrom(args.for), timeoutMs: args.timeout === undefined ? undefined : duration('timeout', args.timeout) };
}

function outcomesFrom(value: unknown): Outcome[] {
  if (value === undefined) return Object.keys(OUTCOMES) as Outcome[];
  const named = String(value).split(',').map((word) => word.trim()).filter(Boolean);
  const unknown = named.filter((word) => !(word in OUTCOMES));
  if (unknown.length || named.length === 0) {
    throw flumeError('BAD_USAGE', { flag: 'for', value: JSON.stringify(String(value)), known: Object.keys(OUTCOMES).join(', ') }, {
      variant: 'outcomes',
      details: { for: String(value) },
    });
  }
  return named as Outcome[];
}
