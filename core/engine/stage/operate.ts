/**
 * What an operator or caller does to a place's agent: tell it, stop it, retry its stage, go on with a
 * question, or start a named stage. Each holds the place's lock, so one sender acts at a time and the
 * supervisor never acts in between; each refusal leaves nothing typed.
 */
import { FlumeError } from '../../api/errors.js';
import { checkText } from '../../support/text.js';
import { deliverableOf, kindOf, type Repository } from '../../config/repository.js';
import { reachDriver, type ReachedDriver } from '../../drivers/reach.js';
import type { Flume } from '../../api/plugin.js';
import { appendEvent, readRecord, withPlaceLock } from '../../state/store.js';
import type { AgentHandle } from '../../api/agent.js';
import type { KindDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';
import { awaitPrompt } from './deliver.js';
import { limitsOf, startStage } from './step.js';

/** Tells the place's agent `text`: confirmed in its transcript as a prompt, or refused with nothing typed. */
export async function tell(repository: Repository, key: string, typed: string): Promise<{ record: PlaceRecord; sends: number }> {
  if (!typed.trim()) throw new FlumeError('BAD_USAGE', 'The tell is empty.', { fix: 'Give the text to tell, or --file with it.' });
  const text = checkText(typed, 'The tell');
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    const { handle, driver } = agentOf(repository, record);
    const reading = await driver.read(handle);
    if (reading.state === 'not-up' || reading.state === 'exited' || reading.state === 'starting') {
      throw new FlumeError('AGENT_NOT_UP', `The agent of ${record.id} is ${reading.state === 'starting' ? 'still starting' : 'not up'}; nothing was typed.`, {
        fix: reading.state === 'starting' ? 'Wait until it accepts input, then tell again.' : 'Start the stage again with flume retry, then tell it.',
        details: { place: record.id, state: reading.state },
      });
    }
    if (reading.state === 'asking') {
      throw new FlumeError('AGENT_ASKING', `The agent of ${record.id} has a ${reading.dialog === 'permission' ? 'permission prompt' : 'question'} open${reading.needs ? ` (${reading.needs})` : ''}; text typed now would go into the dialog, so nothing was typed.`, {
        fix: 'Answer the dialog in its pane, then tell again.',
        details: { place: record.id, dialog: reading.dialog, needs: reading.needs },
      });
    }
    if (await driver.hasDraft(handle)) {
      throw new FlumeError('AGENT_BUSY', `The input box of ${record.id}'s agent holds a draft someone typed; it would be sent with the tell, so nothing was typed.`, {
        fix: 'Submit or clear the draft in its pane, then tell again.',
        details: { place: record.id },
      });
    }
    const kind = kindOf(repository.flume, record.kind);
    const limits = limitsOf(repository, kind.stages[record.stage!.index], kind);
    const since = new Date(Date.now() - 1000).toISOString();
    for (let sends = 1; sends <= 2; sends++) {
      await (sends === 1 ? driver.send(handle, text) : driver.resend(handle, text));
      if ((await awaitPrompt(repository.flume, handle, text, since, limits.promptTimeoutMs)) === 'taken') {
        await appendEvent(repository.info.commonDir, key, { event: 'told', sends });
        return { record, sends };
      }
    }
    throw new FlumeError('PROMPT_NOT_TAKEN', `The tell to ${record.id} was sent twice and its agent's transcript does not hold it.`, {
      fix: 'Look at its pane (flume status names it); the agent may be hung. flume stop, then flume retry, starts it afresh.',
      details: { place: record.id },
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
      throw new FlumeError('AGENT_WORKING', `The agent of ${record.id} is working; stopping it now would lose what it is doing.`, {
        fix: 'Wait for its turn to end (flume status shows it idle or waiting), then stop it.',
        details: { place: record.id },
      });
    }
    await driver.stop(handle);
    const after = await driver.read(handle);
    if (after.state !== 'exited' && after.state !== 'not-up') {
      throw new FlumeError('AGENT_DID_NOT_EXIT', `The agent of ${record.id} did not exit (it reads ${after.state}).`, {
        fix: 'Look at its pane; end the process by hand if it hangs.',
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
  return withPlaceLock(repository.info.commonDir, key, async () => {
    const record = await placeRecord(repository, key);
    if (record.dropped || record.phase !== 'made') {
      throw new FlumeError('PLACE_OVER', `${record.id} is ${record.dropped ? 'dropped' : record.phase}; no stage starts there.`, {
        fix: 'Launch anew under another name.',
        details: { place: record.id },
      });
    }
    const kind = kindOf(repository.flume, record.kind);
    // A stage the kind lacks is refused first: waiting for the agent would not make it one.
    const index = options.stage === undefined ? (record.stage?.index ?? 0) : kind.stages.findIndex((s) => s.name === options.stage);
    if (index < 0) {
      throw new FlumeError('UNKNOWN_STAGE', `The kind ${kind.name} has no stage ${JSON.stringify(options.stage)}.`, {
        fix: `Use one of: ${kind.stages.map((s) => s.name).join(', ')}; a repository declares more in its config.`,
        details: { stage: options.stage, stages: kind.stages.map((s) => s.name) },
      });
    }
    if (options.goOn) refuseGoOn(repository.flume, record, kind.stages[index]);
    if (options.goOn && !record.stage?.delivered && !record.stage?.waiting) {
      throw new FlumeError('AGENT_WORKING', `${record.id}'s ${record.stage?.name ?? 'stage'} has neither concluded nor stopped short.`, {
        fix: 'Wait for its conclusion or its note, then go on.',
      });
    }
    const handle = record.stage?.agent;
    const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
    if (handle && driver) {
      const state = (await driver.read(handle)).state;
      if (state === 'working') {
        throw new FlumeError('AGENT_RUNNING', `The agent of ${record.id} is still working; a fresh agent never starts over a running one.`, {
          fix: 'Wait for its turn to end, or stop it (flume stop --force), then run this again.',
          details: { place: record.id },
        });
      }
      if (state !== 'exited' && state !== 'not-up') await driver.stop(handle);
    }
    if (note) record.brief = `${record.brief.trimEnd()}\n\nThe operator's notes for this round:\n${note}`;
    await startStage(repository, record, kind, index);
    const after = await placeRecord(repository, key);
    if (after.held) {
      throw new FlumeError('PLACE_NOT_READY', `${record.id} is not ready: ${after.held.reason}.`, {
        fix: 'Mend the failed readying step (flume status shows its words), then retry.',
        details: { place: record.id, ready: after.ready },
      });
    }
    return after;
  });
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
  throw new FlumeError('CANNOT_GO_ON', `${record.id}'s ${stage.name} ends on ${type}, not a conclusion; go-on runs another round only of a question's session.`, {
    fix: 'Give its agent notes with flume tell, or start the stage afresh with flume retry (or another with flume stage).',
    details: { place: record.id, stage: stage.name, deliverable: type },
  });
}

async function placeRecord(repository: Repository, key: string): Promise<PlaceRecord> {
  const record = await readRecord(repository.info.commonDir, key);
  if (record) return record;
  throw new FlumeError('UNKNOWN_PLACE', `There is no place ${key.replace('--', '/')} in ${repository.info.root}.`, {
    fix: '`flume status` lists the places flume runs.',
    details: { place: key },
  });
}

function agentOf(repository: Repository, record: PlaceRecord): { handle: AgentHandle; driver: ReachedDriver } {
  const handle = record.stage?.agent;
  const driver = handle ? reachDriver(repository.flume, handle.driver) : undefined;
  if (!handle || !driver) {
    throw new FlumeError('AGENT_NOT_UP', `${record.id} has no agent${handle ? ` flume can reach (driver ${handle.driver})` : ' started'}; nothing was typed.`, {
      fix: 'Start its stage with flume retry.',
      details: { place: record.id },
    });
  }
  return { handle, driver };
}

