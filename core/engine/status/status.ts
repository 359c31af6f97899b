/**
 * `flume status`: every place flume runs on this host (or in one repository), as it stands now, from
 * one reading per repository. A repository with no places costs no config load and no git process.
 */
import { existsSync } from 'node:fs';
import { FlumeError, flumeError } from '../../api/errors.js';
import { openRepositoryAt, type Repository } from '../../config/repository.js';
import type { FlumePlugin } from '../../api/plugin.js';
import { knownRepositories } from '../../state/host.js';
import { lockHolder } from '../../state/lock.js';
import { keyOf, placeLockFile, readRecord, readRecords, type BrokenRecord } from '../../state/store.js';
import type { AgentUsage } from '../../api/agent.js';
import type { FlumeConfig } from '../../api/plugin.js';
import type { PlaceContainer, PlaceRecord } from '../../api/record.js';
import { readPlaces, type PlaceReading, type Reading } from './reading.js';
import { readAgents, stageView, type AgentReadings, type StageView } from '../stage/stage-view.js';
import { supervisorState, type SupervisorStatus } from '../supervisor/supervisor-state.js';
import { agentUsage, budgetOf, sumUsage, usageView, type UsageView } from '../stage/usage.js';
import { landingOf, type Landing } from '../tidy/over.js';
import { waitsForCaller } from '../stage/decide.js';
import type { KindDef } from '../../api/config.js';
import type { Flume } from '../../api/plugin.js';
import { environmentMs } from '../../support/duration.js';

/** One place as status reports it. The shape is published as status.schema.json. */
export interface PlaceStatus extends Pick<PlaceRecord, 'id' | 'kind' | 'name' | 'repo' | 'path' | 'branch' | 'target' | 'base' | 'brief' | 'createdAt'> {
  /** Where the place stands: active, dropped, landed, kept (tidying kept it or its branch), making, tidying, missing. */
  state: 'making' | 'active' | 'dropped' | 'landed' | 'kept' | 'tidying' | 'missing';
  worktree: { present: boolean; locked: boolean; head: string | null };
  ready: PlaceRecord['ready'];
  stages: string[];
  stage: StageView | null;
  landing: Landing;
  dropped?: PlaceRecord['dropped'];
  kept?: PlaceRecord['kept'];
  /** The launch is over (every stage delivered, or a landing landed): nothing starts until its caller starts a stage by name. */
  finished?: PlaceRecord['finished'];
  /** Launched with --no-start: no stage starts until `flume stage` or `flume retry`. */
  awaitsStart?: boolean;
  /** The place's container, where its agents run in one: as its engine lists it now (`gone`: none of its name; `unknown`: the engine did not answer). */
  container?: { engine: string; image: string; name: string; state: string };
  /**
   * The place waits for its caller: its kind's caller starts its stages, or a stage's gate holds it.
   * `awaiting` says since when, after which stage and what it delivered (none before the first), and
   * whether a gate holds it (`flume next` goes on). Seen in the same reading as the delivery.
   */
  awaits?: 'caller';
  awaiting?: { since: string; after?: string; what?: string; gate: boolean };
  /** What the place's stages used, from their agents' own records: in all, and stage by stage (ended ones first). */
  usage?: PlaceUsage;
  /** Anything status cannot square: a worktree gone, a launch interrupted. */
  problems: string[];
}

/** A place's usage: its stages' summed, and each stage run's (null where its figures are unknown). */
export interface PlaceUsage extends UsageView {
  /** True when every stage run's figures are known (else the sum covers only those that are). */
  complete: boolean;
  stages: Array<{ name: string; startedAt: string; usage: UsageView | null }>;
}

/** A repository as status reports it. */
export interface RepositoryStatus {
  root: string;
  /** Whether the user trusted its config as it is now (`flume trust`); an untrusted config is not run. */
  trust?: 'trusted' | 'untrusted' | 'changed' | 'no-config';
  error?: { code: string; message: string; fix?: string };
  broken: Array<Pick<BrokenRecord, 'file' | 'problem'>>;
}

