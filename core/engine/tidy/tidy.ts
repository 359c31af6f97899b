/**
 * Tidying (DESIGN.md "Tidy"): removes only places flume made whose work is over, through the
 * repository's own worktree tool, then judges the branch by patch (`git cherry`) and by content
 * (`git merge-tree`) and keeps it when its target lacks any of its patches or merging it would add
 * anything. When anything cannot be read, nothing is removed.
 */
import { lstat, realpath, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { removeContainer } from '../container/engine.js';
import { bringBackOrRefuse, containerGitDir, placeHead, removeContainerRepository } from '../container/repository.js';
import { proxyDir, proxyInit, proxyLog } from '../container/proxy.js';
import { callHook } from '../../api/hooks.js';
import { crashPoint } from '../../support/crash.js';
import { FlumeError, flumeError } from '../../api/errors.js';
import { runStep } from '../../support/exec.js';
import type { Repository } from '../../config/repository.js';
import { commitsRemotesLack, deleteBranch, hiddenEdits, populatedSubmodules, readRepository, removeWorktree, stashEntries, worktreeChanges } from '../../support/git.js';
import { placeKey, placePath, PLACES_DIR } from '../../state/place.js';
import { appendEvent, keyOf, readRecord, readRecords, recordWithEvent, removeRecord, withPlaceLock, writeRecord } from '../../state/store.js';
import { forgetRepository } from '../../state/host.js';
import type { PlaceRecord } from '../../api/record.js';
import { readPlaces, type PlaceReading, type Reading } from '../status/reading.js';
import { recoverPlace } from '../stage/recover.js';
import { agentRunning, workOver } from './over.js';
import { contentWords } from '../../support/landing.js';

/** What tidying did with one place. */
export interface TidyOutcome {
  id: string;
  path: string;
  branch: string;
  /** removed: worktree gone; kept: a safety rule kept it; skipped: its work is not over; would-remove: dry run. */
  action: 'removed' | 'kept' | 'skipped' | 'would-remove';
  reason?: string;
  /** After removal: whether the branch was deleted or kept (with the count of patches its target lacks, and the evidence that kept it). */
  branchOutcome?: { deleted: boolean; missing?: number; by?: 'patch' | 'content' };
}

/** Tidies every place of the repository whose work is over, or only `only` (a place key). */
export async function tidy(repository: Repository, options: { only?: string; dryRun?: boolean } = {}): Promise<TidyOutcome[]> {
  const { info } = repository;
  const { records } = await readRecords(info.commonDir);
  const chosen = options.only ? records.filter((r) => keyOf(r) === options.only) : records;
  if (options.only && chosen.length === 0) {
    throw flumeError('UNKNOWN_PLACE', { place: options.only.replace('--', '/'), repo: info.root }, {
      details: { place: options.only },
    });
  }
  const reading = await readPlaces(info.root, chosen);
  // Judge every place's landing now, in the reading's one batched pass: it reads every place's
  // branch, so it must run before tidying one place deletes a branch (else it reads nothing).
  await Promise.all(reading.places.map((place) => reading.unlanded(place.record)));
  const outcomes: TidyOutcome[] = [];
  for (const place of reading.places) {
    outcomes.push(await tidyOne(repository, place, reading, options.dryRun ?? false));
  }
  if (!options.dryRun && (await readRecords(info.commonDir)).records.length === 0) await forgetRepository(info.commonDir);
  return outcomes;
}

async function tidyOne(repository: Repository, place: PlaceReading, reading: Awaited<ReturnType<typeof readPlaces>>, dryRun: boolean): Promise<TidyOutcome> {
  const { info, flume } = repository;
  const key = keyOf(place.record);
  const base = { id: place.record.id, path: place.record.path, branch: place.record.branch };
  try {
    return await withPlaceLock(info.commonDir, key, async () => {
      let record = place.record;
      try {
        crashPoint('tidy:locked');
        if ((await recoverPlace(repository, key)) === 'rolled-back') return { ...base, action: 'removed', reason: 'an interrupted launch was rolled back' } as TidyOutcome;
        const fresh = await readRecord(info.commonDir, key);
        // Another tidy finished this place while we waited: writing the old record back would revive it.
        if (!fresh) return { ...base, action: 'removed', reason: 'already tidied' } as TidyOutcome;
        record = fresh;
        if (record.phase === 'gone') return await finishBranch(repository, record, dryRun, base);
        const over = record.phase === 'tidying' ? 'tidying resumed' : await workOver(flume, reading, { ...place, record });
        if (!over) return { ...base, action: 'skipped', reason: 'its work is not over (not landed, not dropped)' } as TidyOutcome;
        const keep = await reasonToKeep(repository, { ...place, record }, reading);
        if (keep) {
          if (!dryRun) await markKept(repository, record, keep);
          return { ...base, action: 'kept', reason: keep } as TidyOutcome;
        }
        if (dryRun) return { ...base, action: 'would-remove', reason: over } as TidyOutcome;
        record.phase = 'tidying';
        await writeRecord(info.commonDir, record);
        crashPoint('tidy:marked');
        const failed = await removePlace(repository, record, place);
        if (failed) {
          record.phase = 'made';
          await markKept(repository, record, failed);
          return { ...base, action: 'kept', reason: failed } as TidyOutcome;
        }
        crashPoint('tidy:worktree-removed');
        record.phase = 'gone';
        await recordWithEvent(info.commonDir, record, { event: 'worktree-removed', reason: over });
        return await finishBranch(repository, record, false, base);
      } catch (error) {
        // Still holding the lock: record why, so status shows the kept place with its reason.
        const reason = cannotRead(error);
        if (!dryRun) await markKept(repository, record, reason).catch(() => undefined);
        return { ...base, action: 'kept', reason } as TidyOutcome;
      }
    }, { timeoutMs: 0 });
  } catch (error) {
    // The place's lock is held: a launch or another tidy is at work on it. Not kept: it is tidied
    // on a later run, once that work ends.
    if (error instanceof FlumeError && error.code === 'PLACE_BUSY') {
      return { ...base, action: 'skipped', reason: 'it is busy (a launch or a tidy of it is under way): tidy again when that ends' };
    }
    return { ...base, action: 'kept', reason: cannotRead(error) };
  }
}

function cannotRead(error: unknown): string {
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return `cannot read it, so nothing was removed: ${message}`;
}

/** Every safety rule that keeps a place, checked before anything is removed; undefined when none applies. */
async function reasonToKeep(repository: Repository, place: PlaceReading, reading: Reading): Promise<string | undefined> {
  const { info, flume } = repository;
  const { record, worktree } = place;
  const expected = placePath(info.root, record.kind, record.name);
  if (record.path !== expected || dirname(record.path) !== join(info.root, PLACES_DIR) || resolve(record.path) === resolve(info.root)) {
    return `its folder ${record.path} is not ${expected}: flume removes only places it made under ${PLACES_DIR}/`;
  }
  const link = await throughLink(info.root, record.path);
  if (link) return link;
  if (worktree) {
    if (worktree.branch !== record.branch) return `the worktree at ${record.path} is on ${worktree.branch ?? 'a detached HEAD'}, not ${record.branch}: flume did not make it`;
    if (worktree.locked) return `the worktree is locked${worktree.lockReason ? ` (${worktree.lockReason})` : ''}: unlock it with git worktree unlock when it may go`;
    // What git's status does not show comes first: removing the folder would take it, commits and all.
    const changes = await worktreeChanges(record.path, { nested: true });
    if (changes.nested.length) {
      return `it holds a repository of its own (${sample(changes.nested)}), whose commits are not in ${info.root}: move it out of the place, or remove it when it may go`;
    }
    const submodules = await populatedSubmodules(record.path);
    if (submodules.length) return await submoduleReason(record.path, submodules);
    if (changes.modified.length) return `it has modified files (${sample(changes.modified)}): commit or stash them`;
    if (changes.untracked.length) return `it has untracked files (${sample(changes.untracked)}): commit, ignore or remove them`;
    const hidden = await hiddenEdits(record.path);
    if (hidden.length) {
      const named = sample(hidden.map((edit) => `${edit.file} (${edit.bit})`));
      const first = hidden[0];
      return `it has edits git status does not show (${named}): clear the bit (git update-index --no-${first.bit} -- ${first.file} in the place), then commit or restore them`;
    }
  }
  const stash = (await stashEntries(info.root)).find((entry) => stashedOn(entry.subject, record.branch));
  if (stash) return `a stash was made in it (${stash.ref}: ${stash.subject}): apply or drop it (git stash list shows it)`;
  // The branch is judged against its target once the worktree is gone: a target that cannot be read
  // now would leave that judgement unmade, so nothing is removed.
  if (place.branch && !reading.repository.branches.has(record.target)) {
    return `its target ${record.target} is not a branch here, so its branch cannot be judged: nothing was removed (name the target in flume.config.ts)`;
  }
  if (await agentRunning(flume, record)) return 'its agent is still running: stop it with flume stop';
  if (record.container) {
    // The reading took the branch back from the container's repository: one it could not is kept there.
    const dir = containerGitDir(record.container);
    const inside = await placeHead(dir, record.branch);
    if (inside && inside !== place.branch?.head) return `its container's repository ${dir} holds commits of ${record.branch} the branch here could not take: they are the agent's, look at them in its container (${record.container.engine} exec -it ${record.container.name} git log ${record.branch}) and take what you want as a patch you have read, then remove that folder and tidy again`;
  }
  const veto = await callHook('beforeTidy', flume.hooks.beforeTidy, { place: record });
  return veto ? `a plugin keeps it: ${veto}` : undefined;
}

async function removePlace(repository: Repository, record: PlaceRecord, place: PlaceReading): Promise<string | undefined> {
  const { info, flume } = repository;
  // Its container goes first (its volumes never): nothing is in it that is not in the place or its home.
  if (record.container && !(await removeContainer(record.container.engine, record.container.name))) {
    return `its container ${record.container.name} could not be removed (${record.container.engine} rm -f refused): remove it, then tidy again`;
  }
  if (record.container) {
    // Nothing runs in it now: what was committed there since the reading comes back, or the place stays.
    const container = record.container;
    const refusal = await bringBackOrRefuse(container, { root: info.root, commonDir: container.gitDir, path: record.path, branch: record.branch, target: record.target }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    if (refusal) return refusal;
    await removeContainerRepository(container);
    for (const path of [proxyDir(container), proxyInit(container), proxyLog(container)]) await rm(path, { recursive: true, force: true });
  }
  // Nothing is registered at the place's path: nothing to remove. Never `git worktree prune` here:
  // it unregisters every worktree whose folder is missing, hand-made ones on an unmounted disk too.
  if (!place.worktree) return undefined;
  if (flume.config.worktreeTool === 'worktrunk') {
    const result = await runStep('wt', ['remove', '--no-delete-branch', '--foreground', '--yes', record.branch], { cwd: info.root });
    if (result.exitCode !== 0) return `wt remove failed (exit ${result.exitCode ?? result.failedToStart}): ${result.all.trim().split('\n').slice(-3).join(' ')}`;
    // Trust what git reads, not the exit code: a branch must not be deleted under a worktree still on it.
    if ((await readRepository(info.root)).worktrees.some((w) => resolve(w.path) === record.path)) return `wt remove exited 0 but the worktree ${record.path} is still there`;
    return undefined;
  }
  try {
    await removeWorktree(info.root, record.path);
    return undefined;
  } catch (error) {
    return `git worktree remove refused: ${(error as Error).message}`;
  }
}

async function finishBranch(repository: Repository, record: PlaceRecord, dryRun: boolean, base: Pick<TidyOutcome, 'id' | 'path' | 'branch'>): Promise<TidyOutcome> {
  const { info } = repository;
  const key = placeKey(record.kind, record.name);
  const now = await readPlaces(info.root, [record]);
  const heads = now.places[0];
  if (!heads.branch) {
    if (!dryRun) await removeRecord(info.commonDir, key);
    return { ...base, action: 'removed', branchOutcome: { deleted: true } };
  }
  // Judged by git alone, by patch and by content, whatever a lander's record says of the place: a
  // branch goes only when it holds nothing its target lacks.
  const judged = await now.landing(record);
  crashPoint('tidy:branch-judged');
  if (!judged) {
    const reason = `the branch ${record.branch} cannot be judged against ${record.target} (is ${record.target} still a branch?): kept`;
    if (!dryRun) await markKept(repository, record, reason, true);
    return { ...base, action: 'removed', reason, branchOutcome: { deleted: false } };
  }
  const missing = judged.patches;
  if (missing > 0) {
    const reason = `the branch ${record.branch} holds ${missing} commit${missing === 1 ? '' : 's'} whose patch ${record.target} lacks: kept (land it on ${record.target}, or git branch -D ${record.branch} if it may go)`;
    if (!dryRun) await markKept(repository, record, reason, true);
    return { ...base, action: 'removed', reason, branchOutcome: { deleted: false, missing, by: 'patch' } };
  }
  if (judged.content) {
    const reason = `the branch ${record.branch} holds work ${record.target} lacks, though every patch of it is there: ${contentWords(record.target, judged.content)} (a merge commit's own changes, or a patch ${record.target} reverted): kept (land it on ${record.target}, or git branch -D ${record.branch} if it may go)`;
    if (!dryRun) await markKept(repository, record, reason, true);
    return { ...base, action: 'removed', reason, branchOutcome: { deleted: false, missing, by: 'content' } };
  }
  // A worktree still on the branch (one made by hand, elsewhere) is not flume's to pull it from under.
  const holder = now.repository.worktrees.find((w) => w.branch === record.branch);
  if (holder) {
    const reason = `the branch ${record.branch} is checked out in ${holder.path}: kept`;
    if (!dryRun) await markKept(repository, record, reason, true);
    return { ...base, action: 'removed', reason, branchOutcome: { deleted: false, missing } };
  }
  if (dryRun) return { ...base, action: 'would-remove', branchOutcome: { deleted: true } };
  await deleteBranch(info.root, record.branch, heads.branch.head);
  crashPoint('tidy:branch-deleted');
  await removeRecord(info.commonDir, key);
  return { ...base, action: 'removed', branchOutcome: { deleted: true } };
}

async function markKept(repository: Repository, record: PlaceRecord, reason: string, branchKept = false): Promise<void> {
  // Kept again for the same reason, the record otherwise as stored: nothing new to say. Writing would
  // wake every watcher of the record (the supervisor's next pass judges it again, without end).
  const stored = await readRecord(repository.info.commonDir, keyOf(record)).catch(() => undefined);
  if (stored?.kept && stored.kept.reason === reason && Boolean(stored.kept.branchKept) === branchKept && sameBesidesKept(stored, record)) {
    record.kept = stored.kept;
    return;
  }
  record.kept = { at: new Date().toISOString(), reason, ...(branchKept ? { branchKept } : {}) };
  await recordWithEvent(repository.info.commonDir, record, { event: 'kept', reason });
}

/**
 * Why a place reached through a symlink is kept: its `places` folder, or the place's own folder, is
 * (or became) a link, so removing it would remove what the link points at.
 */
async function throughLink(root: string, path: string): Promise<string | undefined> {
  const places = dirname(path);
  for (const folder of [places, path]) {
    const stat = await lstat(folder).catch(() => undefined);
    if (stat?.isSymbolicLink()) {
      const target = await realpath(folder).catch(() => 'a missing folder');
      return `${folder} is a symlink to ${target}: flume removes nothing through a link; remove the place by hand if it may go`;
    }
  }
  // A link higher up (in the repository's own path) moves root and place alike; only a place that
  // resolves outside the repository's places folder is refused.
  const [realRoot, realPlace] = await Promise.all([realpath(root).catch(() => root), realpath(path).catch(() => undefined)]);
  const expected = join(realRoot, PLACES_DIR, basename(path));
  if (realPlace && realPlace !== expected) {
    return `${path} resolves to ${realPlace}, not ${expected}: flume removes nothing through a link; remove the place by hand if it may go`;
  }
  return undefined;
}

/** A populated submodule keeps a place (`git worktree remove` refuses it, and its commits may be only here); the reason names it. */
async function submoduleReason(path: string, submodules: string[]): Promise<string> {
  for (const submodule of submodules) {
    const lacking = await commitsRemotesLack(join(path, submodule));
    if (lacking === undefined) return `its submodule ${submodule} cannot be read, so nothing was removed`;
    if (lacking > 0) return `its submodule ${submodule} holds ${lacking} commit${lacking === 1 ? '' : 's'} its remotes lack: push them, then remove the place by hand (git worktree remove --force)`;
  }
  return `it holds the submodule${submodules.length === 1 ? '' : 's'} ${sample(submodules)}, which git worktree remove does not remove: remove the place by hand (git worktree remove --force) when it may go`;
}

/** True when a stash subject says it was made on `branch` (`WIP on <branch>: …` or `On <branch>: …`). */
function stashedOn(subject: string, branch: string): boolean {
  return subject.startsWith(`WIP on ${branch}: `) || subject.startsWith(`On ${branch}: `);
}

function sameBesidesKept(a: PlaceRecord, b: PlaceRecord): boolean {
  return JSON.stringify({ ...a, kept: undefined }) === JSON.stringify({ ...b, kept: undefined });
}

function sample(files: string[]): string {
  return files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
}
