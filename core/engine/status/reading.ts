/**
 * One reading of a repository for many places (DESIGN.md "The engine": read, decide, act): the worktrees
 * and branches read once, files at each place's head fetched in one batch, and landing judged for
 * every place in one pass. The number of git processes does not grow with the number of places.
 */
import { keptCache } from '../../support/kept.js';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DeliverableRequest } from '../../api/hooks.js';
import { commonDirOf, judgeLandings, readObjects, readRepository, readRepositoryKept, treeNames, type Branch, type LandingJudgement, type RepositoryReading, type Worktree } from '../../support/git.js';
import type { PlaceRecord } from '../../api/record.js';
import type { StageDef } from '../../api/config.js';

/** What one reading says of one place. */
export interface PlaceReading {
  record: PlaceRecord;
  /** The worktree registered at the place's path, if any. */
  worktree?: Worktree;
  /** The place's branch, if it exists. */
  branch?: Branch;
}

/** A reading of a repository and its places. */
export interface Reading {
  root: string;
  /** The repository's git common dir. */
  commonDir: string;
  /** When the reading was taken (ISO). */
  generatedAt: string;
  repository: RepositoryReading;
  places: PlaceReading[];
  /** How many of a place's patches its target lacks (`git cherry`), for every place at once; undefined when unreadable. */
  unlanded(record: PlaceRecord): Promise<number | undefined>;
  /** A place's branch judged by patch and by content against its target, for every place at once; undefined when unreadable. */
  landing(record: PlaceRecord): Promise<GitLanding | undefined>;
  /** The container places whose branch could not be taken back from their own repository, by id: the folder and why. */
  refusedBack: Map<string, { folder: string; said: string }>;
  /** A file or folder listing at a commit, batched with every other asked in the same tick. */
  object(rev: string, path: string): Promise<{ type: string; content: Buffer } | undefined>;
  /**
   * The same places read afresh, begun at the first call and shared by every later one: what is
   * read again after something seen since (agents read together) needs a reading begun after it.
   */
  again(): Promise<Reading>;
}

/**
 * Reads a repository once for the given places. With its common dir, a reading this process took
 * before is reused while nothing git reads for it changed (`readRepositoryKept`): status asks so.
 */
export async function readPlaces(root: string, records: PlaceRecord[], options: { commonDir?: string } = {}): Promise<Reading> {
  let [repository, commonDir] = await Promise.all([
    options.commonDir ? readRepositoryKept(root, options.commonDir) : readRepository(root),
    options.commonDir ?? commonDirOf(root),
  ]);
  // What agents in containers committed in their places' own repositories is the host's first.
  const refusedBack = new Map<string, { folder: string; said: string }>();
  if (records.some((record) => record.container) && (await bringBackAll(root, repository, records, refusedBack))) repository = await readRepository(root);
  const places = records.map((record) => ({
    record,
    worktree: repository.worktrees.find((w) => resolve(w.path) === record.path),
    branch: repository.branches.get(record.branch),
  }));
  let judged: Promise<Map<string, GitLanding>> | undefined;
  const landing = async (record: PlaceRecord) => {
    judged ??= landings(root, repository, places);
    return (await judged).get(record.branch);
  };
  const unlanded = async (record: PlaceRecord) => (await landing(record))?.patches;
  let fresh: Promise<Reading> | undefined;
  const again = () => (fresh ??= readPlaces(root, records, { commonDir }));
  return { root, commonDir, generatedAt: new Date().toISOString(), repository, places, unlanded, landing, refusedBack, object: batchLoader(root), again };
}

/**
 * Takes each container place's branch back from its own repository (engine/container/repository.ts)
 * where its head there is not the host's: answers true when a branch here moved. One that cannot be
 * taken (not a fast-forward) stays there, noted in `refused`, and the next reading tries again.
 */
async function bringBackAll(root: string, repository: RepositoryReading, records: PlaceRecord[], refused: Map<string, { folder: string; said: string }>): Promise<boolean> {
  const { bringBack, containerGitDir } = await import('../container/repository.js');
  let moved = false;
  for (const record of records) {
    const container = record.container;
    if (!container) continue;
    const place = { root, commonDir: container.gitDir, path: record.path, branch: record.branch, target: record.target };
    const brought = await bringBack(container, place, repository.branches.get(record.branch)?.head).catch((error: Error) => ({ taken: false as const, refused: error.message }));
    if (brought.taken) moved = true;
    else if (brought.refused) refused.set(record.id, { folder: containerGitDir(container), said: brought.refused });
  }
  return moved;
}

/** A branch judged by patch and by content (`LandingJudgement` in git.ts), without the heads. */
export type GitLanding = Pick<LandingJudgement, 'patches' | 'content'>;

/**
 * Each place's branch judged against its target at the reading's heads. A judgement is a function of
 * the two commits alone, so it is kept by commit pair for the life of the process (the supervisor
 * asks pass after pass): only a pair not seen before costs git processes.
 */