/** The whole report. */
export interface StatusReport {
  version: 1;
  generatedAt: string;
  repositories: RepositoryStatus[];
  places: PlaceStatus[];
  /** Present when there is any place: the supervisor is what moves places on. */
  supervisor?: SupervisorStatus;
}

/**
 * How long status waits for a repository's config to be probed, ms (`FLUME_STATUS_CONFIG_WAIT_MS`,
 * default 1 s): past it the repository is reported `CONFIG_LOADING` and the probe goes on in the
 * background, so status answers in a second or two whatever one config does.
 */
function configWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  return environmentMs(env, 'FLUME_STATUS_CONFIG_WAIT_MS');
}

/** Builds the status report: one repository's places (`repo`), or every place on the host. */
export async function status(preset: () => Promise<FlumePlugin[]>, options: { repo?: string; place?: string; commonDir?: string } = {}): Promise<StatusReport> {
  // A caller that knows the repository's git folder (a wait, reading one place again and again) spares git's look for it.
  const roots: Array<{ root: string; commonDir?: string }> = options.repo ? [{ root: options.repo, ...(options.commonDir ? { commonDir: options.commonDir } : {}) }] : await knownRepositories();
  const report: StatusReport = { version: 1, generatedAt: new Date().toISOString(), repositories: [], places: [] };
  // One place asked for: only its record is read further (its git reading, its agent); the others
  // still count, as the supervisor is reported whenever the host has any place.
  const wanted = options.place === undefined ? undefined : (r: PlaceRecord) => r.id === options.place || `${r.kind}--${r.name}` === options.place || r.path === options.place;
  const looks = containerLooks();
  const parts = await Promise.all(roots.map((known) => statusOfRepository(preset, known, wanted, looks)));
  let all = 0;
  for (const part of parts) {
    if (!part) continue;
    report.repositories.push(part.repository);
    report.places.push(...part.places);
    all += part.all;
  }
  if (all > 0) report.supervisor = await supervisorState();
  if (options.place !== undefined) {
    if (report.places.length === 0) {
      throw flumeError('UNKNOWN_PLACE', { place: options.place, repo: options.repo }, {
        variant: options.repo ? 'status' : 'statusOnHost',
        details: { place: options.place },
      });
    }
  }
  return report;
}

async function statusOfRepository(preset: () => Promise<FlumePlugin[]>, known: { root: string; commonDir?: string }, wanted: ((record: PlaceRecord) => boolean) | undefined, looks: ContainerLooks) {
  const named = !known.commonDir;
  // A repository the host list names is read from its state first: no places, no git process.
  const early = known.commonDir ? await readRecords(known.commonDir) : undefined;
  if (early && early.records.length === 0 && early.broken.length === 0) return undefined;
  if (!named && !existsSync(known.root)) {
    return { repository: { root: known.root, error: { code: 'NOT_A_REPOSITORY', message: `${known.root} is gone` }, broken: [] }, places: [], all: 0 };
  }
  const { findRepository, knownRepository } = await import('../../support/git.js');
  const info = (known.commonDir && (await knownRepository(known.root, known.commonDir))) || (await findRepository(known.root));
  const { records, broken } = early ?? (await readRecords(info.commonDir));
  const { trustState } = await import('../../config/trust.js');
  const trust = (await trustState(info.root)).state;
  const repositoryStatus: RepositoryStatus = { root: info.root, trust, broken: broken.map(({ file, problem }) => ({ file, problem })) };
  if (records.length === 0 && broken.length === 0) return named ? { repository: repositoryStatus, places: [], all: 0 } : undefined;
  const chosen = wanted ? records.filter(wanted) : records;
  // The git reading needs no config: it runs while the config opens.
  const reading = readPlaces(info.root, chosen, { commonDir: info.commonDir });
  reading.catch(() => undefined);
  let repository: Repository | undefined;
  try {
    // Runs the config only when it is trusted, and within the load limit: status never runs it unasked.
    // A config not yet probed is waited for a moment only, so one repository never stalls the report.
    repository = await openRepositoryAt(info, await preset(), undefined, { configWaitMs: configWaitMs() });
  } catch (error) {
    const e = error instanceof FlumeError ? error : flumeError('BAD_CONFIG', { message: String(error) }, { variant: 'thrown' });
    repositoryStatus.error = { code: e.code, message: e.message, ...(e.fix ? { fix: e.fix } : {}) };
    // Its places are still listed, from their records and git, with flume's built-ins only.
    repository = { info, flume: await (await import('../../api/plugin.js')).createFlume({ plugins: await preset(), root: info.root }) };
  }
  // Every agent read at once (one look at each host's panes), alongside the git reading.
  const flume = repository.flume;
  const handles = chosen.flatMap((record) => (flume.kinds.get(record.kind) && record.stage?.agent ? [record.stage.agent] : []));
  const agents = readAgents(flume, handles);
  const read = await reading;
  const places = await Promise.all(read.places.map((place) => placeStatus(repository!, read, place, agents, repositoryStatus.error?.code, looks)));
  return { repository: repositoryStatus, places, all: records.length };
}

