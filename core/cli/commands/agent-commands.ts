/** The commands that act on a place's agent: tell, stop, retry, go-on, stage. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { placeFrom, statusPlace } from '../command.js';
import { printJson } from '../output.js';
import { superviseAfter } from './watch.js';
import { flumeError } from '../../api/errors.js';
import { restartStage, stopAgent, tell } from '../../engine/stage/operate.js';
import type { PlaceRecord } from '../../api/record.js';
import type { Repository } from '../../config/repository.js';

/** `flume tell PLACE (TEXT | --file FILE)`. */
export const tellCommand: Command = {
  ...commandLine('tell'),
  describe: 'Tell the place\'s agent more text: confirmed in its transcript as a prompt, or refused with nothing typed.',
  async run(args, context) {
    if ((args.text === undefined) === (args.file === undefined)) {
      throw flumeError('BAD_USAGE', {}, { variant: 'tellTwice' });
    }
    const text = args.file !== undefined ? await readText(String(args.file)) : String(args.text);
    const { repository, key } = await placeFrom(args, context);
    const { record, sends } = await tell(repository, key, text);
    await superviseAfter(args, context, record);
    if (args.json) printJson(context.io, { place: record.id, taken: true, sends });
    else context.io.stdout(`told ${record.id}: taken${sends > 1 ? ' (sent twice)' : ''}\n`);
  },
};

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
    const { repository, key } = await placeFrom(args, context);
    const record = await restartStage(repository, key, {});
    await superviseAfter(args, context, record);
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
    const { repository, key } = await placeFrom(args, context);
    const record = await restartStage(repository, key, { stage: String(args.stage) });
    await superviseAfter(args, context, record);
    await report(context, repository, Boolean(args.json), record, 'started');
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
