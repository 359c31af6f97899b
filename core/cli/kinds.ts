import type { Command } from './command.js';
import { jsonOption, repositoryFrom, repoOption } from './command.js';
import { printJson } from './output.js';
import { deliverableOf } from '../context.js';

/** `flume kinds`: every kind with its stages and each stage's deliverable. */
export const kindsCommand: Command = {
  command: 'kinds',
  describe: 'List every kind (built-in and declared) with its stages and their deliverables.',
  builder: (yargs) => jsonOption(repoOption(yargs)),
  async run(args, context) {
    const { flume } = await repositoryFrom(args, context);
    const kinds = flume.kinds.all().map((kind) => ({
      name: kind.name,
      description: kind.description ?? '',
      declaredBy: flume.kinds.owner(kind.name),
      branch: kind.branch ?? `${kind.name}/{name}`,
      stages: kind.stages.map((stage) => ({ name: stage.name, deliverable: deliverableOf(stage).type, agent: stage.agent ?? flume.config.agent?.driver ?? 'claude-code' })),
    }));
    if (args.json) {
      printJson(context.io, { kinds });
      return;
    }
    for (const kind of kinds) {
      context.io.stdout(`${kind.name}${kind.description ? ` — ${kind.description}` : ''}\n`);
      kind.stages.forEach((stage, i) => context.io.stdout(`  ${i + 1}. ${stage.name} → ${stage.deliverable}\n`));
    }
  },
};