async function placeStatus(repository: Repository, reading: Reading, place: PlaceReading, agents: Promise<AgentReadings>, configError: string | undefined, looks: ContainerLooks): Promise<PlaceStatus> {
  const { record, worktree, branch } = place;
  const kind = repository.flume.kinds.get(record.kind);
  const problems: string[] = [];
  const tidying = record.phase === 'tidying' || (record.phase === 'gone' && !record.kept);
  // A launch or tidy under way holds the place's lock: only one whose holder is gone was interrupted.
  const live = (record.phase === 'making' || tidying) && (await underWay(repository, record));
  if (!kind) problems.push(configError ? `its kind ${record.kind} is unknown while the repository's config is not loaded (${configError})` : `the kind ${record.kind} is no longer declared`);
  if (record.phase === 'making' && !live) problems.push('its launch was interrupted; the next launch or tidy of it rolls it back');
  if (tidying && !live) problems.push('its tidying was interrupted; the next flume tidy finishes it');
  if (record.phase !== 'gone' && record.phase !== 'making' && !worktree && !live) problems.push(`its worktree ${record.path} is gone`);
  if (!branch && record.phase !== 'making' && !live) problems.push(`its branch ${record.branch} is gone`);
  // A reader that cannot read (a lander's record that is not valid) leaves the landing unknown, in its words.
  const landing: Landing = await landingOf(repository.flume, reading, place).catch((error: unknown) => ({ state: 'unknown', what: error instanceof Error ? error.message.split('\n')[0] : String(error) }));
  const flume = repository.flume;
  const handle = record.stage?.agent;
  const current = handle && kind ? await agentUsage(flume, repository.info.commonDir, handle).catch(() => undefined) : undefined;
  const stageUsage = current ? usageView(current, flume.config.pricing) : undefined;
  const def = kind && record.stage ? kind.stages[record.stage.index] : undefined;
  const budget = budgetOf(flume.config, kind, def).tokens;
  const usage = placeUsage(record, current, flume.config.pricing);
  const stage = kind ? await stageView(repository.flume, reading, place, kind, agents, { usage: stageUsage, budget }) : null;
  const awaiting = kind && record.phase === 'made' && !record.dropped ? awaitingOf(flume, record, kind, stage) : undefined;
  const container = record.container ? await containerOf(record.container, looks) : undefined;
  const refused = reading.refusedBack.get(record.id);
  if (refused) problems.push(`its container's repository ${refused.folder} holds commits of ${record.branch} the branch here could not take (${refused.said}): nothing of them is taken until that is mended`);
  return {
    id: record.id,
    kind: record.kind,
    name: record.name,
    repo: record.repo,
    path: record.path,
    branch: record.branch,
    target: record.target,
    base: record.base,
    brief: record.brief,
    createdAt: record.createdAt,
    state: stateOf(record, landing.state, Boolean(worktree)),
    worktree: { present: Boolean(worktree), locked: Boolean(worktree?.locked), head: worktree?.head ?? null },
    ready: record.ready,
    stages: kind?.stages.map((s) => s.name) ?? [],
    stage,
    landing,
    ...(record.dropped ? { dropped: record.dropped } : {}),
    ...(record.kept ? { kept: record.kept } : {}),
    ...(record.finished ? { finished: record.finished } : {}),
    ...(!record.stage && record.launched?.start === false ? { awaitsStart: true } : {}),
    ...(awaiting ? { awaits: 'caller' as const, awaiting } : {}),
    ...(usage ? { usage } : {}),
    ...(container ? { container } : {}),
    problems,
  };
}

