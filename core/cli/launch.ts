import type { Command } from './command.js';
import { jsonOption, repositoryFrom, repoOption } from './command.js';
import { printJson } from './output.js';
import { makePlace } from '../engine/launch.js';

/** `flume launch`: make a place for a launch, ready it, and start its first stage. */
export const launchCommand: Command = {
  command: 'launch',
  describe: 'Make a place for a launch (a worktree on <kind>/<name>), ready it, and start its first stage.',
  builder: (yargs) =>
    jsonOption(repoOption(yargs, 'The repository to launch in (default: the current folder).'))
      .option('kind', { type: 'string', demandOption: true, requiresArg: true, describe: 'The kind: fix, change, question, or one the repository declares.' })
      .option('name', { type: 'string', demandOption: true, requiresArg: true, describe: 'The launch name: the place is places/<kind>--<name> on <kind>/<name>.' })
      .option('brief', { type: 'string', requiresArg: true, describe: 'The brief: what the work is.' })
      .option('brief-file', { type: 'string', requiresArg: true, describe: 'A file holding the brief.' })
      .option('from', { type: 'string', requiresArg: true, describe: 'Where the branch starts (default: the branch the main checkout is on).' }),
  async run(args, context) {
    const repository = await repositoryFrom(args, context);
    const record = await makePlace(repository, {
      kind: String(args.kind),
      name: String(args.name),
      brief: args.brief === undefined ? undefined : String(args.brief),
      briefFile: args['brief-file'] === undefined ? undefined : String(args['brief-file']),
      from: args.from === undefined ? undefined : String(args.from),
    });
    if (args.json) {
      printJson(context.io, { place: record });
      return;
    }
    const { io } = context;
    io.stdout(`made ${record.id} at ${record.path} on ${record.branch} (from ${record.base.slice(0, 12)})\n`);
    if (record.ready.state === 'failed') io.stdout(`ready: FAILED at ${record.ready.failed?.step} (exit ${record.ready.failed?.exitCode})\n${indent(record.ready.failed?.tail ?? '')}\n`);
    else io.stdout(`ready: ${record.ready.state === 'none' ? 'nothing declared' : 'done'}\n`);
  },
};

function indent(text: string): string {
  return text.split('\n').map((line) => `  ${line}`).join('\n');
}
