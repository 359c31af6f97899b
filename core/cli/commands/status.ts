import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { printJson, processIo } from '../output.js';
import { onStop } from '../process-io.js';
import { status } from '../../engine/status/status.js';
import { describePlace } from '../view/place-words.js';
import { findRepository } from '../../support/git.js';

/** `flume status`: every place on the host (or in one repository), as it stands now. */
export const statusCommand: Command = {
  ...commandLine('status'),
  describe: 'Show every place flume runs on this host (or in --repo): kind, stage, agent, readying, landing, kept.',
  async run(args, context) {
    const repo = args.repo === undefined ? undefined : (await findRepository(String(args.repo))).root;
    const place = args.place === undefined ? undefined : String(args.place);
    if (args.watch) {
      const controller = new AbortController();
      onStop(() => controller.abort());
      const read = () => status(context.preset, { repo, place });
      const { interactiveTerminal, processTerminal } = await import('../view/terminal.js');
      // Interactive only on the process's own terminal (both ends); piped or captured, plain blocks.
      if (context.io === processIo && interactiveTerminal()) {
        const { interactiveStatus } = await import('../view/status-view.js');
        // The first reading is taken before the screen is: a place unknown now is refused as status refuses it.
        if (place !== undefined) await read();
        const ended = await interactiveStatus(context, processTerminal(), read, { signal: controller.signal, place });
        if (ended === 'gone') context.io.stdout(`${place}: gone (tidied)\n`);
        return;
      }
      const { watchStatus } = await import('../view/status-watch.js');
      await watchStatus(context.io, read, { signal: controller.signal, place });
      return;
    }
    // The preset is loaded only once a repository with places needs it: an empty status stays fast.
    const report = await status(context.preset, { repo, place });
    if (args.json) {
      printJson(context.io, report);
      return;
    }
    for (const repository of report.repositories) {
      if (repository.error) context.io.stdout(`${repository.root}: ${repository.error.code} ${repository.error.message}\n${repository.error.fix ? `  fix: ${repository.error.fix}\n` : ''}`);
      for (const broken of repository.broken) context.io.stdout(`${broken.file}: unreadable record (${broken.problem})\n`);
    }
    if (report.places.length === 0) context.io.stdout('no places\n');
    for (const p of report.places) context.io.stdout(describePlace(p));
    if (report.supervisor && !report.supervisor.running) context.io.stdout(`supervisor: none running; ${report.supervisor.note}\n`);
  },
};
