/**
 * Making a place (book: "A launch and its place"). Everything is checked before anything is made;
 * then the record is written as `making` (the intent), the branch is made (only if absent, its reflog
 * naming this launch), the worktree is added on it, and the record is marked `made`. A crash between
 * any two of these leaves something `recover` puts right, touching only what this launch made.
 */
import { randomUUID } from 'node:crypto';
import { lstatSync, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FlumeError } from '../errors.js';
import { crashPoint } from '../crash.js';
import { checkText } from '../text.js';
import { kindOf, type Repository } from '../context.js';
import { addWorktree, createBranch, excludePath, isValidBranchName, readRepository, resolveRevision, trackedUnder } from '../git.js';
import { checkName, nameFromBrief, placeBranch, placeId, placeKey, placePath, PLACES_DIR } from '../place.js';
import { appendEvent, readRecord, withPlaceLock, writeRecord } from '../state/store.js';
import { rememberRepository } from '../state/host.js';
import { withLock } from '../state/lock.js';
import type { PlaceRecord } from '../types.js';
import { readyPlace } from './ready.js';
import { launchMessage, recoverPlace } from './recover.js';
import { launchTarget } from './target.js';

/** What a launch names. */
export interface LaunchRequest {
  kind: string;
  /** The name; without one, a name is made from the brief (with a suffix when taken). */
  name?: string;
  brief?: string;
  briefFile?: string;
  from?: string;
  /** False for --no-start: the place waits for `flume stage` or `flume retry`, even with a supervisor. */
  start?: boolean;
  /** False for --no-watch: its caller steps it; commands on it start no supervisor. */
  watch?: boolean;
}

/** Reads and checks a launch's brief: text or a file, never empty. */
export async function readBrief(request: Pick<LaunchRequest, 'brief' | 'briefFile'>): Promise<string> {
  if (request.brief !== undefined && request.briefFile !== undefined) {
    throw new FlumeError('BAD_USAGE', 'Give the brief once: --brief or --brief-file, not both.', { fix: 'Drop one of the two.' });
  }
  let brief = request.brief;
  if (request.briefFile !== undefined) {
    brief = await readFile(resolve(request.briefFile), 'utf8').catch(() => {
      throw new FlumeError('BRIEF_MISSING', `The brief file ${request.briefFile} cannot be read.`, {
        fix: 'Pass --brief-file a readable text file, or the brief itself with --brief.',
        details: { briefFile: request.briefFile },
      });
    });
  }
  if (!brief || !brief.trim()) {
    throw new FlumeError('BRIEF_MISSING', 'The launch has no brief.', { fix: 'Say what the work is with --brief TEXT or --brief-file FILE.' });
  }
  // Every launch path (CLI, MCP server, herdr) reads its brief here, so this one check covers them all.
  return checkText(brief, request.briefFile !== undefined ? `The brief file ${request.briefFile}` : 'The brief');
}

/** Makes the place of a launch and readies it; returns its record. Refuses, changing nothing, on any bad input. */
export async function makePlace(repository: Repository, request: LaunchRequest, onProgress?: (line: string) => void): Promise<PlaceRecord> {
  if (request.name !== undefined) return makeNamedPlace(repository, { ...request, name: request.name }, onProgress);
  const base = nameFromBrief(await readBrief(request));
  for (let n = 1; n <= 50; n++) {
    const name = n === 1 ? base : `${base.slice(0, 60)}-${n}`;
    try {
      return await makeNamedPlace(repository, { ...request, name }, onProgress);
    } catch (error) {
      if (!(error instanceof FlumeError) || !['PLACE_EXISTS', 'BRANCH_EXISTS', 'WORKTREE_EXISTS'].includes(error.code)) throw error;
    }
  }
  throw new FlumeError('PLACE_EXISTS', `Fifty places named after this brief exist already (${base}, ${base}-2, …).`, {
    fix: 'Give the launch a name of its own.',
    details: { name: base },
  });
}

