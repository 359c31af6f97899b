/**
 * What to do next with a place: a pure function of its kind, its record and one reading of the facts
 * (deliverable, agent, prompt). No process, no file: it is tested exhaustively on its own. The code
 * that acts on its answer (step.ts) is small and dumb.
 */
import type { DeliverableReading } from '../../api/hooks.js';
import type { AgentReading, PromptState } from '../../api/agent.js';
import type { KindDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';

/** The limits a decision needs, in milliseconds. */
export interface DecideLimits {
  stuckAfterMs: number;
  promptTimeoutMs: number;
  fixRounds: number;
  /** The stage's token budget (`limits.tokens`), if it has one. */
  tokens?: number;
  /** Past the budget: `wait` for the operator (default), or `stop` the agent. */
  onBudget?: 'wait' | 'stop';
}

/** One reading of what is true now. */
export interface Facts {
  now: number;
  /** The branch head the reading was taken at. */
  head?: string;
  /** The current stage's deliverable, read at one commit. */
  deliverable?: DeliverableReading;
  /** The current agent, read from its own record. */
  agent?: AgentReading;
  /** Whether the stage's prompt appears in the transcript. */
  prompt?: PromptState;
  /** True when the agent accepts input now (its input box is up), where the driver can tell. */
  acceptsInput?: boolean;
  /** True when the agent's host cannot type (its `canType` is false): its command went to the operator. */
  paneless?: boolean;
  /** The stage's tokens so far, as its agent's record counts them (read only where a budget applies). */
  tokens?: number;
  /** True when the stage's deliverable lands the work (its reader judges landings): once there, the launch is over. */
  lands?: boolean;
}

/** The one thing to do next. */
export type Action =
  | { type: 'wait'; reason: string }
  | { type: 'start-stage'; index: number; reason: string; fixRound?: boolean; afterCut?: boolean }
  | { type: 'stop-agent'; reason: string }
  | { type: 'mark-delivered'; what: string }
  | { type: 'mark-taken' }
  | { type: 'send-again' }
  | { type: 'note-held' }
  | { type: 'mark-delivery'; delivery: 'unknown' | 'never-started' }
  | { type: 'mark-waiting'; needs: string }
  | { type: 'clear-waiting' }
  | { type: 'mark-stuck'; since: string }
  | { type: 'mark-over-budget'; tokens: number; limit: number }
  | { type: 'stop-over-budget'; reason: string }
  | { type: 'mark-not-ready' }
  | { type: 'await-caller'; after?: string; what?: string; gate: boolean }
  | { type: 'finish' };

/** Decides the next action for a place. */
export function decide(kind: KindDef, record: PlaceRecord, facts: Facts, limits: DecideLimits): Action {
  if (record.phase !== 'made') return { type: 'wait', reason: `the place is ${record.phase}` };
  if (record.dropped) return { type: 'wait', reason: 'the launch was dropped' };
  const stage = record.stage;
  if (!stage) {
    if (record.launched?.start === false) return { type: 'wait', reason: 'launched with --no-start: it waits for flume stage or flume retry' };
    if (record.held) return { type: 'wait', reason: record.held.reason };
    if (record.ready.state === 'failed' && (kind.whenNotReady ?? 'refuse') === 'refuse') {
      return { type: 'mark-not-ready' };
    }
    // A kind whose caller starts its stages starts none by itself, not even the first.
    if (kind.advance === 'caller') return record.awaits ? { type: 'wait', reason: 'it awaits its caller' } : { type: 'await-caller', gate: false };
    return { type: 'start-stage', index: 0, reason: 'the place is made' };
  }
  const running = isRunning(facts.agent);
  if (stage.delivered) {
    if (running) return { type: 'stop-agent', reason: `${stage.name} delivered ${stage.delivered.what}` };
    // A finished launch stays finished: nothing awaits or starts in it until its caller starts a stage by name.
    if (record.finished) return { type: 'wait', reason: 'the launch finished' };
    return afterDelivery(kind, record, facts, limits);
  }
  if (delivers(stage, facts.deliverable, facts.lands)) {
    return { type: 'mark-delivered', what: facts.deliverable!.what ?? 'delivered' };
  }
  if (stage.delivery !== 'taken') return decideDelivery(record, facts, limits);
  return decideWork(record, facts, limits);
}

function afterDelivery(kind: KindDef, record: PlaceRecord, facts: Facts, limits: DecideLimits): Action {
  const stage = record.stage!;
  if (waitsForCaller(kind, stage.index)) {
    // A landing that landed ends the launch whoever starts the stages; anything else waits for the caller.
    if (kind.advance === 'caller' && facts.lands) return { type: 'finish' };
    if (record.awaits) return { type: 'wait', reason: 'it awaits its caller' };
    return { type: 'await-caller', after: stage.name, what: stage.delivered!.what, gate: kind.advance !== 'caller' };
  }
  return onward(kind, record, facts, limits);
}

/**
 * What follows a delivered stage when flume goes on: a fix round when its report asks for one, the
 * next stage, or the end. A gate's `flume next` does the same once its caller says so.
 */
export function onward(kind: KindDef, record: PlaceRecord, facts: Facts, limits: DecideLimits): Action {
  const stage = record.stage;
  if (!stage) return { type: 'start-stage', index: 0, reason: 'its caller said next' };
  if (facts.deliverable?.sendBack && stage.index > 0) {
    const rounds = stage.fixRounds ?? 0;
    if (rounds < limits.fixRounds) return { type: 'start-stage', index: stage.index - 1, reason: `${stage.name} asks for fixes`, fixRound: true };
    if (!stage.waiting) {
      return { type: 'mark-waiting', needs: `${stage.name} asked for fixes ${rounds + 1} times; read its report and decide (tell, retry, or stage).` };
    }
    return { type: 'wait', reason: 'fix rounds used up' };
  }
  const next = stage.index + 1;
  if (next < kind.stages.length) return { type: 'start-stage', index: next, reason: `${stage.name} delivered` };
  return { type: 'finish' };
}

function decideDelivery(record: PlaceRecord, facts: Facts, limits: DecideLimits): Action {
  const stage = record.stage!;
  if (facts.prompt === 'taken') return { type: 'mark-taken' };
  if (stage.delivery === 'never-started') return { type: 'wait', reason: 'the stage never started' };
  // A printed command not yet run is not up, and that is no failure: the operator runs it when they will.
  const agentGone = facts.agent?.state === 'exited' || (facts.agent?.state === 'not-up' && !facts.paneless);
  // A start cut before its agent was noted: flume stopped between writing the stage's start and its
  // agent's handle, so nothing was sent, and the agent it may have started is known by its session
  // alone. That agent is ended where its driver finds it by its session; then the stage starts afresh,
  // once (a start that follows a cut one and is cut too reads never-started, as below).
  if (cutStart(stage) && !facts.paneless) {
    if (isRunning(facts.agent)) return { type: 'stop-agent', reason: 'its start was cut before its agent was noted' };
    if (!stage.afterCut) return { type: 'start-stage', index: stage.index, reason: 'its start was cut before its agent was noted', afterCut: true };
    return { type: 'mark-delivery', delivery: 'never-started' };
  }
  // Gone without the prompt in its transcript, sent or not: it can take nothing now (a crash may have
  // come between its start and its first sending). Retry starts the stage afresh.
  if (agentGone) return { type: 'mark-delivery', delivery: 'never-started' };
  // The agent asks whether to trust its folder before it takes any prompt: only the user answers that.
  if (facts.agent?.state === 'asking' && facts.agent.dialog === 'trust') {
    const needs = facts.agent.needs ?? 'its agent asks whether to trust this folder';
    return stage.waiting?.needs === needs ? { type: 'wait', reason: 'waiting on the operator' } : { type: 'mark-waiting', needs };
  }
  // The program holds the prompt queued and submits it by itself: sending it again would double it.
  // The sight is noted (`heldAt`) so the time to take it counts from there once the queue goes; a
  // quarter of that time apart at most, so that noting it (a record written, a file event) does not
  // wake the next look at once, and the next, for as long as the program holds it.
  if (facts.prompt === 'held') {
    const noted = stage.heldAt ? Date.parse(stage.heldAt) : -Infinity;
    return facts.now - noted >= limits.promptTimeoutMs / 4 ? { type: 'note-held' } : { type: 'wait', reason: 'its agent holds the prompt queued' };
  }
  // The time to take it counts from the later of its last sending and the last sight of it held.
  const sentAt = stage.lastSentAt ? Math.max(Date.parse(stage.lastSentAt), stage.heldAt ? Date.parse(stage.heldAt) : 0) : undefined;
  if (sentAt === undefined) {
    // Not sent yet: the agent was still starting. A slow start is slow, never failed.
    if (facts.acceptsInput && !facts.paneless) return { type: 'send-again' };
    return stage.delivery === 'unknown' ? { type: 'wait', reason: 'the agent is still starting' } : { type: 'mark-delivery', delivery: 'unknown' };
  }
  if (facts.now - sentAt < limits.promptTimeoutMs) return { type: 'wait', reason: 'waiting for the transcript to take the prompt' };
  if (stage.sends < 2 && !facts.paneless && facts.acceptsInput !== false) return { type: 'send-again' };
  // No transcript is unknown only while flume cannot see the agent take input; an agent whose input
  // box is up and empty after two sendings took neither (Claude Code writes no transcript until then).
  if ((facts.prompt === 'unknown' && !facts.acceptsInput) || facts.paneless) {
    return stage.delivery === 'unknown' ? { type: 'wait', reason: 'no transcript yet' } : { type: 'mark-delivery', delivery: 'unknown' };
  }
  return { type: 'mark-delivery', delivery: 'never-started' };
}

function decideWork(record: PlaceRecord, facts: Facts, limits: DecideLimits): Action {
  const stage = record.stage!;
  const agent = facts.agent;
  // The deliverable will not come without someone acting (a landing refused): the stage stops short
  // on what its reader says is needed, whatever its agent does meanwhile.
  const short = facts.deliverable && !facts.deliverable.present ? facts.deliverable.needs : undefined;
  if (short) return stage.waiting?.needs === short ? { type: 'wait', reason: 'waiting on the operator' } : { type: 'mark-waiting', needs: short };
  if (!agent) return { type: 'wait', reason: 'no agent reading' };
  // Past its token budget: reported once with its figures; then the operator decides, unless the
  // kind asks for its agent to be stopped. Nothing else about the stage changes.
  if (limits.tokens !== undefined && facts.tokens !== undefined && facts.tokens > limits.tokens) {
    if (!stage.overBudget) return { type: 'mark-over-budget', tokens: facts.tokens, limit: limits.tokens };
    if (limits.onBudget === 'stop' && !stage.overBudget.stopped && isRunning(agent)) {
      return { type: 'stop-over-budget', reason: `${stage.name} used ${facts.tokens} tokens, over its budget of ${limits.tokens}` };
    }
  }
  if (agent.state === 'exited' || agent.state === 'not-up') {
    if (stage.waiting) return { type: 'wait', reason: 'waiting on the operator' };
    return { type: 'mark-waiting', needs: exitedNeeds(agent) };
  }
  if (stoppedShort(agent)) {
    const needs = agent.needs ?? (agent.dialog === 'permission' ? 'a permission prompt is open' : 'it stopped and says nothing more');
    if (stage.waiting?.needs === needs) return { type: 'wait', reason: 'waiting on the operator' };
    return { type: 'mark-waiting', needs };
  }
  if (stage.waiting) return { type: 'clear-waiting' };
  const quietSince = agent.lastActivity ? Date.parse(agent.lastActivity) : Date.parse(stage.startedAt);
  if (facts.now - quietSince >= limits.stuckAfterMs) {
    const since = new Date(quietSince).toISOString();
    return stage.stuck?.since === since ? { type: 'wait', reason: 'stuck' } : { type: 'mark-stuck', since };
  }
  if (stage.stuck) return { type: 'clear-waiting' };
  if (stage.overBudget) return { type: 'wait', reason: 'over its token budget: waiting on the operator' };
  return { type: 'wait', reason: 'the agent is working' };
}

/**
 * True when the stage's start was cut before its agent was noted: its handle is still the intent
 * written before the agent started (no pane, no pid), and no prompt was sent.
 */
function cutStart(stage: NonNullable<PlaceRecord['stage']>): boolean {
  const handle = stage.agent;
  return Boolean(handle) && handle!.pane === undefined && handle!.pid === undefined && stage.sends === 0 && stage.lastSentAt === undefined;
}

/**
 * True when the agent reads as no longer working on its own: gone, asking, or at rest after its turn.
 * Without its deliverable, such a stage waits on the operator.
 */
export function stoppedShort(agent: AgentReading): boolean {
  return agent.state === 'exited' || agent.state === 'not-up' || agent.state === 'asking' || (agent.state === 'idle' && Boolean(agent.turnEnded));
}

/**
 * True when its caller, not flume, goes on after stage `index` delivers: a kind whose caller starts
 * its stages (`advance: 'caller'`), or a stage that is a gate.
 */
export function waitsForCaller(kind: KindDef, index: number): boolean {
  return kind.advance === 'caller' || kind.stages[index]?.advance === 'caller';
}

/**
 * True when a reading ends the stage: its deliverable is there, and is not what stood when the stage
 * began (`presentAtStart`: a retry's commit, a question's last conclusion), unless it is a landing. A
 * landing is never already there: the branch's work on its target is the whole of it, and no later
 * reading can differ from it. A stage that finds its branch landed (a merge a moment before its start
 * read it, another's landing that carried this work, a retry) is delivered, whatever else was read.
 */
export function delivers(stage: { presentAtStart?: string }, reading: DeliverableReading | undefined, lands?: boolean): boolean {
  return Boolean(reading?.present) && (Boolean(lands) || fingerprint(reading!) !== stage.presentAtStart);
}

/** What tells one delivery from another: a stage that found its deliverable already there needs a new one. */
export function fingerprint(reading: DeliverableReading): string {
  return JSON.stringify([reading.what ?? '', reading.facts ?? {}]);
}

/** What a stage whose agent exited before its deliverable needs, in the words status and the record use. */
export function exitedNeeds(agent: AgentReading): string {
  return agent.needs ? `its agent exited without the deliverable; its last words: ${agent.needs}` : 'its agent exited without the deliverable';
}

/** True while an agent's process runs. */
export function isRunning(agent: AgentReading | undefined): boolean {
  return Boolean(agent) && agent!.state !== 'exited' && agent!.state !== 'not-up';
}
