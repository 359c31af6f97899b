/**
 * Making a place (DESIGN.md "Words" and "State"). Everything is checked before anything is made
 * (launch-plan.ts, which a dry run shares); then the record is written as `making` (the intent), the
 * branch is made (only if absent, its reflog naming this launch), the worktree is added on it, and
 * the record is marked `made`. A crash between any two of these leaves something `recover` puts
 * right, touching only what this launch made.
 */
import { join } from 'node:path';
import { crashPoint } from '../../support/crash.js';
import { FlumeError } from '../../api/errors.js';
import type { Repository } from '../../config/repository.js';
import { addWorktree, createBranch, excludePath } from '../../support/git.js';
import { PLACES_DIR } from '../../state/place.js';
import { appendEvent, recordWithEvent, withPlaceLock, writeRecord } from '../../state/store.js';
import { rememberRepository } from '../../state/host.js';
import { withLock } from '../../state/lock.js';
import type { PlaceRecord } from '../../api/record.js';
import { readyPlace } from './ready.js';
import { launchMessage, recoverPlace } from '../stage/recover.js';
import type { LaunchRequest } from './brief.js';
import { branchExists, eachName, launchUnderWay, placeRecord, planPlace, refuseExisting } from './launch-plan.js';

export { readBrief, type LaunchRequest } from './brief.js';

/** Makes the place of a launch and readies it; returns its record. Refuses, changing nothing, on any bad input. */
export async function makePlace(repository: Repository, request: LaunchRequest, onProgress?: (line: string) => void): Promise<PlaceRecord> {
  return eachName(request, (name) => makeNamedPlace(repository, request, name, onProgress));
}

async function makeNamedPlace(repository: Repository, request: LaunchRequest, name: string, onProgress?: (line: string) => void): Promise<PlaceRecord> {
  const plan = await planPlace(repository, request, name);
  const { info, flume } = repository;
  const { key, path, branch, base } = plan;

  return withPlaceLock(info.commonDir, key, async () => {
    crashPoint('launch:locked');
    await recoverPlace(repository, key);
    await refuseExisting(repository, plan);
    const record = placeRecord(repository, plan, request);
    // Under a lock of the repository's own: launches of other names at once add the line only once.
    await withLock(join(info.commonDir, 'flume', 'exclude.lock'), () => excludePath(info.commonDir, `/${PLACES_DIR}/`), { what: 'info/exclude' });
    await rememberRepository({ root: info.root, commonDir: info.commonDir });
    await writeRecord(info.commonDir, record);
    // Again once the record exists: a tidy that found no records may have forgotten the repository.
    await rememberRepository({ root: info.root, commonDir: info.commonDir });
    crashPoint('launch:recorded');
    onProgress?.(`making ${path} on ${branch}`);
    // The branch is made apart from the worktree, only if absent, its reflog naming this launch: a
    // rollback then removes it only if this launch made it, never a branch of the name made elsewhere.
    const made = await createBranch(info.root, branch, base, launchMessage(record)).catch(async (error) => {
      await recoverPlace(repository, key).catch(() => undefined);
      throw error;
    });
    if (!made) {
      await recoverPlace(repository, key);
      throw branchExists(branch);
    }
    crashPoint('launch:branch-made');
    await addWorktree(info.root, path, branch).catch(async (error) => {
      // A launch that failed changes nothing: undo what it made (its branch, still at base) and the record.
      await recoverPlace(repository, key).catch(() => undefined);
      throw error;
    });
    crashPoint('launch:worktree-added');
    record.phase = 'made';
    await recordWithEvent(info.commonDir, record, { event: 'made', branch, base, path });
    crashPoint('launch:made');
    record.ready = await readyPlace(flume, record, (step) => onProgress?.(`readying: ${step}`));
    await recordWithEvent(info.commonDir, record, { event: 'readied', ...record.ready });
    crashPoint('launch:readied');
    return record;
  }, { timeoutMs: 0 }).catch((error) => {
    if (error instanceof FlumeError && error.code === 'PLACE_BUSY') throw launchUnderWay(plan);
    throw error;
  });
}
