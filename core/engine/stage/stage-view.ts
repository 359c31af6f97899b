/**
 * The current stage of a place as status shows it: its name, index of all, its state, what its
 * deliverable reader reads now (a change's tasks ticked), and its agent as the driver reads it.
 */
import { callHook } from '../../api/hooks.js';
import { isFlumeError } from '../../api/errors.js';
import { deliverableOf } from '../../config/repository.js';
import type { Flume } from '../../api/plugin.js';
import { canType } from '../../api/pane-host.js';
import { reachDriver } from '../../drivers/reach.js';
import type { AgentHandle, AgentReading } from '../../api/agent.js';
import type { DeliveryState, StageState } from '../../api/record.js';
import type { KindDef } from '../../api/config.js';
import { deliverableRequest, readPlaces, type PlaceReading, type Reading } from '../status/reading.js';
import { delivers, exitedNeeds, stoppedShort } from './decide.js';
import type { UsageView } from './usage.js';

/** A stage as status reports it. */
export interface StageView {
  name: string;
  index: number;
  of: number;
  state: StageState;
  startedAt: string;
  attempt: number;
  delivery: DeliveryState;
  deliverable: string;
  needs?: string;
  stuckSince?: string;
  /** What this run of the stage used so far, from its agent's own record (where its driver reports it). */
  usage?: UsageView;
  /** The stage passed its token budget (`limits.tokens`): its tokens then, the budget, and whether its agent was stopped for it. */
  overBudget?: { tokens: number; limit: number; stopped?: boolean };
  delivered?: { at: string; what: string };
  progress?: { done: number; total: number };
  /** Why the deliverable is not there though something stands in its place, as its reader says. */
  deliverableProblem?: string;
  agent?: {
    driver: string;
    host: string;
    sessionId: string;
    /** The agent program's version, as it reported it at start. */
    version?: string;
    pane?: string;
    state: AgentReading['state'] | 'unknown';
    transcript?: string;
    command?: string[];
  };
}

/** Agent readings by handle; undefined where the agent could not be read. */
export type AgentReadings = Map<AgentHandle, AgentReading | undefined>;

/**
 * Reads many agents at once: each driver gets all its handles in one call (`readMany`), so reading
 * thirty agents costs about what reading one does; a driver without it is asked agent by agent.
 */
export async function readAgents(flume: Flume, handles: AgentHandle[]): Promise<AgentReadings> {
  const readings: AgentReadings = new Map();
  const byDriver = new Map<string, AgentHandle[]>();
  for (const handle of handles) byDriver.set(handle.driver, [...(byDriver.get(handle.driver) ?? []), handle]);
  await Promise.all(
    [...byDriver].map(async ([key, group]) => {
      const driver = reachDriver(flume, key);
      if (!driver) return;
      const found = await driver.readMany(group);
      group.forEach((handle, i) => readings.set(handle, found[i]));
    }),
  );
  return readings;
}

/**
 * Reads the place's current stage; null when no stage has started. Its agent comes from `agents`
 * (readAgents over every place's agent at once), or is read here when absent from it.
 */
