/**
 * What an operator or caller does to a place's agent: tell it, stop it, retry its stage, go on with a
 * question, or start a named stage. Each holds the place's lock, so one sender acts at a time and the
 * supervisor never acts in between; each refusal leaves nothing typed.
 */
import { flumeError } from '../../api/errors.js';
import { checkText } from '../../support/text.js';
import { deliverableOf, kindOf, type Repository } from '../../config/repository.js';
import { reachDriver, type ReachedDriver } from '../../drivers/reach.js';
import type { Flume } from '../../api/plugin.js';
import { appendEvent, readRecord, withPlaceLock } from '../../state/store.js';
import type { AgentHandle } from '../../api/agent.js';
import type { KindDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';
import { awaitPrompt } from './deliver.js';
import { advance, goOnFromCaller, limitsOf, startStage } from './step.js';
import { waitsForCaller, type Action } from './decide.js';

/** Tells the place's agent `text`: confirmed in its transcript as a prompt, or refused with nothing typed. */
export async function tell(repository: Repository, key: string, typed: string): Promise<{ record: PlaceRecord; sends: number; held?: true }> {
  if (!typed.trim()) throw flumeError('BAD_USAGE', {});
  // Sent trimmed, as a stage's prompt is: the agents drop the whitespace a prompt starts or ends
  // with (the Gemini CLI a leading TAB), and what is confirmed is what was sent.
  const text = checkText(typed, 'The tell').trim();
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    const { handle, driver } = agentOf(repository, record);
    const reading = await driver.read(handle);
    if (reading.state === 'not-up' || reading.state === 'exited' || reading.state === 'starting') {
      throw flumeError('AGENT_NOT_UP', { place: record.id }, {
        variant: reading.state === 'starting' ? 'starting' : 'default',
        details: { place: record.id, state: reading.state },
      });
    }
    if (reading.state === 'asking') {
      throw flumeError('AGENT_ASKING', { place: record.id, needs: reading.needs }, {
        variant: reading.dialog === 'permission' ? (reading.needs ? 'permissionNeeds' : 'permission') : reading.needs ? 'questionNeeds' : 'default',
        details: { place: record.id, dialog: reading.dialog, needs: reading.needs },
      });
    }
    if (await driver.hasDraft(handle)) {
      throw flumeError('AGENT_BUSY', { place: record.id }, {
        details: { place: record.id },
      });
    }
    const kind = kindOf(repository.flume, record.kind);
    const limits = limitsOf(repository, kind.stages[record.stage!.index], kind);
    // From the sending on (the drivers allow a record's stamp a second's rounding): the same words
    // taken a moment before are an earlier prompt, not this tell.
    const since = new Date().toISOString();
    for (let sends = 1; sends <= 2; sends++) {
      await (sends === 1 ? driver.send(handle, text) : driver.resend(handle, text));
      const state = await awaitPrompt(repository.flume, handle, text, since, limits.promptTimeoutMs);
      if (state === 'taken') {
        await appendEvent(repository.info.commonDir, key, { event: 'told', sends });
        return { record, sends };
      }
      // Queued by the program, which submits it when its turn ends: typing it again would double it.
      if (state === 'held') {
        await appendEvent(repository.info.commonDir, key, { event: 'told', sends, held: true });
        return { record, sends, held: true };
      }
    }
    // Given up on: what was typed is taken back, so the tell cannot go in later behind the caller's back.
    const cleared = await driver.withdraw(handle, text).catch(() => false);
    throw flumeError('PROMPT_NOT_TAKEN', { place: record.id }, {
      ...(cleared ? {} : { variant: 'left' }),
      details: { place: record.id, boxEmpty: cleared },
    });
  });
}

/** Stops the place's agent: refuses a working one without `force`; fails when it did not exit. */
export async function stopAgent(repository: Repository, key: string, force: boolean): Promise<{ record: PlaceRecord; already: boolean }> {
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    const { handle, driver } = agentOf(repository, record);
    const before = await driver.read(handle);
    if (before.state === 'exited' || before.state === 'not-up') return { record, already: true };
    if (before.state === 'working' && !force) {
      throw flumeError('AGENT_WORKING', { place: record.id }, {
        details: { place: record.id },
      });
    }
    await driver.stop(handle);
    const after = await driver.read(handle);
    if (after.state !== 'exited' && after.state !== 'not-up') {
      throw flumeError('AGENT_DID_NOT_EXIT', { place: record.id, state: after.state }, {
        details: { place: record.id, state: after.state },
      });
    }
    await appendEvent(repository.info.commonDir, key, { event: 'agent-stopped', force });
    return { record, already: false };
  });
}

/**
 * Starts a stage afresh: `retry` the current one, `go-on` (a question's stage again, with notes), or a
 * named stage (`stage`). The place's agent must have ended; a fresh one starts with the stage's prompt.
 */
