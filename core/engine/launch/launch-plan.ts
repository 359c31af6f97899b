/**
 * The checks of a launch, made before anything is: what the place would be (name, kind, brief, base,
 * target, branch, folder) and whether anything stands in its way. A launch and `launch --dry-run`
 * both plan here, so a dry run refuses exactly what a launch refuses, with the same error.
 */
import { randomUUID } from 'node:crypto';
import { lstatSync, rmSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlumeError, flumeError } from '../../api/errors.js';
import { driverOf, kindOf, type Repository } from '../../config/repository.js';
import { reachDriver } from '../../drivers/reach.js';
import { gitIdentity, IDENTITY_VARIABLES, isValidBranchName, readRepository, resolveRevision, trackedUnder } from '../../support/git.js';
import { passedOn } from '../../support/environment.js';
import { checkName, nameFromBrief, placeBranch, placeId, placeKey, placePath, PLACES_DIR } from '../../state/place.js';
import { readRecord } from '../../state/store.js';
import type { KindDef } from '../../api/config.js';
import type { ContainerSpec, PlaceContainer, PlaceRecord } from '../../api/record.js';
import { checkEngine, checkMounts, containerName } from '../container/engine.js';
import { which } from '../../support/exec.js';
import { hostStateDir } from '../../state/dir.js';
import { readJsonFile, updateJsonFile } from '../../state/json-file.js';
import { launchTarget } from './target.js';
import { readBrief, type LaunchRequest } from './brief.js';
import { renderPrompt, type PromptPlace } from '../stage/prompt.js';

/** A place a launch would make, every check before its lock passed. */
export interface PlacePlan {
  kind: KindDef;
  name: string;
  /** `<kind>--<name>`, the key of its record and lock. */
  key: string;
  path: string;
  branch: string;
  /** The revision the branch starts from, as named (`--from`, else the main checkout's branch, else HEAD). */
  from: string;
  /** The commit it names. */
  base: string;
  target: string;
  brief: string;
  /** Where the place's agents run in a container: what it is made of, checked here. */
  container?: PlaceContainer;
}

/**
 * Runs `attempt` with the request's name; with none, with names made from the brief, the next one
 * (a numeric suffix) whenever a name is taken: the caller did not choose it, so it is not refused.
 */
export async function eachName<T>(request: LaunchRequest, attempt: (name: string) => Promise<T>): Promise<T> {
  if (request.name !== undefined) return attempt(request.name);
  const base = nameFromBrief(await readBrief(request));
  for (let n = 1; n <= 50; n++) {
    const name = n === 1 ? base : `${base.slice(0, 60)}-${n}`;
    try {
      return await attempt(name);
    } catch (error) {
      if (!(error instanceof FlumeError) || !['PLACE_EXISTS', 'BRANCH_EXISTS', 'WORKTREE_EXISTS'].includes(error.code)) throw error;
    }
  }
  throw flumeError('PLACE_EXISTS', { name: base }, {
    variant: 'autoNames',
    details: { name: base },
  });
}

/** Checks everything about a launch of `name` that needs no lock, changing nothing; returns the place it would make. */
export async function planPlace(repository: Repository, request: LaunchRequest, name: string): Promise<PlacePlan> {
  checkName(name);
  const { info, flume } = repository;
  const kind = kindOf(flume, request.kind);
  const brief = await readBrief(request);
  if (!info.hasCommit) {
    throw flumeError('NO_COMMIT', { repo: info.root }, {
      details: { repo: info.root },
    });
  }
  const from = request.from ?? info.mainBranch ?? 'HEAD';
  const base = await resolveRevision(info.root, from);
  if (!base) {
    throw flumeError('BAD_REF', { ref: JSON.stringify(from), repo: info.root }, {
      details: { from },
    });
  }
  await refuseUnsafePlaces(info.root);
  const target = await launchTarget(info, flume.config.target, request.from);
  const branch = placeBranch(kind, name);
  if (!(await isValidBranchName(info.root, branch))) {
    throw flumeError('BAD_NAME', { branch: JSON.stringify(branch) }, {
      variant: 'branch',
      details: { branch },
    });
  }
  const path = placePath(info.root, kind.name, name);
  refuseUnsentPrompts(repository, kind, { brief, path, branch, name, target, ready: { state: 'none', at: new Date().toISOString() } });
  const id = placeId(kind.name, name);
  const container = await placeContainer(repository, request, id, base);
  return { kind, name, key: placeKey(kind.name, name), path, branch, from, base, target, brief, ...(container ? { container } : {}) };
}

