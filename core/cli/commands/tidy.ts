import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { placeFrom, repositoryFrom } from '../command.js';
import { printJson } from '../output.js';
import { tidy } from '../../engine/tidy/tidy.js';

/** `flume tidy`: remove the places whose work is over, keeping any branch with work its target lacks. */
export const tidyCommand: Command = {
  ...commandLine('tidy'),
  describe: 'Remove places whose work is over (landed or dropped); keep any branch whose patches the target lacks.',
  async run(args, context) {
    const { repository, key } = args.place !== undefined ? await placeFrom(args, context) : { repository: await repositoryFrom(args, context), key: undefined };
    const outcomes = await tidy(repository, { only: key, dryRun: Boolean(args['dry-run']) });
    if (args.json) {
      printJson(context.io, { outcomes });
      return;
    }
    if (outcomes.length === 0) context.io.stdout('no places\n');
    for (const o of outcomes) {
      const branch = o.branchOutcome ? (o.branchOutcome.deleted ? `; branch ${o.branch} deleted` : `; branch ${o.branch} kept`) : '';
      context.io.stdout(`${o.action} ${o.id}${o.reason ? `: ${o.reason}` : ''}${branch}\n`);
    }
  },
};