export async function restartStage(
  repository: Repository,
  key: string,
  options: { stage?: string; note?: string; goOn?: boolean },
): Promise<PlaceRecord> {
  const note = options.note === undefined ? undefined : checkText(options.note, 'The note');
  await stepWhereCallerGoesOn(repository, key);
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    refuseOver(record);
    const kind = kindOf(repository.flume, record.kind);
    // A stage the kind lacks is refused first: waiting for the agent would not make it one.
    const index = options.stage === undefined ? (record.stage?.index ?? 0) : kind.stages.findIndex((s) => s.name === options.stage);
    if (index < 0) {
      throw flumeError('UNKNOWN_STAGE', { kind: kind.name, stage: JSON.stringify(options.stage), stages: kind.stages.map((s) => s.name).join(', ') }, {
        details: { stage: options.stage, stages: kind.stages.map((s) => s.name) },
      });
    }
    if (options.goOn) refuseGoOn(repository.flume, record, kind.stages[index]);
    if (options.goOn && !record.stage?.delivered && !record.stage?.waiting) {
      throw flumeError('AGENT_WORKING', { place: record.id, stage: record.stage?.name ?? 'stage' }, {
        variant: 'notConcluded',
      });
    }
    const handle = record.stage?.agent;
    const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
    if (handle && driver) {
      const state = (await driver.read(handle)).state;
      if (state === 'working') {
        throw flumeError('AGENT_RUNNING', { place: record.id }, {
          details: { place: record.id },
        });
      }
      if (state !== 'exited' && state !== 'not-up') await driver.stop(handle);
    }
    if (note) record.brief = `${record.brief.trimEnd()}\n\nThe operator's notes for this round:\n${note}`;
    await startStage(repository, record, kind, index);
    const after = await placeRecord(repository, key);
    if (after.held) {
      throw flumeError('PLACE_NOT_READY', { place: record.id, reason: after.held.reason }, {
        details: { place: record.id, ready: after.ready },
      });
    }
    return after;
  });
}

/**
 * Goes on from where the place waits for its caller (`flume next`): the stage after the one that
 * delivered (or a fix round its report asks for, or the end; the first stage of a caller's kind
 * before any), the note joining the brief as a go-on note does. Refused, with nothing started,
 * where the place does not wait for its caller.
 */
export async function nextStage(repository: Repository, key: string, options: { note?: string } = {}): Promise<{ record: PlaceRecord; action: Action }> {
  const note = options.note === undefined ? undefined : checkText(options.note, 'The note');
  await stepWhereCallerGoesOn(repository, key);
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    refuseOver(record);
    if (!record.awaits) {
      const state = record.finished ? 'finished' : record.stage ? `${record.stage.name} has not delivered` : 'no stage has started';
      throw flumeError('NOT_AWAITING', { place: record.id, state }, {
        details: { place: record.id, stage: record.stage?.name, delivered: Boolean(record.stage?.delivered) },
      });
    }
    const kind = kindOf(repository.flume, record.kind);
    if (note) record.brief = `${record.brief.trimEnd()}\n\nThe operator's notes for this round:\n${note}`;
    const action = await goOnFromCaller(repository, record, kind);
    const after = await placeRecord(repository, key);
    if (after.held) {
      throw flumeError('PLACE_NOT_READY', { place: record.id, reason: after.held.reason }, {
        details: { place: record.id, ready: after.ready },
      });
    }
    return { record: after, action };
  });
}

/**
 * Where its caller goes on after the current stage, a step first brings the record up to date: a
 * deliverable just made is recorded and its agent ended, so the caller's next stage never waits
 * on an agent that has finished its work. Such a step starts nothing by itself.
 */
async function stepWhereCallerGoesOn(repository: Repository, key: string): Promise<void> {
  const record = await readRecord(repository.info.commonDir, key);
  const kind = record ? repository.flume.kinds.get(record.kind) : undefined;
  if (record?.stage && kind && waitsForCaller(kind, record.stage.index)) await advance(repository, key);
}

/**
 * Go-on is a question's: another round of a stage that ends on a conclusion (a question's session, or
 * a declared kind's stage that ends on one). Any other stage would run its work again — a fix's
 * submission submitting twice — so it is refused; retry and stage say plainly that they start afresh.
 */
function refuseGoOn(flume: Flume, record: PlaceRecord, stage: KindDef['stages'][number]): void {
  const type = record.stage?.deliverable?.type ?? deliverableOf(stage).type;
  // The reader says whether its deliverable is one another round adds to (its `rounds`).
  if (flume.deliverables.get(type)?.rounds) return;
  throw flumeError('CANNOT_GO_ON', { place: record.id, stage: stage.name, deliverable: type }, {
    details: { place: record.id, stage: stage.name, deliverable: type },
  });
}

/** No stage starts in a place whose launch was dropped or that is not made. */
function refuseOver(record: PlaceRecord): void {
  if (record.dropped || record.phase !== 'made') {
    throw flumeError('PLACE_OVER', { place: record.id, state: record.dropped ? 'dropped' : record.phase }, {
      details: { place: record.id },
    });
  }
}

async function placeRecord(repository: Repository, key: string): Promise<PlaceRecord> {
  const record = await readRecord(repository.info.commonDir, key);
  if (record) return record;
  throw flumeError('UNKNOWN_PLACE', { place: key.replace('--', '/'), repo: repository.info.root }, {
    details: { place: key },
  });
}

function agentOf(repository: Repository, record: PlaceRecord): { handle: AgentHandle; driver: ReachedDriver } {
  const handle = record.stage?.agent;
  const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
  if (!handle || !driver) {
    throw flumeError('AGENT_NOT_UP', { place: record.id, driver: handle?.driver }, {
      variant: handle ? 'unreachable' : 'noAgent',
      details: { place: record.id },
    });
  }
  return { handle, driver };
}