/**
 * Refuses a launch whose stage prompt its agent would take as something other than a prompt (its
 * driver's `refuse`: a brief starting with `/` is Claude Code's command), as sending it would be
 * refused: better before the place is made than as a stage that never started. Each prompt is
 * filled in as far as a launch knows (no stage has delivered yet; a reader's variables stay unfilled),
 * and its prompt for a fix round.
 */
function refuseUnsentPrompts(repository: Repository, kind: KindDef, place: PromptPlace): void {
  const { flume } = repository;
  for (const stage of kind.stages) {
    const key = driverOf(flume, stage);
    const driver = key ? reachDriver(flume, key) : undefined;
    for (const fixRound of [false, true]) {
      const refused = driver?.refusal(renderPrompt(flume.config, kind, stage, place, { previous: '', fixRound }));
      if (refused) throw refused;
    }
  }
}

/**
 * The container a launch asks for (`--container IMAGE`, else the config's `agent.container`), checked
 * before anything is made: the engine is this machine's and answers, the image is here, git inside
 * finds the repository at its git folder and a mounted folder writes through. Undefined for none.
 */
async function placeContainer(repository: Repository, request: LaunchRequest, id: string, base: string | undefined): Promise<PlaceContainer | undefined> {
  const configured = repository.flume.config.agent?.container;
  if (!request.container && !configured) return undefined;
  // Every agent of the kind must run in one: a driver that keeps its agent's files elsewhere would lose them.
  const { flume } = repository;
  const kind = kindOf(flume, request.kind);
  // What the kind's agents must reach, by their drivers: the default allowlist.
  const egress = new Set<string>();
  for (const stage of kind.stages) {
    const key = driverOf(flume, stage);
    const driver = key ? reachDriver(flume, key) : undefined;
    if (driver && !driver.inContainers) {
      throw flumeError('CONTAINER_UNUSABLE', { agent: key!, stage: stage.name, kind: kind.name }, { variant: 'driver', details: { agent: key, stage: stage.name } });
    }
    for (const host of driver?.egress({ ...(flume.config.agents?.[key!]?.env ?? {}), ...(configured?.env ?? {}) }) ?? []) egress.add(host);
  }
  const engine = configured?.engine ?? (which('podman') ? 'podman' : 'docker');
  const spec: ContainerSpec = {
    engine,
    image: request.container ?? configured!.image,
    ...(configured?.mounts ? { mounts: configured.mounts } : {}),
    ...(configured?.env ? { env: configured.env } : {}),
    network: (configured?.network as ContainerSpec['network']) ?? { allow: [...egress] },
  };
  const { commonDir } = repository.info;
  const name = containerName({ id, commonDir });
  const { imageId } = await checkEngine(spec);
  // The agent commits as this machine's user (engine's container host gives git's variables): one
  // with no identity here would see every commit inside fail.
  const identity = await gitIdentity(repository.info.root, { ...passedOn(process.env), ...(spec.env ?? {}) });
  if (!IDENTITY_VARIABLES.every((name) => identity[name] !== undefined)) {
    throw flumeError('CONTAINER_UNUSABLE', { repo: repository.info.root }, { variant: 'identity', details: { engine: spec.engine } });
  }
  const homes = join(hostStateDir(), 'homes');
  // What a container of this very image showed of this repository holds for the next: checked once
  // per image, repository, mounts and network (a container started costs the most of a launch).
  const key = JSON.stringify([spec.engine, imageId, commonDir, spec.mounts ?? [], spec.network ?? '']);
  const file = join(hostStateDir(), 'container-checks.json');
  const known = await readJsonFile<Record<string, string>>(file, {});
  if (!known[key]) {
    // The check writes in a folder of its own beside the homes, removed after: a refused launch leaves nothing.
    const probe = join(homes, `.check-${randomUUID()}`);
    try {
      await checkMounts(spec, { commonDir, home: probe, ...(base ? { head: base } : {}) });
    } finally {
      rmSync(probe, { recursive: true, force: true });
    }
    await updateJsonFile<Record<string, string>>(file, {}, (value) => ({ ...value, [key]: new Date().toISOString() }));
  }
  return { ...spec, name, home: join(homes, name), gitDir: commonDir };
}