async function landings(root: string, repository: RepositoryReading, places: PlaceReading[]): Promise<Map<string, GitLanding>> {
  const judged = new Map<string, GitLanding>();
  const missing: Array<{ branch: string; target: string; key: string }> = [];
  for (const place of places) {
    const target = repository.branches.get(place.record.target);
    if (!place.branch || !target) continue;
    const key = `${root}\0${place.branch.head}\0${target.head}`;
    const known = LANDINGS.get(key);
    if (known !== undefined) judged.set(place.record.branch, known);
    else missing.push({ branch: place.record.branch, target: place.record.target, key });
  }
  if (missing.length === 0) return judged;
  const found = await judgeLandings(root, missing).catch(() => undefined);
  for (const pair of missing) {
    const at = found?.get(pair.branch);
    if (!at) continue;
    const landing: GitLanding = { patches: at.patches, ...(at.content ? { content: at.content } : {}) };
    judged.set(pair.branch, landing);
    // Kept only when judged at the reading's own heads (a ref may have moved meanwhile).
    if (pair.key === `${root}\0${at.branchHead}\0${at.targetHead}`) LANDINGS.set(pair.key, landing);
  }
  return judged;
}

/** Landing judgements by repository, branch head and target head. */
const LANDINGS = keptCache<string, GitLanding>('landing judgements', { holds: "git's judgement of a branch's landing, by repository, branch head and target head", entries: 1000 });

/** The request a deliverable reader gets for one place, read at the branch head taken in the reading. */
export function deliverableRequest(reading: Reading, place: PlaceReading, stage: StageDef, options: { type: string; [key: string]: unknown }): DeliverableRequest | undefined {
  const head = place.branch?.head;
  if (!head) return undefined;
  return {
    place: place.record,
    stage,
    options,
    head,
    headTime: place.branch!.time,
    commonDir: reading.commonDir,
    async file(path) {
      const object = await reading.object(head, path);
      return object?.type === 'blob' ? object.content.toString('utf8') : undefined;
    },
    async list(path) {
      const object = await reading.object(head, path);
      return object?.type === 'tree' ? treeNames(object.content) : undefined;
    },
    async workingFile(path) {
      // Most places have no such file yet: asked first, so no error is made for each (status asks of every place).
      const file = join(place.record.path, path);
      return existsSync(file) ? readFile(file, 'utf8').catch(() => undefined) : undefined;
    },
    async workingFileWritten(path) {
      return stat(join(place.record.path, path)).then((s) => s.mtime.toISOString(), () => undefined);
    },
    unlanded: () => reading.unlanded(place.record),
    landing: () => reading.landing(place.record),
  };
}

function batchLoader(root: string) {
  let pending: Map<string, Array<(value: { type: string; content: Buffer } | undefined) => void>> | undefined;
  const flush = async (batch: NonNullable<typeof pending>) => {
    const found = await readObjects(root, [...batch.keys()]).catch(() => undefined);
    for (const [spec, waiters] of batch) {
      const value = found?.get(spec);
      if (found) keepObject(root, spec, value);
      for (const done of waiters) done(value);
    }
  };
  return (rev: string, path: string) =>
    new Promise<{ type: string; content: Buffer } | undefined>((done) => {
      const spec = `${rev}:${path.replace(/^\/+/, '')}`;
      const kept = OBJECTS.get(`${root}\0${spec}`);
      if (kept) return done(kept.value);
      if (!pending) {
        pending = new Map();
        const batch = pending;
        setImmediate(() => {
          pending = undefined;
          void flush(batch);
        });
      }
      pending.set(spec, [...(pending.get(spec) ?? []), done]);
    });
}

/**
 * What a path holds at a commit never changes: a process that reads the same deliverables again and
 * again (the supervisor answering status) keeps small answers, absence included, by repository and
 * `<commit>:<path>`, and asks git only for what it has not read. Only a full commit id is kept (a
 * branch name moves); an answer git failed to give is not.
 */
function keepObject(root: string, spec: string, value: { type: string; content: Buffer } | undefined): void {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?:/.test(spec) || (value && value.content.length > 64 * 1024)) return;
  const key = `${root}\0${spec}`;
  // A copy: the answer is a slice of the whole batch's output, which it would otherwise keep alive.
  OBJECTS.set(key, { value: value && { type: value.type, content: Buffer.from(value.content) } });
}

/** Objects kept by `keepObject`: at most 2,000 answers and 8 MB of contents, the oldest going first. */
const OBJECTS = keptCache<string, { value: { type: string; content: Buffer } | undefined }>('objects', {
  holds: 'what a path holds at a commit (or that it holds nothing), by repository and full commit id',
  entries: 2000,
  bytes: { max: 8 * 1024 * 1024, of: (kept) => kept.value?.content.length ?? 0 },
});