export async function stageView(
  flume: Flume,
  reading: Reading,
  place: PlaceReading,
  kind: KindDef,
  agents?: Promise<AgentReadings>,
  cost: { usage?: UsageView; budget?: number } = {},
): Promise<StageView | null> {
  const record = place.record.stage;
  if (!record) return null;
  const stage = kind.stages.find((s) => s.name === record.name) ?? kind.stages[record.index];
  // A run that ends on another deliverable than its stage's own (a fix round's commit) shows that one.
  const options = record.deliverable ?? (stage ? deliverableOf(stage) : { type: 'unknown' });
  const view: StageView = {
    name: record.name,
    index: record.index,
    of: kind.stages.length,
    state: stateOf(record),
    startedAt: record.startedAt,
    attempt: record.attempt,
    delivery: record.delivery,
    deliverable: options.type,
    ...(record.waiting ? { needs: record.waiting.needs } : {}),
    ...(record.stuck ? { stuckSince: record.stuck.since } : {}),
    ...(record.delivered ? { delivered: { at: record.delivered.at, what: record.delivered.what } } : {}),
  };
  const hook = flume.hooks.readDeliverable.get(options.type);
  // What the reader says the stage needs (a landing refused): the stage stops short on it, as the next step records.
  let needs: string | undefined;
  const readDelivery = async (at: Reading, of: PlaceReading): Promise<void> => {
    const request = stage && hook?.isUsed() ? deliverableRequest(at, of, stage, options) : undefined;
    if (!request || !hook) return;
    // A reader that fails (throws, or returns what is not a reading) is named in status, not hidden:
    // the stage is then not seen delivered, and the line says why.
    let failure: string | undefined;
    const result = await callHook(`readDeliverable(${options.type})`, hook, request).catch((error: unknown) => {
      failure = `its reader failed: ${isFlumeError(error) ? `${error.code} ` : ''}${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      return undefined;
    });
    if (result?.progress) view.progress = result.progress;
    delete view.deliverableProblem;
    needs = undefined;
    if (!record.delivered && failure) view.deliverableProblem = failure;
    if (!record.delivered && result && !result.present && result.problem) view.deliverableProblem = result.problem;
    if (!record.delivered && record.delivery === 'taken' && result && !result.present && result.needs) needs = result.needs;
    // What the reading shows now, though no step has recorded it yet: the deliverable and its stage's
    // end are seen in the same reading, with or without a supervisor.
    if (!record.delivered && delivers(record, result, flume.deliverables.get(options.type)?.landing)) {
      view.state = 'delivered';
      view.delivered = { at: at.generatedAt, what: result!.what ?? 'delivered' };
      // What a step recorded of the run before (a wait, a stall) is over: the delivery ends it.
      delete view.needs;
      delete view.stuckSince;
    }
  };
  await readDelivery(reading, place);
  const handle = record.agent;
  if (handle) {
    const readings = await agents;
    const paneless = !canType(flume.hosts.get(handle.host));
    const driver = reachDriver(flume, handle.driver);
    const together = Boolean(readings?.has(handle));
    const agent = together ? readings!.get(handle) : driver ? await driver.read(handle).catch(() => undefined) : undefined;
    // The deliverable was read before the agent: one that committed and then stopped between the two
    // would read stopped short of what it made. A stopped agent's deliverable is read once more, after it:
    // in the one reading every place's agents read together share (begun after all of them were read),
    // or, for an agent read alone just now, in a reading of its own.
    if (agent && !record.delivered && view.state !== 'delivered' && stoppedShort(agent)) {
      const fresh = await (together ? reading.again() : readPlaces(reading.root, [place.record], { commonDir: reading.commonDir })).catch(() => undefined);
      const again = fresh?.places.find((p) => p.record.kind === place.record.kind && p.record.name === place.record.name);
      if (fresh && again) await readDelivery(fresh, again);
    }
    view.agent = {
      driver: handle.driver,
      host: handle.host,
      sessionId: handle.sessionId,
      ...(handle.version ? { version: handle.version } : {}),
      // A pane whose id now holds another agent (tmux numbers panes afresh in a new server) is not named.
      ...(handle.pane && !agent?.paneGone ? { pane: handle.pane } : {}),
      state: agent?.state ?? 'unknown',
      ...(handle.transcriptPath ? { transcript: handle.transcriptPath } : {}),
      // The command the operator runs, shown where flume cannot type it for them.
      ...(paneless && handle.command ? { command: handle.command } : {}),
    };
    // An agent seen gone is never shown working in the same reading: the stage waits on the operator,
    // as the next step records. (A starting one stays starting: its transcript may yet show the prompt
    // taken, which only a step reads.)
    const gone = agent && (agent.state === 'exited' || (agent.state === 'not-up' && !paneless));
    if (gone && (view.state === 'working' || view.state === 'stuck')) {
      view.state = 'waiting';
      view.needs = exitedNeeds(agent);
      delete view.stuckSince;
    }
    // An agent held by its folder-trust question takes no prompt: it waits on the user, whatever was sent.
    if (agent?.dialog === 'trust' && view.state !== 'delivered') {
      view.state = 'waiting';
      view.needs = agent.needs ?? 'its agent asks whether to trust this folder';
    }
    // An agent that stopped short shows as waiting in its own words, before any step records it.
    if (view.state === 'working' && agent && (agent.state === 'asking' || (agent.state === 'idle' && agent.turnEnded))) {
      view.state = 'waiting';
      view.needs = agent.needs ?? (agent.dialog === 'permission' ? 'a permission prompt is open' : 'it stopped and says nothing more');
    }
  }
  if (needs) {
    view.state = 'waiting';
    view.needs = needs;
    delete view.stuckSince;
  }
  if (cost.usage) view.usage = cost.usage;
  // Past its budget as recorded, or as read now before a step records it (as a delivery is).
  const live = cost.budget !== undefined && cost.usage && cost.usage.total > cost.budget ? { tokens: cost.usage.total, limit: cost.budget } : undefined;
  const over = record.overBudget ? { tokens: record.overBudget.tokens, limit: record.overBudget.limit, ...(record.overBudget.stopped ? { stopped: true } : {}) } : live;
  if (over) {
    view.overBudget = over;
    if (view.state === 'working' || view.state === 'stuck') view.state = 'over-budget';
  }
  return view;
}

function stateOf(record: NonNullable<PlaceReading['record']['stage']>): StageState {
  if (record.delivered) return 'delivered';
  if (record.delivery === 'never-started') return 'never-started';
  if (record.waiting) return 'waiting';
  if (record.stuck) return 'stuck';
  if (record.delivery === 'taken') return 'working';
  return 'starting';
}
