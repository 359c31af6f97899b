/**
 * What starting a stage comes to before anything starts: the stage, its agent driver, the pane host it
 * runs on and its prompt, each refused as the start refuses it. A stage start and `launch --dry-run`
 * both ask here, so what the dry run shows is what the start does.
 */
import { flumeError } from '../../api/errors.js';
import { deliverableOf, driverOf } from '../../config/repository.js';
import { requireDriver, type ReachedDriver } from '../../drivers/reach.js';
import type { PaneHost } from '../../api/pane-host.js';
import type { Flume } from '../../api/plugin.js';
import type { KindDef, StageDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';
import { previousDelivery, renderPrompt } from './prompt.js';
import { chooseHost } from '../supervisor/hosts.js';
import { containerOpener } from '../container/host.js';
import { passedOn } from '../../support/environment.js';

/** A stage about to start, everything it needs chosen. */
export interface StageStart {
  def: StageDef;
  driverKey: string;
  /** The driver, reached through the one checked path (core/drivers/reach.ts). */
  driver: ReachedDriver;
  /** The host it starts on, handed to the driver as it is: chosen once, never looked up again by key. */
  host: PaneHost;
  /** The prompt, as it will be sent (and searched for in the transcript). */
  prompt: string;
}

/**
 * Chooses what stage `index` of the place starts with; throws UNKNOWN_AGENT or NO_PANE_HOST as the
 * start would. `record` is the place as the stage begins (its ended stages already in its history).
 */
export async function stageStart(flume: Flume, record: PlaceRecord, kind: KindDef, index: number, options: { fixRound?: boolean; dryRun?: boolean } = {}): Promise<StageStart> {
  const def = kind.stages[index];
  const driverKey = driverOf(flume, def);
  if (driverKey === undefined) {
    throw flumeError('UNKNOWN_AGENT', { kind: kind.name, stage: def.name }, {
      variant: 'unnamed',
    });
  }
  const driver = requireDriver(flume, driverKey);
  const chosen = driver.host ? pinnedHost(flume, driver) : await chooseHost(flume);
  // A place in a container: the pane is the chosen host's, its program the agent exec'd in the container.
  const container = record.container;
  const host = container ? containerOpener(chosen, container, { id: record.id, root: record.repo, path: record.path, branch: record.branch, target: record.target, commonDir: container.gitDir, home: container.home }, passedOn(process.env), { plan: options.dryRun }) : chosen;
  const deliverable = deliverableOf(def);
  // The reader's own variables, computed once here: the stage's prompt and the reader agree on them.
  const reader = flume.deliverables.get(deliverable.type)?.variables?.({ place: record, stage: def, options: deliverable });
  const prompt = renderPrompt(flume.config, kind, def, record, { previous: previousDelivery(record), reader, fixRound: options.fixRound });
  return { def, driverKey, driver, host, prompt };
}

/** The host a driver always runs on (its `host`), or NO_PANE_HOST when no plugin provides it. */
function pinnedHost(flume: Flume, driver: ReachedDriver): PaneHost {
  const host = flume.hosts.get(driver.host!);
  if (host) return host;
  throw flumeError('NO_PANE_HOST', { agent: driver.key, host: driver.host }, {
    variant: 'driverHost',
    details: { agent: driver.key, host: driver.host, plugin: driver.plugin },
  });
}
