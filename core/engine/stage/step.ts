/**
 * One idempotent step of a place: read → decide → act, repeated until the decision is to wait.
 * Held under the place's lock, so two flumes never act on one place at once; every action records
 * its intent before it acts, so a crash between any two actions converges on the next step.
 */
import { randomUUID } from 'node:crypto';
import { callHook } from '../../api/hooks.js';
import { reachDriver, requireDriver, type ReachedDriver } from '../../drivers/reach.js';
import { crashPoint } from '../../support/crash.js';
import { processStart } from '../../support/process.js';
import { FlumeError, isFlumeError } from '../../api/errors.js';
import { toMs } from '../../support/duration.js';
import { deliverableOf, type Repository } from '../../config/repository.js';
import { canType, ownsPane } from '../../api/pane-host.js';
import { appendEvent, publishUnpublished, readRecord, recordWithEvent, withPlaceLock, writeRecord } from '../../state/store.js';
import type { AgentHandle } from '../../api/agent.js';
import type { KindDef, StageDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';
import type { Flume } from '../../api/plugin.js';
import { decide, delivers, fingerprint, onward, stoppedShort, type Action, type DecideLimits, type Facts } from './decide.js';
import { readPlaces, deliverableRequest, type PlaceReading, type Reading } from '../status/reading.js';
import { readyPlace } from '../launch/ready.js';
import { stageStart } from './stage-start.js';
import { awaitPrompt } from './deliver.js';
import { agentUsage, budgetOf, tokensOf, totalCounts } from './usage.js';

/** How a step runs. */
export interface StepOptions {
  /** Called with each action taken, for progress lines. */
  onAction?: (action: Action, record: PlaceRecord) => void;
  /** How long to wait for the place's lock (default 30 s). */
  lockTimeoutMs?: number;
  /** The place was readied a moment ago (by launch): the first stage need not ready it again. */
  justReadied?: boolean;
  /**
   * What a supervisor's pass read of the place a moment ago, before the lock. When the record under
   * the lock is still the one it read and it shows a new deliverable, the first round marks it
   * delivered from that reading rather than reading the repository again: no flume acted on the place
   * in between (its record would differ), and the deliverable's commit stays a fact. Any other
   * decision is taken on a fresh reading under the lock.
   */
  prior?: { record: PlaceRecord; facts: Facts };
  now?: () => number;
}

/** Advances the place `key` until there is nothing to do now; returns its record and the actions taken. */
export async function advance(repository: Repository, key: string, options: StepOptions = {}): Promise<{ record?: PlaceRecord; actions: Action[] }> {
  const { commonDir } = repository.info;
  return withPlaceLock(commonDir, key, async () => {
    const actions: Action[] = [];
    let readied = options.justReadied ?? false;
    // What the last round read, carried into the next when its action changed nothing else read.
    let carried: Facts | undefined;
    for (let round = 0; round < 12; round++) {
      const record = await readRecord(commonDir, key);
      if (!record) return { actions };
      // Events a killed flume wrote with the record but never published go out first.
      if (round === 0 && record.unpublished?.length) await publishUnpublished(commonDir, record);
      const kind = repository.flume.kinds.get(record.kind);
      if (!kind) return { record, actions };
      const limits = limitsOf(repository, record.stage ? kind.stages[record.stage.index] : undefined, kind);
      const prior = round === 0 && options.prior && JSON.stringify(options.prior.record) === JSON.stringify(record) ? { ...options.prior.facts, now: options.now?.() ?? Date.now() } : undefined;
      const reused = carried ?? (prior && decide(kind, record, prior, limits).type === 'mark-delivered' ? prior : undefined);
      const facts = reused ? { ...reused, now: options.now?.() ?? Date.now() } : await freshFacts(repository, record, kind, options);
      carried = undefined;
      const action = decide(kind, record, facts, limits);
      if (action.type === 'wait') return { record, actions };
      actions.push(action);
      options.onAction?.(action, record);
      await act(repository, record, kind, action, facts, readied);
      if (action.type === 'start-stage') readied = false;
      // A delivered stage's agent was stopped (stop throws unless its process is gone): what comes
      // next is decided on the delivery just read, with the agent ended, not on another reading.
      if (action.type === 'stop-agent' || action.type === 'stop-over-budget') carried = { ...facts, agent: { state: 'exited' } };
    }
    return { record: await readRecord(commonDir, key), actions };
  }, { timeoutMs: options.lockTimeoutMs ?? 30_000 });
}

async function freshFacts(repository: Repository, record: PlaceRecord, kind: KindDef, options: StepOptions): Promise<Facts> {
  const reading = await readPlaces(repository.info.root, [record]);
  return gather(repository, reading, reading.places[0], kind, options.now?.() ?? Date.now());
}

/** The limits in force for a stage: the stage's own, then its kind's, then the config's, then flume's defaults. */
export function limitsOf(repository: Repository, stage?: StageDef, kind?: KindDef): DecideLimits & { startTimeoutMs: number } {
  const config = { ...repository.flume.config.limits, ...kind?.limits };
  const own = stage?.limits ?? {};
  const budget = budgetOf(repository.flume.config, kind, stage);
  const ms = (key: DurationLimit, fallbackMs: number) => toMs(own[key] ?? config[key], fallbackMs, limitPath(key, stage, kind));
  return {
    stuckAfterMs: ms('stuckAfter', 20 * 60_000),
    promptTimeoutMs: ms('promptTimeout', 20_000),
    startTimeoutMs: ms('startTimeout', 60_000),
    fixRounds: own.fixRounds ?? config.fixRounds ?? 2,
    ...(budget.tokens !== undefined ? { tokens: budget.tokens, onBudget: budget.onBudget } : {}),
  };
}

/**
 * Reads what is true now for one place, from a reading of its repository (which the supervisor
 * takes once for all of a repository's places).
 */
export async function gather(repository: Repository, reading: Reading, place: PlaceReading, kind: KindDef, now: number): Promise<Facts> {
  const facts: Facts = { now };
  const record = place.record;
  const stage = record.stage;
  if (!stage || record.phase !== 'made') return facts;
  const def = kind.stages[stage.index];
  const { flume } = repository;
  facts.head = place.branch?.head;
  // A host that cannot type handed the agent's command to the operator: decide never types there.
  if (stage.agent && !canType(flume.hosts.get(stage.agent.host))) facts.paneless = true;
  if (def) facts.deliverable = await readStageDeliverable(repository, reading, place, def);
  if (def && flume.deliverables.get(stage.deliverable?.type ?? deliverableOf(def).type)?.landing) facts.lands = true;
  // A new deliverable decides alone (decide marks it delivered whatever the agent does): the agent
  // is read in the next round, once the delivery is on record, not before it.
  if (!stage.delivered && delivers(stage, facts.deliverable, facts.lands)) return facts;
  const handle = stage.agent;
  const driver = handle ? reachDriver(flume, handle.driver) : undefined;
  if (handle && driver) {
    facts.agent = await driver.read(handle);
    // The deliverable was read before the agent: one that committed and then stopped between the two
    // readings would read stopped short of a deliverable it made. So a stopped agent's deliverable is
    // read once more, after it: a stop is never recorded over a delivery made before it.
    if (def && !stage.delivered && stoppedShort(facts.agent)) {
      const fresh = await readPlaces(reading.root, [record], { commonDir: reading.commonDir });
      const again = fresh.places[0]!;
      facts.head = again.branch?.head;
      facts.deliverable = await readStageDeliverable(repository, fresh, again, def);
      if (delivers(stage, facts.deliverable, facts.lands)) {
        delete facts.agent;
        return facts;
      }
    }
    // The stage's tokens, read (from where the last reading stopped) only where a budget applies.
    if (stage.delivery === 'taken' && budgetOf(flume.config, kind, def).tokens !== undefined) {
      const usage = await agentUsage(flume, repository.info.commonDir, handle);
      if (usage) facts.tokens = tokensOf(totalCounts(usage));
    }
    if (stage.delivery !== 'taken') {
      facts.prompt = await driver.confirm({ handle, text: stage.prompt, since: stage.startedAt });
      if (!facts.paneless) facts.acceptsInput = (await driver.waitForInput(handle, 0)) === 'ready';
    }
  }
  return facts;
}

async function act(repository: Repository, record: PlaceRecord, kind: KindDef, action: Action, facts: Facts, readied: boolean): Promise<void> {
  const { commonDir } = repository.info;
  const key = `${record.kind}--${record.name}`;
  const stage = record.stage;
  const stamp = new Date().toISOString();
  switch (action.type) {
    case 'start-stage':
      await startStage(repository, record, kind, action.index, { readied, fixRound: action.fixRound, afterCut: action.afterCut });
      return;
    case 'note-held':
      await noteHeld(commonDir, record, facts.now);
      return;
    case 'send-again':
      await sendPrompt(repository, record, driverFor(repository, record), (record.stage?.sends ?? 0) > 0);
      return;
    case 'stop-agent':
      // The stage delivered, or its start was cut before its agent was noted: its agent is ended at
      // once (DESIGN.md "The engine"), before the next starts.
      await driverFor(repository, record).stop(stage!.agent!, { hangUp: true });
      await appendEvent(commonDir, key, { event: 'agent-stopped', reason: action.reason });
      return;
    case 'mark-delivered':
      stage!.delivered = { at: stamp, head: facts.head ?? '', what: action.what };
      stage!.waiting = undefined;
      stage!.stuck = undefined;
      break;
    case 'mark-taken':
      stage!.delivery = 'taken';
      break;
    case 'mark-delivery':
      stage!.delivery = action.delivery;
      // Given up on after its sendings: what was typed is taken back, so nothing is left one Enter
      // away from work behind the record.
      if (action.delivery === 'never-started' && stage!.sends > 0 && stage!.agent) {
        await driverFor(repository, record).withdraw(stage!.agent, stage!.prompt).catch(() => false);
      }
      break;
    case 'mark-waiting':
      stage!.waiting = { needs: action.needs, at: stamp };
      break;
    case 'clear-waiting':
      stage!.waiting = undefined;
      stage!.stuck = undefined;
      break;
    case 'mark-stuck':
      stage!.stuck = { since: action.since, at: stamp };
      break;
    case 'mark-over-budget':
      stage!.overBudget = { at: stamp, tokens: action.tokens, limit: action.limit };
      break;
    case 'stop-over-budget':
      // The kind's onBudget 'stop': the agent is asked to quit as `flume stop` does; stop throws
      // unless its process is gone. The stage then waits for the operator, saying why.
      await driverFor(repository, record).stop(stage!.agent!);
      stage!.overBudget = { ...stage!.overBudget!, stopped: true };
      stage!.waiting = { needs: `its agent was stopped: ${action.reason} (limits.tokens); retry the stage, or raise its budget`, at: stamp };
      await writeRecord(commonDir, record);
      await appendEvent(commonDir, key, { event: 'agent-stopped', reason: action.reason });
      return;
    case 'mark-not-ready':
      record.held = { at: stamp, reason: `readying failed at "${record.ready.failed?.step}"; mend it and run flume retry` };
      break;
    case 'await-caller':
      record.awaits = { at: stamp, ...(action.after ? { after: action.after } : {}), ...(action.what ? { what: action.what } : {}), gate: action.gate };
      break;
    case 'finish':
      record.finished = { at: stamp };
      record.awaits = undefined;
      break;
  }
  // Where the place now waits for its caller or the launch is over, a crash between the record and
  // its event is walked by the tests (stage:recorded): the event is published all the same.
  const ends = action.type === 'await-caller' || action.type === 'finish';
  await recordWithEvent(commonDir, record, { event: action.type, ...(stage ? { stage: stage.name } : {}), ...eventFields(action) }, { crashAt: ends ? 'stage:recorded' : undefined });
  if (action.type === 'mark-delivered') crashPoint('stage:ended');
}

/** What an action's event says beside its name. */
function eventFields(action: Action): Record<string, unknown> {
  switch (action.type) {
    case 'mark-delivered':
      return { what: action.what };
    case 'mark-waiting':
      return { needs: action.needs };
    case 'mark-stuck':
      return { since: action.since };
    case 'mark-over-budget':
      return { tokens: action.tokens, limit: action.limit };
    case 'mark-delivery':
      return { delivery: action.delivery };
    case 'await-caller':
      return { ...(action.after ? { after: action.after } : {}), ...(action.what ? { what: action.what } : {}), gate: action.gate };
    default:
      return {};
  }
}

/**
 * Goes on from where the place waits for its caller (`flume next`): what flume would have done had
 * the stage not waited (the next stage, a fix round its report asks for, or the end), on a fresh
 * reading. Run holding the place's lock; returns the action taken.
 */
export async function goOnFromCaller(repository: Repository, record: PlaceRecord, kind: KindDef): Promise<Action> {
  const facts = await freshFacts(repository, record, kind, {});
  const limits = limitsOf(repository, record.stage ? kind.stages[record.stage.index] : undefined, kind);
  const action = onward(kind, record, facts, limits);
  if (action.type !== 'wait') await act(repository, record, kind, action, facts, false);
  return action;
}

/** Starts stage `index` of the place with a fresh agent; the place's previous agent has ended. */
export async function startStage(
  repository: Repository,
  record: PlaceRecord,
  kind: KindDef,
  index: number,
  options: { readied?: boolean; fixRound?: boolean; afterCut?: boolean } = {},
): Promise<void> {
  const { commonDir, root } = repository.info;
  const { flume } = repository;
  const key = `${record.kind}--${record.name}`;
  const def = kind.stages[index];
  if (!options.readied) {
    record.ready = await readyPlace(flume, record);
    if (record.ready.state === 'failed' && (kind.whenNotReady ?? 'refuse') === 'refuse') {
      record.held = { at: new Date().toISOString(), reason: `readying failed at "${record.ready.failed?.step}"; mend it and run flume retry` };
      await writeRecord(commonDir, record);
      return;
    }
  }
  const previous = record.stage;
  if (previous) {
    // What the ended stage used, kept with it: its agent has ended, so its record is whole.
    const usage = previous.agent ? await agentUsage(flume, commonDir, previous.agent).catch(() => undefined) : undefined;
    record.history.push({ name: previous.name, startedAt: previous.startedAt, endedAt: new Date().toISOString(), ...(previous.delivered ? { delivered: previous.delivered.what } : {}), ...(usage ? { usage } : {}) });
  }
  // One reading serves the head and the deliverable check below: the place's agent has ended and
  // the next has not started, so nothing moves the branch in between (its place holds this record).
  const reading = await readPlaces(root, [record]);
  const head = reading.places[0].branch?.head ?? record.base;
  const { driverKey, driver, host, prompt } = await stageStart(flume, record, kind, index, { fixRound: options.fixRound });
  const sessionId = randomUUID();
  record.held = undefined;
  record.awaits = undefined;
  // A stage its caller starts by name in a finished launch (stage, retry, go-on) runs it again.
  record.finished = undefined;
  // A fix round ends on what the preset says such a round ends on (the built-ins: a new commit).
  const override = options.fixRound && flume.defaults.fixDeliverable ? { type: flume.defaults.fixDeliverable } : undefined;
  record.stage = {
    name: def.name,
    index,
    startedAt: new Date().toISOString(),
    startHead: head,
    // Every start of this stage in the place counts: a retry, a fix round, a stage started by name.
    attempt: 1 + record.history.filter((ended) => ended.name === def.name).length,
    delivery: 'sending',
    sends: 0,
    prompt,
    ...(options.fixRound ? { fixRounds: (previous?.fixRounds ?? 0) + 1 } : previous?.fixRounds ? { fixRounds: previous.fixRounds } : {}),
    ...(override ? { deliverable: override } : {}),
    ...(options.afterCut ? { afterCut: true } : {}),
    // The intent, written before the agent starts: a crash after the start finds the session id.
    agent: { driver: driverKey, sessionId, host: host.key, cwd: record.path, startedAt: new Date().toISOString() },
  };
  // What stands already is not this stage's delivery (decide.ts, delivers), but for a landing.
  const lands = Boolean(flume.deliverables.get(record.stage.deliverable?.type ?? deliverableOf(def).type)?.landing);
  const already = lands ? undefined : await readStageDeliverable(repository, reading, reading.places[0], def);
  if (already?.present) record.stage.presentAtStart = fingerprint(already);
  await recordWithEvent(commonDir, record, { event: 'stage-started', stage: def.name, index, attempt: record.stage.attempt, sessionId, host: host.key, ...(options.fixRound ? { fixRound: true } : {}) });
  // A prompt its agent would take as something else (the driver's refuse; a config edited since the
  // launch) is refused before any agent starts: none is left idle in a pane for a prompt never sent.
  const refused = driver.refusal(prompt);
  if (refused) {
    await neverStarted(commonDir, record, unsendable(refused));
    throw refused;
  }
  const handle = await driver.start({ place: record, stage: def, sessionId, prompt, host: host.key }, host).catch(async (error) => {
    // No agent started, so none will take the prompt: the stage says so, and why, before the error goes up.
    await neverStarted(commonDir, record, `its agent could not start: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  });
  crashPoint('stage:agent-opened');
  // Its process's start, noted now while the pid is surely its own: later, a pid another process was
  // given is never taken for the agent (core/support/process.ts, sameProcess).
  if (handle.pid !== undefined && handle.pidStart === undefined) {
    const start = processStart(handle.pid);
    if (start !== undefined) handle.pidStart = start;
  }
  record.stage.agent = handle;
  const typed = canType(host);
  if (!typed) {
    // The printed command carries the prompt: it counts as sent once.
    record.stage.sends = 1;
    record.stage.lastSentAt = new Date().toISOString();
  }
  await writeRecord(commonDir, record);
  crashPoint('stage:agent-started');
  if (!typed) return;
  const limits = limitsOf(repository, def, kind);
  const ready = await driver.waitForInput(handle, limits.startTimeoutMs);
  if (ready !== 'ready') {
    if (ready === 'exited') return neverStarted(commonDir, record, await exitedAtStart(flume, handle));
    record.stage.delivery = 'unknown';
    await writeRecord(commonDir, record);
    return;
  }
  await sendPrompt(repository, record, driver);
}

/**
 * Why an agent exited before it took input, from its pane's last lines; the dead pane is closed
 * then, since a pane kept after its program exits keeps its host's server alive.
 */
async function exitedAtStart(flume: Flume, handle: AgentHandle): Promise<string> {
  const host = flume.hosts.get(handle.host);
  // A pane that is no longer the handle's is another agent's: neither read nor closed for this one.
  const own = host ? await ownsPane(host, handle) : false;
  const screen = host && own ? await host.capture(handle.pane!, { history: true }).catch(() => undefined) : undefined;
  if (host && own) await host.close(handle.pane!).catch(() => undefined);
  const last = (screen ?? '').split('\n').map((line) => line.trim()).filter((line) => line && !/^Pane is dead/.test(line)).slice(-3).join(' / ');
  return `its agent's program ${handle.command?.[0] ?? handle.driver} exited before it took input${last ? `; its last words: ${last}` : ''}`;
}

async function sendPrompt(repository: Repository, record: PlaceRecord, driver: ReachedDriver, again = false): Promise<void> {
  const { commonDir } = repository.info;
  const stage = record.stage!;
  const handle = stage.agent!;
  stage.sends += 1;
  stage.lastSentAt = new Date().toISOString();
  await writeRecord(commonDir, record);
  await (again ? driver.resend(handle, stage.prompt) : driver.send(handle, stage.prompt)).catch(async (error: unknown) => {
    // A prompt its agent would take as something else (BAD_TEXT, nothing typed) is never sent: the
    // stage never started, and says why, rather than trying again at every step.
    if (isFlumeError(error) && error.code === 'BAD_TEXT') await neverStarted(commonDir, record, unsendable(error));
    throw error;
  });
  crashPoint('stage:prompt-sent');
  await appendEvent(commonDir, `${record.kind}--${record.name}`, { event: 'prompt-sent', stage: stage.name, sends: stage.sends });
  const kind = repository.flume.kinds.get(record.kind);
  const limits = limitsOf(repository, kind?.stages[stage.index], kind);
  const taken = await awaitPrompt(repository.flume, handle, stage.prompt, stage.startedAt, limits.promptTimeoutMs);
  if (taken === 'held') await noteHeld(commonDir, record, Date.now());
  if (taken === 'taken') {
    stage.delivery = 'taken';
    await recordWithEvent(commonDir, record, { event: 'prompt-taken', stage: stage.name, sends: stage.sends });
  }
}

/**
 * Records the stage never started, with what it needs, and says so in the event stream: a caller
 * following the stream (crew, `flume wait`) learns it there, not only from status.
 */
async function neverStarted(commonDir: string, record: PlaceRecord, needs: string): Promise<void> {
  const stage = record.stage!;
  stage.delivery = 'never-started';
  stage.waiting = { needs, at: new Date().toISOString() };
  await recordWithEvent(commonDir, record, { event: 'never-started', stage: stage.name, needs });
}

/** What a stage whose prompt its driver refuses needs: the refusal's words and fix. */
function unsendable(error: Error): string {
  return `its prompt cannot be sent: ${error.message} ${(error as { fix?: string }).fix ?? ''}`.trim();
}

/** Notes in the record that the agent held the stage's prompt queued at `at` (StageRecord `heldAt`). */
async function noteHeld(commonDir: string, record: PlaceRecord, at: number): Promise<void> {
  record.stage!.heldAt = new Date(at).toISOString();
  await writeRecord(commonDir, record);
}

/** Reads the deliverable the place's current run of `def` ends on, at the branch head of the reading. */
async function readStageDeliverable(repository: Repository, reading: Reading, place: PlaceReading, def: StageDef) {
  const options = place.record.stage?.deliverable ?? deliverableOf(def);
  const hook = repository.flume.hooks.readDeliverable.get(options.type);
  const request = hook?.isUsed() ? deliverableRequest(reading, place, def, options) : undefined;
  return request && hook ? callHook(`readDeliverable(${options.type})`, hook, request) : undefined;
}

function driverFor(repository: Repository, record: PlaceRecord): ReachedDriver {
  return requireDriver(repository.flume, record.stage?.agent?.driver ?? '');
}

type DurationLimit = 'stuckAfter' | 'promptTimeout' | 'startTimeout';

/** Where the limit `key` in force was set, for an error naming it: the stage's own, its kind's, or the config's. */
function limitPath(key: DurationLimit, stage?: StageDef, kind?: KindDef): string {
  if (stage?.limits?.[key] !== undefined) return `kind ${kind?.name}.stages[${kind?.stages.indexOf(stage)}].limits.${key}`;
  if (kind?.limits?.[key] !== undefined) return `kind ${kind.name}.limits.${key}`;
  return `limits.${key}`;
}
