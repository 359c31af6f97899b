/**
 * What starting a stage comes to before anything starts: the stage, its agent driver, the pane host it
 * runs on and its prompt, each refused as the start refuses it. A stage start and `launch --dry-run`
 * both ask here, so what the dry run shows is what the start does.
 */
import { FlumeError } from '../errors.js';
import { deliverableOf, driverOf } from '../context.js';
import type { AgentDriver, PaneHost } from '../agent.js';
import type { Flume } from '../plugin.js';
import type { KindDef, PlaceRecord, StageDef } from '../types.js';
import { previousDelivery, renderPrompt } from './prompt.js';
import { chooseHost } from './hosts.js';

/** A stage about to start, everything it needs chosen. */
export interface StageStart {
  def: StageDef;
  driverKey: string;
  driver: AgentDriver;
  host: PaneHost;
  /** The prompt, as it will be sent (and searched for in the transcript). */
  prompt: string;
}

/**
 * Chooses what stage `index` of the place starts with; throws UNKNOWN_AGENT or NO_PANE_HOST as the
 * start would. `record` is the place as the stage begins (its ended stages already in its history).
 */
export async function stageStart(flume: Flume, record: PlaceRecord, kind: KindDef, index: number, options: { fixRound?: boolean } = {}): Promise<StageStart> {
  const def = kind.stages[index];
  const driverKey = driverOf(flume, def);
  const driver = flume.agents.get(driverKey);
  if (!driver) throw new FlumeError('UNKNOWN_AGENT', `No plugin provides the agent "${driverKey}".`, { fix: 'Name an agent a plugin provides (claude-code, printed).' });
  const host = await chooseHost(flume);
  const prompt = renderPrompt(flume.config, kind, def, record, { previous: previousDelivery(record), change: String(deliverableOf(def).change ?? record.name), fixRound: options.fixRound });
  return { def, driverKey, driver, host, prompt };
}
