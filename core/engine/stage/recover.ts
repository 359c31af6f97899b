/**
 * Puts right what a crash left between the steps of a launch. Called holding the place's lock.
 * A launch that never finished is rolled back where nothing can be lost (its branch still at its
 * base, its worktree clean); anything else is rolled forward and left for status to show.
 */
import { resolve } from 'node:path';
import type { Repository } from '../../config/repository.js';
import { branchCreation, deleteBranch, readRepository, removeWorktree, worktreeChanges } from '../../support/git.js';
import { appendEvent, readRecord, removeRecord, writeRecord } from '../../state/store.js';
import type { PlaceRecord } from '../../api/record.js';

/** What recovery did to a place: nothing, rolled an unfinished launch back, or forward. */
export type Recovery = 'none' | 'rolled-back' | 'rolled-forward';

/** Recovers the place `key` if a launch of it was interrupted; call holding its lock. */
export async function recoverPlace(repository: Repository, key: string): Promise<Recovery> {
  const { info } = repository;
  const record = await readRecord(info.commonDir, key);
  if (!record || record.phase !== 'making') return 'none';
  return rollBackLaunch(repository, record);
}

async function rollBackLaunch(repository: Repository, record: PlaceRecord): Promise<Recovery> {
  const { info } = repository;
  const key = `${record.kind}--${record.name}`;
  const reading = await readRepository(info.root);
  const worktree = reading.worktrees.find((w) => resolve(w.path) === record.path);
  const found = reading.branches.get(record.branch);
  // Only a branch this launch made is its to keep or remove; one of the name made elsewhere (by hand,
  // by another launch) is not its own, whatever commit it stands at.
  const branch = found && (await madeBy(repository, record)) ? found : undefined;
  if (worktree && (worktree.branch !== record.branch || (found && !branch))) {
    // Something else stands at the place's path: not ours to touch. Forget the unfinished launch.
    await removeRecord(info.commonDir, key);
    return 'rolled-back';
  }
  if (branch && branch.head !== record.base) return rollForward(repository, record);
  if (worktree) {
    const changes = await worktreeChanges(worktree.path).catch(() => undefined);
    if (!changes || changes.modified.length || changes.untracked.length || worktree.locked) return rollForward(repository, record);
    await removeWorktree(info.root, worktree.path);
  }
  if (branch) await deleteBranch(info.root, record.branch, record.base);
  await removeRecord(info.commonDir, key);
  return 'rolled-back';
}

/** The reflog message a launch gives the branch it makes: it names the place and the launch. */
export function launchMessage(record: Pick<PlaceRecord, 'id' | 'launch'>): string {
  return `flume: launch ${record.id} ${record.launch}`;
}

/**
 * True when the place's branch was made by the launch of `record`: its reflog's first entry is that
 * launch's message. A record written before launches named themselves (no `launch`) is judged as then.
 */
async function madeBy(repository: Repository, record: PlaceRecord): Promise<boolean> {
  if (record.launch === undefined) return true;
  return (await branchCreation(repository.info.root, record.branch)) === launchMessage(record);
}

async function rollForward(repository: Repository, record: PlaceRecord): Promise<Recovery> {
  record.phase = 'made';
  await writeRecord(repository.info.commonDir, record);
  await appendEvent(repository.info.commonDir, `${record.kind}--${record.name}`, { event: 'recovered', note: 'an interrupted launch left work; kept' });
  return 'rolled-forward';
}
