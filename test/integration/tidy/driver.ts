/**
 * The four flume calls the tidy tests make (launch, drop, tidy, status), either through the engine
 * itself (its functions called, many histories side by side) or through the built CLI as the suite
 * runs it (runFlume), so the same history can be driven both ways and the two must agree.
 */
import { openRepository } from '../../../core/config/repository.js';
import { makePlace } from '../../../core/engine/launch/launch.js';
import { dropPlace } from '../../../core/engine/tidy/drop.js';
import { tidy, type TidyOutcome } from '../../../core/engine/tidy/tidy.js';
import { status, type StatusReport } from '../../../core/engine/status/status.js';
import type { PlaceRecord } from '../../../core/api/record.js';
import { defaultPreset } from '../../../plugins/defaults.js';
import { flume, flumeEnv } from '../../helpers/repo.js';
import { parseStatus, validStatus } from '../../helpers/status-schema.js';
import { validResult } from '../../helpers/result-schema.js';

/** One repository driven by flume. */
export interface Driver {
  launch(name: string): Promise<PlaceRecord>;
  drop(name: string): Promise<void>;
  tidy(options?: { only?: string; dryRun?: boolean }): Promise<TidyOutcome[]>;
  status(): Promise<StatusReport>;
}

/** Drives the engine in-process; the state folder is the process's `FLUME_STATE_DIR`. */
export async function engineDriver(root: string): Promise<Driver> {
  const repository = await openRepository(root, await defaultPreset());
  return {
    launch: (name) => makePlace(repository, { kind: 'fix', name, brief: `work of ${name}` }),
    drop: async (name) => void (await dropPlace(repository, `fix--${name}`)),
    tidy: (options = {}) => tidy(repository, { only: options.only?.replace('/', '--'), dryRun: options.dryRun }),
    // As `status --json` would print it, checked against the published schema.
    status: async () => validStatus<StatusReport>(JSON.parse(JSON.stringify(await status(defaultPreset, { repo: root }))), 'status() in-process'),
  };
}

/** Drives the built CLI with a state folder of its own and `extraEnv` (a PATH holding a fake `wt`). */
export function cliDriver(root: string, stateDir: string, extraEnv: Record<string, string> = {}): Driver {
  const call = async (args: string[]) => {
    // The environment as it is at the call (a history may set git's local variables around one).
    const result = await flume([...args, '--repo', root], { env: flumeEnv(stateDir, extraEnv) });
    if (result.code !== 0) throw new Error(`flume ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
    return result.stdout;
  };
  return {
    // --no-start --no-watch: make and ready the place only; no agent, no supervisor left running.
    launch: async (name) => validResult('launch', JSON.parse(await call(['launch', '--kind', 'fix', '--name', name, '--brief', `work of ${name}`, '--no-start', '--no-watch', '--json']))).place,
    drop: async (name) => void (await call(['drop', `fix/${name}`])),
    tidy: async (options = {}) =>
      validResult('tidy', JSON.parse(await call(['tidy', ...(options.only ? [options.only] : []), ...(options.dryRun ? ['--dry-run'] : []), '--json']))).outcomes,
    status: async () => parseStatus(await call(['status', '--json'])),
  };
}
