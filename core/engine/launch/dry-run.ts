/**
 * `flume launch --dry-run`: every check a launch makes, and what it would do, with nothing made,
 * written, started or asked. It plans with the launch's own code (launch-plan.ts for the place,
 * ready.ts for the steps, decide.ts for the first action, stage-start.ts for the stage, the driver's
 * `planAgent` for the command), so what it shows and what it refuses cannot drift from a launch.
 *
 * What it cannot know without acting: whether readying's steps pass (they run in the place, which
 * does not exist), and the session id (made afresh at start). The prompt shown is the one sent when
 * readying passes; a `fix` whose readying fails gets a note of the failure before it.
 */
import { randomUUID } from 'node:crypto';
import type { AgentPlan } from '../../api/hooks.js';
import { deliverableOf, type Repository } from '../../config/repository.js';
import { HIDDEN, shownEnvironment } from '../../support/secret.js';
import { lockHolder } from '../../state/lock.js';
import { placeLockFile, readRecord } from '../../state/store.js';
import type { PlaceRecord } from '../../api/record.js';
import type { LaunchRequest } from './brief.js';
import { decide } from '../stage/decide.js';
import { eachName, launchUnderWay, placeRecord, planPlace, refuseExisting, type PlacePlan } from './launch-plan.js';
import { readySteps, stepCommand, stepEnvironment, stepLabel, stepTimeoutMs } from './ready.js';
import { stageStart } from '../stage/stage-start.js';
import { limitsOf } from '../stage/step.js';
import { supervisorLock } from '../supervisor/supervisor-state.js';

/** One readying step as a dry run shows it. */
export interface ReadyStepPlan {
  label: string;
  /** What runs: the program and its arguments (a shell line as `sh -c LINE`). */
  argv: string[];
  cwd: string;
  /** Its whole environment, a secret's value shown as `(hidden)`. */
  env: Record<string, string>;
  /** The names whose values are hidden. */
  hidden: string[];
  timeoutMs: number;
}

/** What `flume launch --dry-run` reports (its shape is published as launch-dry-run.schema.json). */
export interface LaunchDryRun {
  version: 1;
  dryRun: true;
  place: Pick<PlaceRecord, 'id' | 'kind' | 'name' | 'repo' | 'path' | 'branch' | 'target' | 'brief'> & { base: { from: string; commit: string } };
  ready: { steps: ReadyStepPlan[]; failed?: { step: string; message: string } };
  /** The first stage, as it would start; null when none would (--no-start, or readying refused). */
  stage: {
    name: string;
    index: number;
    deliverable: string;
    agent: { driver: string; host: string; sessionId: string; plan: AgentPlan | null };
    prompt: string;
  } | null;
  /** Whether the launch would start the host's supervisor. */
  supervisor: { starts: boolean; running: boolean };
  /** What the reader should know: why no stage starts, an interrupted launch to be put right, … */
  notes: string[];
}

/** Plans a launch without making anything; throws exactly what the launch would throw before it acts. */
export async function planLaunch(repository: Repository, request: LaunchRequest): Promise<LaunchDryRun> {
  const notes: string[] = [];
  const plan = await eachName(request, (name) => checkPlace(repository, request, name, notes));
  const record: PlaceRecord = { ...placeRecord(repository, plan, request), phase: 'made' };
  const ready = await planReady(repository, record);
  if (ready.failed) record.ready = { state: 'failed', at: record.createdAt, failed: { step: ready.failed.step, exitCode: null, tail: ready.failed.message } };
  else record.ready = { state: ready.steps.length ? 'ready' : 'none', at: record.createdAt };
  if (ready.steps.length) notes.push('readying runs in the place once it is made; the prompt shown is the one sent when every step passes (a fix whose readying fails is told of it in its prompt)');
  const stage = await planFirstStage(repository, record, plan, notes);
  const starts = request.watch !== false && request.start !== false;
  const running = Boolean((await lockHolder(supervisorLock()))?.alive);
  return {
    version: 1,
    dryRun: true,
    place: { id: record.id, kind: record.kind, name: record.name, repo: record.repo, path: record.path, branch: record.branch, target: record.target, brief: record.brief, base: { from: plan.from, commit: plan.base } },
    ready,
    stage,
    supervisor: { starts: starts && !running, running },
    notes,
  };
}

