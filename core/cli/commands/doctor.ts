import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { printJson } from '../output.js';
import { doctor } from '../../engine/doctor/doctor.js';

/** `flume doctor`: what flume needs here, a check a line, with the fix; exit 1 when a launch would miss something. */
export const doctorCommand: Command = {
  ...commandLine('doctor'),
  describe: 'Check what flume needs here (node, git, tmux, the agent program, its login, trust, the supervisor), each with its fix.',
  async run(args, context) {
    const report = await doctor(context.preset, { repo: args.repo === undefined ? undefined : String(args.repo), cwd: context.cwd });
    if (args.json) printJson(context.io, report);
    else {
      for (const check of report.checks) {
        const mark = check.ok ? '✓' : check.needed ? '✗' : '!';
        context.io.stdout(`${mark} ${check.name}: ${check.detail}${!check.ok && check.fix ? `\n    fix: ${check.fix}` : ''}\n`);
      }
      context.io.stdout(report.ok ? 'flume can launch here.\n' : 'flume cannot launch here until each ✗ above is fixed.\n');
    }
    return report.ok ? 0 : 1;
  },
};
