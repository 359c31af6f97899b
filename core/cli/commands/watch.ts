import { join } from 'node:path';
import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { onStop } from '../process-io.js';
import type { CliContext } from '../command.js';
import { supervise, supervisorLock } from '../../engine/supervisor/supervisor.js';
import { lockHolder } from '../../state/lock.js';
import type { PlaceRecord } from '../../api/record.js';
import { hostStateDir } from '../../state/host.js';
import { spawnDetached } from '../../support/exec.js';
import { durationMs, MAX_DURATION } from '../../support/duration.js';
import { flumeError } from '../../api/errors.js';

/** `flume watch`: the host's supervisor, moving every place on as its deliverables appear. */
export const watchCommand: Command = {
  ...commandLine('watch'),
  describe: 'Run the host\'s supervisor: end each stage on its deliverable, start the next, report waiting and stuck, tidy what is over.',
  async run(args, context) {
    const pollMs = duration('poll', args.poll);
    const lingerMs = duration('linger', args.linger);
    const { rerun } = context;
    const controller = new AbortController();
    onStop(() => controller.abort());
    await supervise(context.preset, {
      pollMs,
      lingerMs,
      signal: controller.signal,
      // Read commands (status, kinds) asked of this process, run by the same CLI code while it is warm.
      // (A surface that builds its own context without `rerun` runs a supervisor that answers none.)
      serve: rerun && (async () => {
        const { serveWarm } = await import('../warm.js');
        return serveWarm(hostStateDir(), context.self, rerun);
      }),
      log: args.quiet ? undefined : (line) => context.io.stdout(`${new Date().toISOString()} ${line}\n`),
    });
  },
};

/** Starts the supervisor in the background unless one runs; never fails the command that asked. */
export async function ensureSupervisor(context: CliContext): Promise<void> {
  // A holder that died (kill -9) left its lock behind: that is no supervisor, and a new one takes the lock over.
  if ((await lockHolder(supervisorLock()))?.alive) return;
  await spawnDetached(process.execPath, [context.self, 'watch'], { logFile: join(hostStateDir(), 'watch.log') });
}

/**
 * After a command changed a place: make sure a supervisor runs to move it on, unless the command
 * said --no-watch or the place was launched with --no-watch (its caller steps it).
 */
export async function superviseAfter(args: Record<string, unknown>, context: CliContext, record: PlaceRecord): Promise<void> {
  if (args.watch === false || record.launched?.watch === false) return;
  await ensureSupervisor(context);
}

/**
 * A duration flag in milliseconds: seconds, or a number with ms, s, m or h, at most MAX_DURATION;
 * anything else is bad usage.
 */
export function duration(flag: string, value: unknown): number {
  const text = String(value);
  const ms = durationMs(/^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text);
  if (typeof ms === 'number') return ms;
  throw flumeError('BAD_USAGE', { flag, value: JSON.stringify(text), limit: MAX_DURATION }, {
    variant: ms === 'too-long' ? 'durationTooLong' : 'duration',
    details: { [flag]: text },
  });
}
