/**
 * The commands that act on a place's agent: tell, stop, retry, go-on, stage, next. With `--wait`,
 * tell, retry, stage and next then wait as `flume wait` does and print the place instead.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { placeFrom, statusPlace } from '../command.js';
import { printJson } from '../output.js';
import { superviseAfter } from './watch.js';
import { flumeError } from '../../api/errors.js';
import { nextStage, restartStage, stopAgent, tell } from '../../engine/stage/operate.js';
import { beforeActing, waitAndReport, waitOptions } from '../callers/wait.js';
import type { PlaceRecord } from '../../api/record.js';
import type { Repository } from '../../config/repository.js';

/** `flume tell PLACE (TEXT | --file FILE)`. */
export const tellCommand: Command = {
  ...commandLine('tell'),
  describe: 'Tell the place\'s agent more text: confirmed in its transcript as a prompt, or refused with nothing typed.',
  async run(args, context) {
    waitOptions(args);
    if ((args.text === undefined) === (args.file === undefined)) {
      throw flumeError('BAD_USAGE', {}, { variant: 'tellTwice' });
    }
    const text = args.file !== undefined ? await readText(String(args.file)) : String(args.text);
    const { repository, key } = await placeFrom(args, context);
    const after = await beforeActing(args, repository, 'told');
    const { record, sends, held } = await tell(repository, key, text);
    await superviseAfter(args, context, record);
    if (after !== undefined) return waitAndReport(args, context, repository, record, after);
    if (args.json) printJson(context.io, { place: record.id, taken: !held, ...(held ? { held } : {}), sends });
    else context.io.stdout(`${toldLine(record.id, sends, held)}\n`);
  },
};

/** What `flume tell` (and the live view's tell) answers. */
export function toldLine(place: string, sends: number, held?: true): string {
  if (held) return `told ${place}: queued by its agent, which submits it when its turn ends`;
  return `told ${place}: taken${sends > 1 ? ' (sent twice)' : ''}`;
}

/** `flume stop PLACE [--force]`. */
export const stopCommand: Command = {
  ...commandLine('stop'),
  describe: 'End the place\'s agent; refuses a working one without --force, and fails if it did not exit.',
  async run(args, context) {
    const { repository, key } = await placeFrom(args, context);
    const { record, already } = await stopAgent(repository, key, Boolean(args.force));
    await superviseAfter(args, context, record);
    if (args.json) printJson(context.io, { place: record.id, state: 'exited', already });
    else context.io.stdout(`${record.id}: agent ${already ? 'was not running' : 'stopped'}\n`);
  },
};

/** `flume retry PLACE`. */
export const retryCommand: Command = {
  ...commandLine('retry'),
  describe: 'Start the place\'s current stage again with a fresh agent and its prompt (readying the place first).',
  async run(args, context) {
    waitOptions(args);
    const { repository, key } = await placeFrom(args, context);
    const after = await beforeActing(args, repository, 'stage-started');
    const record = await restartStage(repository, key, {});
    await superviseAfter(args, context, record);
    if (after !== undefined) return waitAndReport(args, context, repository, record, after);
    await report(context, repository, Boolean(args.json), record, 'restarted');
  },
};

/** `flume go-on PLACE [--note TEXT]`. */
export const goOnCommand: Command = {
  ...commandLine('go-on'),
  describe: 'Run a question\'s stage again in the same place with a fresh session; notes join the question.',
  async run(args, context) {
    const { repository, key } = await placeFrom(args, context);
    const record = await restartStage(repository, key, { goOn: true, note: args.note === undefined ? undefined : String(args.note) });
    await superviseAfter(args, context, record);
    await report(context, repository, Boolean(args.json), record, 'went on with');
  },
};

/** `flume stage PLACE STAGE`. */
export const stageCommand: Command = {
  ...commandLine('stage'),
  describe: 'Start a named stage (of the place\'s kind) in a place flume made: how an orchestrator runs stages of its own.',
  async run(args, context) {
    waitOptions(args);
    const { repository, key } = await placeFrom(args, context);
    const after = await beforeActing(args, repository, 'stage-started');
    const record = await restartStage(repository, key, { stage: String(args.stage) });
    await superviseAfter(args, context, record);
    if (after !== undefined) return waitAndReport(args, context, repository, record, after);
    await report(context, repository, Boolean(args.json), record, 'started');
  },
};

/** `flume next PLACE [--note TEXT]`. */
export const nextCommand: Command = {
  ...commandLine('next'),
  describe: 'Go on from a place that waits for its caller (a gate, or a kind whose caller starts its stages): start the stage after the one that delivered.',
  async run(args, context) {
    waitOptions(args);
    const { repository, key } = await placeFrom(args, context);
    const after = await beforeActing(args, repository, 'stage-started');
    const { record, action } = await nextStage(repository, key, { note: args.note === undefined ? undefined : String(args.note) });
    await superviseAfter(args, context, record);
    // Where next started no stage (the gate was the last stage's), the place's end as it stands answers.
    if (after !== undefined) return waitAndReport(args, context, repository, record, action.type === 'start-stage' ? after : undefined);
    if (action.type === 'start-stage') return report(context, repository, Boolean(args.json), record, action.fixRound ? 'started a fix round of' : 'went on to');
    // The stage that waited was the last: the launch is over (or waits on the operator, as status says).
    const words = action.type === 'finish' ? 'every stage delivered' : action.type === 'mark-waiting' ? `it waits on you: ${action.needs}` : 'nothing to start';
    if (args.json) printJson(context.io, { place: record.id, stage: (await statusPlace(context, repository, record.id)).stage });
    else context.io.stdout(`${record.id}: ${words}\n`);
  },
};

async function report(context: Parameters<Command['run']>[1], repository: Repository, json: boolean, record: PlaceRecord, verb: string): Promise<void> {
  if (json) {
    // The stage as status shows it (stage.schema.json), not flume's record of it.
    printJson(context.io, { place: record.id, stage: (await statusPlace(context, repository, record.id)).stage });
    return;
  }
  const stage = record.stage!;
  context.io.stdout(`${verb} ${record.id} stage ${stage.name} (attempt ${stage.attempt}): prompt ${stage.delivery}\n`);
}

async function readText(file: string): Promise<string> {
  return readFile(resolve(file), 'utf8').catch(() => {
    throw flumeError('BAD_USAGE', { file }, { variant: 'unreadableFile' });
  });
}
