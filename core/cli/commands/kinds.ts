import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { repositoryFrom } from '../command.js';
import { printJson } from '../output.js';
import { deliverableOf, driverOf } from '../../config/repository.js';

/** `flume kinds`: every kind with its stages and each stage's deliverable. */
export const kindsCommand: Command = {
  ...commandLine('kinds'),
  describe: 'List every kind (built-in and declared) with its stages and their deliverables.',
  async run(args, context) {
    const { flume } = await repositoryFrom(args, context);
    const kinds = flume.kinds.all().map((kind) => ({
      name: kind.name,
      description: kind.description ?? '',
      declaredBy: flume.kinds.owner(kind.name),
      // The plugin whose kind of this name it stands in for (a repository's `fix` replaces the built-in); absent otherwise.
      replaces: flume.kinds.replaced(kind.name),
      branch: kind.branch ?? `${kind.name}/{name}`,
      // Who starts its stages: flume, or its caller (`flume stage`, `flume next`); a stage whose caller goes on after it is a gate.
      advance: kind.advance ?? 'flume',
      stages: kind.stages.map((stage) => ({ name: stage.name, deliverable: deliverableOf(stage).type, agent: driverOf(flume, stage), ...(stage.advance === 'caller' ? { gate: true } : {}) })),
    }));
    if (args.json) {
      printJson(context.io, { kinds });
      return;
    }
    for (const kind of kinds) {
      const builtIn = kind.replaces?.startsWith('flume:') ? 'built-in ' : '';
      const replaces = kind.replaces ? ` (replaces the ${builtIn}kind ${kind.name} of ${kind.replaces})` : '';
      const caller = kind.advance === 'caller' ? ' (its caller starts each stage)' : '';
      context.io.stdout(`${kind.name}${kind.description ? ` — ${kind.description}` : ''}${replaces}${caller}\n`);
      kind.stages.forEach((stage, i) => context.io.stdout(`  ${i + 1}. ${stage.name} → ${stage.deliverable}${stage.gate ? ' (gate: waits for flume next)' : ''}\n`));
    }
  },
};
