import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { printJson } from '../output.js';
import { doctor } from '../../engine/doctor/doctor.js';
import { flumeVersion } from '../command.js';

/**
 * `flume version`: flume's version and every program's it found here (node, git, each pane host's,
 * each agent's), as doctor finds them. `flume --version` answers flume's alone, without asking them.
 */
export const versionCommand: Command = {
  ...commandLine('version'),
  describe: "Show flume's version and the versions of the programs it runs here (node, git, tmux, each agent's).",
  async run(args, context) {
    const [flume, report] = await Promise.all([flumeVersion(), doctor(context.preset, { repo: args.repo === undefined ? undefined : String(args.repo) })]);
    const programs = report.checks.filter((check) => check.version !== undefined).map((check) => ({ name: check.name, by: check.by, version: check.version! }));
    if (args.json) printJson(context.io, { flume, programs });
    else context.io.stdout(`flume ${flume}\n${programs.map((program) => `${program.name} ${program.version}\n`).join('')}`);
  },
};