/** The launch's checks of one name, up to and under its lock, with no lock taken and no recovery made. */
async function checkPlace(repository: Repository, request: LaunchRequest, name: string, notes: string[]): Promise<PlacePlan> {
  const plan = await planPlace(repository, request, name);
  const { commonDir } = repository.info;
  if ((await lockHolder(placeLockFile(commonDir, plan.key)))?.alive) throw launchUnderWay(plan);
  // A launch puts right an interrupted one of its name before its own checks; a dry run cannot, so
  // it says so, and reads the repository as it is.
  const interrupted = (await readRecord(commonDir, plan.key))?.phase === 'making';
  await refuseExisting(repository, plan, { skipInterrupted: true });
  if (interrupted) notes.push(`an interrupted launch of ${plan.kind.name}/${name} is recorded: the launch puts it right first (rolling it back where nothing can be lost), which may change what it finds`);
  return plan;
}

async function planReady(repository: Repository, record: PlaceRecord): Promise<LaunchDryRun['ready']> {
  const declared = await readySteps(repository.flume, record, { dryRun: true });
  if ('failed' in declared) return { steps: [], failed: { step: declared.failed.step, message: declared.failed.tail } };
  const steps = declared.steps.map((step): ReadyStepPlan => {
    const [file, args] = stepCommand(step);
    const env = shownEnvironment(stepEnvironment(step));
    return { label: stepLabel(step), argv: [file, ...args], cwd: record.path, env, hidden: Object.keys(env).filter((name) => env[name] === HIDDEN), timeoutMs: stepTimeoutMs(step) };
  });
  return { steps };
}

/** The first stage as the launch's first step would start it (decide, then the stage's start), or null. */
async function planFirstStage(repository: Repository, record: PlaceRecord, plan: PlacePlan, notes: string[]): Promise<LaunchDryRun['stage']> {
  const { flume } = repository;
  const action = decide(plan.kind, record, { now: Date.now() }, limitsOf(repository));
  if (action.type !== 'start-stage') {
    const why = action.type === 'await-caller' ? `${plan.kind.name}'s caller starts each of its stages (flume stage, flume next)` : action.type === 'wait' ? action.reason : action.type;
    notes.push(action.type === 'mark-not-ready' ? `no stage starts: readying fails, and ${plan.kind.name} starts no stage on a place that is not ready` : `no stage starts: ${why}`);
    return null;
  }
  const start = await stageStart(flume, record, plan.kind, action.index, { dryRun: true });
  const sessionId = randomUUID();
  const request = { place: { ...record, stage: stageRecord(record, start.def.name, action.index, start.prompt) }, stage: start.def, sessionId, prompt: start.prompt, host: start.host.key };
  const agentPlan = (await start.driver.plan(request, start.host)) ?? null;
  if (!agentPlan) notes.push(`the agent driver "${start.driverKey}" does not say what it runs: its command is not shown, and its program was not checked`);
  notes.push('the session id is made afresh when the stage starts; the one shown is an example');
  return {
    name: start.def.name,
    index: action.index,
    deliverable: deliverableOf(start.def).type,
    agent: { driver: start.driverKey, host: agentPlan?.host ?? start.host.key, sessionId, plan: agentPlan },
    prompt: start.prompt,
  };
}

/** The stage's record as the start writes it before its agent starts (what the driver is handed). */
function stageRecord(record: PlaceRecord, name: string, index: number, prompt: string): NonNullable<PlaceRecord['stage']> {
  return { name, index, startedAt: record.createdAt, startHead: record.base, attempt: 1, delivery: 'sending', sends: 0, prompt };
}