async function makeNamedPlace(repository: Repository, request: LaunchRequest & { name: string }, onProgress?: (line: string) => void): Promise<PlaceRecord> {
  checkName(request.name);
  const { info, flume } = repository;
  const kind = kindOf(flume, request.kind);
  const brief = await readBrief(request);
  if (!info.hasCommit) {
    throw new FlumeError('NO_COMMIT', `${info.root} has no commit to start a place from.`, {
      fix: 'Make a first commit in the repository, then launch again.',
      details: { repo: info.root },
    });
  }
  const fromRef = request.from ?? info.mainBranch ?? 'HEAD';
  const base = await resolveRevision(info.root, fromRef);
  if (!base) {
    throw new FlumeError('BAD_REF', `--from ${JSON.stringify(fromRef)} names no commit in ${info.root}.`, {
      fix: 'Name a branch, tag or commit that exists (git branch -a lists branches).',
      details: { from: fromRef },
    });
  }
  await refuseUnsafePlaces(info.root);
  const target = await launchTarget(info, flume.config.target, request.from);
  const branch = placeBranch(kind, request.name);
  if (!(await isValidBranchName(info.root, branch))) {
    throw new FlumeError('BAD_NAME', `The branch ${JSON.stringify(branch)} is not a valid branch name.`, {
      fix: 'Choose a simpler name (letters, digits, "-").',
      details: { branch },
    });
  }
  const key = placeKey(kind.name, request.name);
  const path = placePath(info.root, kind.name, request.name);

  return withPlaceLock(info.commonDir, key, async () => {
    crashPoint('launch:locked');
    await recoverPlace(repository, key);
    await refuseExisting(repository, key, path, branch);
    const record: PlaceRecord = {
      version: 1,
      id: placeId(kind.name, request.name),
      kind: kind.name,
      name: request.name,
      repo: info.root,
      path,
      branch,
      target,
      base,
      brief,
      createdAt: new Date().toISOString(),
      launch: randomUUID(),
      phase: 'making',
      ready: { state: 'none', at: new Date().toISOString() },
      history: [],
      launched: { start: request.start !== false, watch: request.watch !== false },
    };
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
      throw new FlumeError('BRANCH_EXISTS', `The branch ${branch} exists already.`, {
        fix: 'Choose another name; flume never adopts a branch it did not make.',
        details: { branch },
      });
    }
    crashPoint('launch:branch-made');
    await addWorktree(info.root, path, branch).catch(async (error) => {
      // A launch that failed changes nothing: undo what it made (its branch, still at base) and the record.
      await recoverPlace(repository, key).catch(() => undefined);
      throw error;
    });
    crashPoint('launch:worktree-added');
    record.phase = 'made';
    await writeRecord(info.commonDir, record);
    await appendEvent(info.commonDir, key, { event: 'made', branch, base, path });
    crashPoint('launch:made');
    record.ready = await readyPlace(flume, record, (step) => onProgress?.(`readying: ${step}`));
    await writeRecord(info.commonDir, record);
    await appendEvent(info.commonDir, key, { event: 'readied', ...record.ready });
    crashPoint('launch:readied');
    return record;
  }, { timeoutMs: 0 }).catch((error) => {
    if (error instanceof FlumeError && error.code === 'PLACE_BUSY') {
      throw new FlumeError('PLACE_EXISTS', `Another launch of ${placeId(kind.name, request.name)} is under way.`, {
        fix: 'Choose another name, or wait and read `flume status`.',
        details: { place: placeId(kind.name, request.name) },
      });
    }
    throw error;
  });
}

async function refuseExisting(repository: Repository, key: string, path: string, branch: string): Promise<void> {
  const { info } = repository;
  const existing = await readRecord(info.commonDir, key);
  if (existing) {
    throw new FlumeError('PLACE_EXISTS', `The place ${existing.id} exists already (${existing.path}).`, {
      fix: 'Choose another name; `flume status` shows the existing place.',
      details: { place: existing.id, path: existing.path },
    });
  }
  const reading = await readRepository(info.root);
  if (reading.worktrees.some((worktree) => resolve(worktree.path) === path)) {
    throw new FlumeError('WORKTREE_EXISTS', `A worktree flume did not make is registered at ${path}.`, {
      fix: 'Choose another name; flume never adopts a worktree it did not make.',
      details: { path },
    });
  }
  // lstat, not exists: a symlink at the place's path (even a dangling one) is something there.
  if (lstatOrUndefined(path)) {
    throw new FlumeError('PLACE_EXISTS', `${lstatOrUndefined(path)!.isSymbolicLink() ? 'A symlink' : 'The folder'} ${path} exists already.`, {
      fix: 'Choose another name; flume never adopts a folder it did not make.',
      details: { path },
    });
  }
  if (reading.branches.has(branch)) {
    throw new FlumeError('BRANCH_EXISTS', `The branch ${branch} exists already.`, {
      fix: 'Choose another name; flume never adopts a branch it did not make.',
      details: { branch },
    });
  }
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
    throw new FlumeError('PLACES_UNSAFE', `${places} is a symlink; flume would make the place wherever it points, perhaps in another repository.`, {
      fix: `Remove the symlink (git rm ${PLACES_DIR} if it is committed), so flume can make its own ${PLACES_DIR}/ folder, then launch again.`,
      details: { path: places, found: 'symlink' },
    });
  }
  const tracked = await trackedUnder(root, PLACES_DIR);
  if (tracked.length) {
    throw new FlumeError('PLACES_UNSAFE', `The repository tracks files under ${PLACES_DIR}/ (${tracked.join(', ')}); flume's /${PLACES_DIR}/ line in info/exclude would hide new files there from git status.`, {
      fix: `Move those files out of ${PLACES_DIR}/ (git mv) and commit, so the folder is flume's alone, then launch again.`,
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