/** Every container of each engine a reading asks of, looked at once for all the places of all repositories. */
type ContainerLooks = (engine: PlaceContainer['engine']) => Promise<Map<string, { place: string; state: string }> | undefined>;

function containerLooks(): ContainerLooks {
  const asked = new Map<string, ReturnType<ContainerLooks>>();
  return (engine) => {
    if (!asked.has(engine)) asked.set(engine, import('../container/engine.js').then(({ listContainers }) => listContainers(engine)).catch(() => undefined));
    return asked.get(engine)!;
  };
}

async function containerOf(container: PlaceContainer, looks: ContainerLooks): Promise<NonNullable<PlaceStatus['container']>> {
  const all = await looks(container.engine);
  const state = all ? (all.get(container.name)?.state ?? 'gone') : 'unknown';
  return { engine: container.engine, image: container.image, name: container.name, state };
}

/**
 * Where the place waits for its caller: as recorded, or as the reading shows it before a step
 * records it (a stage that waits for its caller has just delivered), so its caller reads the
 * delivery and the wait together.
 */
function awaitingOf(flume: Flume, record: PlaceRecord, kind: KindDef, stage: StageView | null): PlaceStatus['awaiting'] {
  if (record.awaits) {
    const { at, gate, after, what } = record.awaits;
    return { since: at, ...(after ? { after } : {}), ...(what ? { what } : {}), gate };
  }
  if (!record.stage || !stage?.delivered || record.finished || !waitsForCaller(kind, record.stage.index)) return undefined;
  // A caller's stage whose deliverable lands the work ends the launch: nothing waits for the caller there.
  if (kind.advance === 'caller' && flume.deliverables.get(stage.deliverable)?.landing) return undefined;
  return { since: stage.delivered.at, after: stage.name, what: stage.delivered.what, gate: kind.advance !== 'caller' };
}

/** The place's usage from its ended stages' (kept in its history) and its current stage's; undefined when none is known. */
function placeUsage(record: PlaceRecord, current: AgentUsage | undefined, pricing: FlumeConfig['pricing']): PlaceUsage | undefined {
  const runs: Array<{ name: string; startedAt: string; usage?: AgentUsage }> = [...record.history];
  if (record.stage) runs.push({ name: record.stage.name, startedAt: record.stage.startedAt, usage: current });
  const known = runs.flatMap((run) => (run.usage ? [run.usage] : []));
  if (known.length === 0) return undefined;
  return {
    ...usageView(sumUsage(known), pricing),
    complete: known.length === runs.length,
    stages: runs.map((run) => ({ name: run.name, startedAt: run.startedAt, usage: run.usage ? usageView(run.usage, pricing) : null })),
  };
}

/**
 * True when a flume that runs holds the place's lock, or the place moved on since the reading (the
 * launch or tidy ended between the reading and the look at its lock): either way nothing was cut short.
 */
async function underWay(repository: Repository, record: PlaceRecord): Promise<boolean> {
  const { commonDir } = repository.info;
  const key = keyOf(record);
  if ((await lockHolder(placeLockFile(commonDir, key)))?.alive) return true;
  const now = await readRecord(commonDir, key).catch(() => undefined);
  return !now || now.phase !== record.phase || Boolean(now.kept) !== Boolean(record.kept);
}

function stateOf(record: PlaceRecord, landing: PlaceStatus['landing']['state'], present: boolean): PlaceStatus['state'] {
  if (record.phase === 'making') return 'making';
  // Gone but not kept: tidying removed the worktree and was cut short before it judged the branch.
  if (record.phase === 'tidying' || (record.phase === 'gone' && !record.kept)) return 'tidying';
  if (record.phase === 'gone' || record.kept) return 'kept';
  if (!present) return 'missing';
  if (record.dropped) return 'dropped';
  if (landing === 'landed') return 'landed';
  return 'active';
}
