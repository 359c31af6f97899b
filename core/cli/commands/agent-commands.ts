/** The commands that act on a place's agent: tell, stop, retry, go-on, stage. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { jsonOption, placeFrom, repoOption, statusPlace } from '../command.js';
import { printJson } from '../output.js';
import { superviseAfter, watchOption } from './watch.js';
import { flumeError } from '../../api/errors.js';
import { restartStage, stopAgent, tell } from '../../engine/stage/operate.js';
import type { PlaceRecord } from '../../api/record.js';
import type { Repository } from '../../config/repository.js';

const placeArg = { type: 'string', describe: 'The place: kind/name, kind--name, or its folder.' } as const;

/** `flume tell PLACE (TEXT | --file FILE)`. */
export const tellCommand: Command = {
  command: 'tell <place> [text]',
  describe: 'Tell the place\'s agent more text: confirmed in its transcript as a prompt, or refused with nothing typed.',
  builder: (yargs) =>
    watchOption(jsonOption(repoOption(yargs)))
      .positional('place', placeArg)
      .positional('text', { type: 'string', describe: 'What to tell it.' })
      .option('file', { type: 'string', requiresArg: true, describe: 'A file holding what to tell it.' }),
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
  command: 'stop <place>',
  describe: 'End the place\'s agent; refuses a working one without --force, and fails if it did not exit.',
  builder: (yargs) =>
    watchOption(jsonOption(repoOption(yargs)))
      .positional('place', placeArg)
      .option('force', { type: 'boolean', describe: 'End it even while it works (what it is doing is lost).' }),
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
  command: 'retry <place>',
  describe: 'Start the place\'s current stage again with a fresh agent and its prompt (readying the place first).',
  builder: (yargs) => watchOption(jsonOption(repoOption(yargs))).positional('place', placeArg),
  async run(args, context) {
    const { repository, key } = await placeFrom(args, context);
    const record = await restartStage(repository, key, {});
    await superviseAfter(args, context, record);
    await report(context, repository, Boolean(args.json), record, 'restarted');
  },
};

/** `flume go-on PLACE [--note TEXT]`. */
export const goOnCommand: Command = {
  command: 'go-on <place>',
  describe: 'Run a question\'s stage again in the same place with a fresh session; notes join the question.',
  builder: (yargs) =>
    watchOption(jsonOption(repoOption(yargs)))
      .positional('place', placeArg)
      .option('note', { type: 'string', requiresArg: true, describe: 'The operator\'s notes for the next round.' }),
  async run(args, context) {
    const { repository, key } = await placeFrom(args, context);
    const record = await restartStage(repository, key, { goOn: true, note: args.note === undefined ? undefined : String(args.note) });
    await superviseAfter(args, context, record);
    await report(context, repository, Boolean(args.json), record, 'went on with');
  },
};

/** `flume stage PLACE STAGE`. */
export const stageCommand: Command = {
  command: 'stage <place> <stage>',
  describe: 'Start a named stage (of the place\'s kind) in a place flume made: how an orchestrator runs stages of its own.',
  builder: (yargs) =>
    watchOption(jsonOption(repoOption(yargs)))
      .positional('place', placeArg)
      .positional('stage', { type: 'string', describe: 'The stage name.' }),
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