/** The record a launch of the plan writes first, as `making` (the intent). */
export function placeRecord(repository: Repository, plan: PlacePlan, request: LaunchRequest): PlaceRecord {
  const now = new Date().toISOString();
  return {
    version: 1,
    id: placeId(plan.kind.name, plan.name),
    kind: plan.kind.name,
    name: plan.name,
    repo: repository.info.root,
    path: plan.path,
    branch: plan.branch,
    target: plan.target,
    base: plan.base,
    brief: plan.brief,
    createdAt: now,
    launch: randomUUID(),
    phase: 'making',
    ready: { state: 'none', at: now },
    history: [],
    launched: { start: request.start !== false, watch: request.watch !== false },
    ...(plan.container ? { container: plan.container } : {}),
  };
}

/** The refusal of a launch whose place another launch holds the lock of. */
export function launchUnderWay(plan: Pick<PlacePlan, 'kind' | 'name'>): FlumeError {
  const id = placeId(plan.kind.name, plan.name);
  return flumeError('PLACE_EXISTS', { place: id }, {
    variant: 'launching',
    details: { place: id },
  });
}

/**
 * Refuses a place that is there already: its record, a worktree or anything at its folder, or its
 * branch. `skipInterrupted` (a dry run, which cannot recover it) passes over the record of a launch
 * that never finished, which a launch puts right first.
 */
export async function refuseExisting(repository: Repository, plan: Pick<PlacePlan, 'key' | 'path' | 'branch'>, options: { skipInterrupted?: boolean } = {}): Promise<void> {
  const { info } = repository;
  const { key, path, branch } = plan;
  const existing = await readRecord(info.commonDir, key);
  if (existing && !(options.skipInterrupted && existing.phase === 'making')) {
    throw flumeError('PLACE_EXISTS', { place: existing.id, path: existing.path }, {
      details: { place: existing.id, path: existing.path },
    });
  }
  const reading = await readRepository(info.root);
  if (reading.worktrees.some((worktree) => resolve(worktree.path) === path)) {
    throw flumeError('WORKTREE_EXISTS', { path }, {
      details: { path },
    });
  }
  // lstat, not exists: a symlink at the place's path (even a dangling one) is something there.
  const there = lstatOrUndefined(path);
  if (there) {
    throw flumeError('PLACE_EXISTS', { path }, {
      variant: there.isSymbolicLink() ? 'symlinkThere' : 'folderThere',
      details: { path },
    });
  }
  if (reading.branches.has(branch)) throw branchExists(branch);
}

/** The refusal of a launch whose branch exists. */
export function branchExists(branch: string): FlumeError {
  return flumeError('BRANCH_EXISTS', { branch }, {
    details: { branch },
  });
}

/**
 * Refuses a repository whose `places` is not flume's to use: a symlink (the worktree would land
 * wherever it points, perhaps inside another repository), or a folder the repository tracks (the
 * `/places/` line flume adds to info/exclude would hide the repository's own new files there).
 */
async function refuseUnsafePlaces(root: string): Promise<void> {
  const places = join(root, PLACES_DIR);
  const stat = lstatOrUndefined(places);
  if (stat?.isSymbolicLink()) {
    throw flumeError('PLACES_UNSAFE', { path: places, folder: PLACES_DIR }, {
      details: { path: places, found: 'symlink' },
    });
  }
  const tracked = await trackedUnder(root, PLACES_DIR);
  if (tracked.length) {
    throw flumeError('PLACES_UNSAFE', { folder: PLACES_DIR, tracked: tracked.join(', ') }, {
      variant: 'tracked',
      details: { path: places, found: 'tracked', tracked },
    });
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
