import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { placeFrom } from '../command.js';
import { printJson } from '../output.js';
import { superviseAfter } from './watch.js';
import { dropPlace } from '../../engine/tidy/drop.js';

/** `flume drop PLACE`: mark a launch dropped, so tidying takes its place. */
export const dropCommand: Command = {
  ...commandLine('drop'),
  describe: 'Mark a launch dropped; tidying then removes its place and keeps a branch with work its target lacks.',
  async run(args, context) {
    const { repository, key } = await placeFrom(args, context);
    const record = await dropPlace(repository, key, args.reason === undefined ? undefined : String(args.reason));
    // The supervisor tidies what is dropped.
    await superviseAfter(args, context, record);
    if (args.json) printJson(context.io, { place: record.id, dropped: record.dropped });
    else context.io.stdout(`dropped ${record.id}; \`flume tidy\` removes its place\n`);
  },
};
