/**
 * Tidy loses nothing, over a few hundred random histories (book: "Tidying"). Each history is a real
 * repository with 1–3 places whose work lands on main in one of the ways teams land it (or not at
 * all), worktrees left clean, dirty, locked, on another branch, moved elsewhere by hand or with
 * their folder deleted, and hand-made worktrees beside them (under places/ and elsewhere). Places
 * are also left at the edges: a repository nested in them (ignored or not), a submodule
 * (pushed or not), a stash made in them, refs named like their branch (tag, remote-tracking ref,
 * `refs/<name>`), their folder or the whole `places/` moved elsewhere and linked back. Before
 * tidying, `git cherry main <branch>` names every commit whose patch main lacks; after it, each of
 * them is still reachable, every commit that existed (in the repository and in every nested one)
 * is still there, no ref but a deleted place branch moved, nothing flume did not make is touched,
 * what tidy did matches an oracle written from the rules, and every place left shows in status with
 * its reason. The batched landing judgement (`unlandedCounts`) is checked against `git cherry` on
 * every branch.
 *
 * The histories are split into shards (random-<k>.test.ts, each a thin file naming its index),
 * so vitest runs them on several workers at once; history i is the same in every split.
 *
 * Which histories run: by default (`npm test`) only `COVER`, the few histories of the default seed
 * that together reach every outcome the rules name (a greedy cover of the 200, which a full run
 * prints), so the everyday suite proves every rule in a tenth of the time. The full run (CI's
 * `.ci/run` sets FLUME_TIDY_HISTORIES=200) draws all of them. FLUME_TIDY_SEED=<n> (or `random`)
 * picks other histories (200 unless FLUME_TIDY_HISTORIES says how many); FLUME_TIDY_HISTORIES=<n>
 * runs the first n of the seed; FLUME_TIDY_HISTORY=<i> runs only history i of the seed (in the shard
 * that holds it; the others skip). Each shard prints its seed and how to run it again (with
 * `random`, each shard draws a seed of its own). Whether the histories reach every outcome the rules
 * name is judged over all the shards of a run together, by whichever shard finishes last (see
 * `checkCoverage`): for the cover and for any run of 200 or more.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { unlandedCounts } from '../../../core/support/git.js';
import type { PlaceRecord } from '../../../core/api/record.js';
import type { TidyOutcome } from '../../../core/engine/tidy/tidy.js';
import { remove, tempDir } from '../../helpers/repo.js';
import { cliDriver, engineDriver, type Driver } from './driver.js';
import {
  ALL_EDGES,
  ALL_LANDINGS,
  ALL_MERGES,
  ALL_STATES,
  land,
  leaveFolderEdge,
  leaveLookalike,
  leaveWorktree,
  mainCommit,
  makeHistoryRepo,
  placeCommit,
  planHistory,
  removeTemplate,
  type Edge,
  type HistoryPlan,
} from './history.js';
import { allRefs, branchHeads, cherryPlus, everyCommit, git, missingCommits, worktrees } from './support.js';

const DEFAULT_SEED = 0x71d7;
const SEED = process.env.FLUME_TIDY_SEED === 'random' ? Math.floor(Math.random() * 2 ** 32) : Number(process.env.FLUME_TIDY_SEED ?? DEFAULT_SEED);
/**
 * Histories of the default seed that together reach every outcome `checkCoverage` asks for, as the
 * full run of 200 printed them last (greedy: each adds the most outcomes the others lack). If the
 * histories or the rules change so that they no longer do, the default run's coverage check fails:
 * run the 200 (FLUME_TIDY_HISTORIES=200) and paste the cover it prints here.
 */
const COVER: number[] = [1, 11, 16, 25, 34, 49, 61, 76, 84, 88, 94, 111, 139];
/** The default run: the cover, not a count (neither a seed nor a count given). */
const COVER_RUN = process.env.FLUME_TIDY_SEED === undefined && process.env.FLUME_TIDY_HISTORIES === undefined;
const COUNT = Number(process.env.FLUME_TIDY_HISTORIES ?? 200);
const ONLY = process.env.FLUME_TIDY_HISTORY === undefined ? undefined : Number(process.env.FLUME_TIDY_HISTORY);
/**
 * Histories run at once in one shard. One: on two cores, with the shards beside the rest of the
 * suite, two at once took as long and 25% more CPU (measured: 20 histories, 36 s of CPU at one,
 * 46 s at two, 52 s at four, the same 31 s of wall time each).
 */
const CONCURRENCY = Number(process.env.FLUME_TIDY_CONCURRENCY ?? 1);
/** Whether this run's histories must reach every outcome (the cover, or a run of 200 or more). */
const JUDGED = ONLY === undefined && (COVER_RUN || COUNT >= 200);
/** One history in this many runs through the built CLI instead of the engine in-process. */
const CLI_EVERY = 50;
/** Worktree states that keep a place whose work is over (a deleted folder cannot be read). */
const BLOCKING = new Set(['modified', 'staged', 'untracked', 'locked', 'other-branch', 'folder-deleted', 'skip-worktree', 'assume-unchanged']);
/** Edges that keep a place whose work is over, once made (git's status does not show what they hold). */
const KEEPING: Set<Edge> = new Set(['nested-ignored', 'nested', 'submodule', 'submodule-pushed', 'stash', 'link-place']);
/** Worktree states whose place folder is not there to hold a folder edge (or, for `other-branch`, a stash on the place's branch). */
const NO_FOLDER = new Set(['moved', 'folder-deleted']);

/** How many shard files (random-0.test.ts …) the histories are split among. */
export const SHARDS = 4;

/** What one history saw, for the totals printed at the end. */
interface Tally {
  [key: string]: number;
}

/**
 * The histories of shard `shard`: a contiguous slice of 0…COUNT-1 (or history ONLY, if this shard
 * holds it), or in the default run every SHARDS-th history of the cover.
 */
function shardIndexes(shard: number): number[] {
  if (COVER_RUN && ONLY === undefined) return COVER.filter((_, i) => i % SHARDS === shard);
  const from = Math.floor((shard * COUNT) / SHARDS);
  const to = Math.floor(((shard + 1) * COUNT) / SHARDS);
  if (ONLY !== undefined) return ONLY >= from && ONLY < to ? [ONLY] : ONLY >= COUNT && shard === SHARDS - 1 ? [ONLY] : [];
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/**
 * Declares shard `shard`'s test (call it once from random-<shard>.test.ts): its slice of the
 * histories, run two at a time, with every oracle and check of `runHistory`.
 */
export function tidyShard(shard: number): void {
  const indexes = shardIndexes(shard);
  const file = `test/integration/tidy/random-${shard}.test.ts`;
  let stateDir: string;
  beforeAll(() => {
    stateDir = tempDir('flume-tidy-state-');
    process.env.FLUME_STATE_DIR = stateDir;
  });
  afterAll(async () => {
    remove(stateDir);
    await removeTemplate();
  });

  describe(`tidy over random histories (shard ${shard + 1} of ${SHARDS})`, () => {
    const range = indexes.length === 0 ? 'none' : COVER_RUN && ONLY === undefined ? `${indexes.join(', ')} (the cover)` : `${indexes[0]}–${indexes[indexes.length - 1]}`;
    it.skipIf(indexes.length === 0)(`loses no commit whose patch main lacks, touches nothing it did not make, and explains every place it leaves (seed ${SEED}, histories ${range})`, async () => {
      const started = Date.now();
      const again = COVER_RUN ? '' : `FLUME_TIDY_SEED=${SEED}${COUNT === 200 ? '' : ` FLUME_TIDY_HISTORIES=${COUNT}`} `;
      console.log(`tidy histories ${range} of seed ${SEED} (${indexes.length} histories): ${again}sh scripts/test.sh ${file} runs them again`);
      const tally: Tally = {};
      /** The outcomes each history reached, by index (for the cover a full run prints). */
      const reached: Record<number, string[]> = {};
      const failures: string[] = [];
      let next = 0;
      let done = 0;
      const worker = async () => {
        while (next < indexes.length && failures.length < 5) {
          const index = indexes[next++];
          const plan = planHistory(historySeed(SEED, index), index, { cliEvery: CLI_EVERY });
          let timer: NodeJS.Timeout | undefined;
          try {
            const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('took over 60 s')), 60_000)));
            const own: Tally = {};
            await Promise.race([runHistory(plan, own, stateDir), late]);
            for (const [key, n] of Object.entries(own)) tally[key] = (tally[key] ?? 0) + n;
            reached[index] = Object.keys(own);
            done++;
          } catch (error) {
            failures.push(`history ${index} (FLUME_TIDY_SEED=${SEED} FLUME_TIDY_HISTORY=${index} sh scripts/test.sh ${file}): ${(error as Error).message}\nplan: ${JSON.stringify(plan)}`);
          } finally {
            clearTimeout(timer);
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`tidy histories ${range}: ${done} of ${indexes.length} passed in ${seconds} s; ${Object.entries(tally).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
      expect(failures, failures.join('\n\n')).toEqual([]);
      if (JUDGED) checkCoverage(shard, tally, reached);
    }, 1_200_000);
  });
}

/**
 * The histories must reach every outcome the rules name, or the test proves less than it says. No
 * one shard reaches them all, so each passing shard leaves its tally in a folder of the vitest run
 * (named by the run's main process, a child of which every shard's worker is) and the shard that
 * completes the set judges the sum. A shard run alone leaves the judgement unmade, and says so.
 */
function checkCoverage(shard: number, tally: Tally, reached: Record<number, string[]>): void {
  const run = join(process.env.FLUME_CACHE_DIR ?? tmpdir(), `flume-tidy-tallies-${process.ppid}-${process.env.FLUME_TIDY_SEED ?? DEFAULT_SEED}-${COVER_RUN ? 'cover' : COUNT}`);
  mkdirSync(run, { recursive: true });
  writeFileSync(join(run, `.reached-${shard}.tmp`), JSON.stringify(reached));
  renameSync(join(run, `.reached-${shard}.tmp`), join(run, `reached-${shard}.json`));
  writeFileSync(join(run, `.shard-${shard}.tmp`), JSON.stringify(tally));
  renameSync(join(run, `.shard-${shard}.tmp`), join(run, `shard-${shard}.json`));
  const found = readdirSync(run).filter((name) => /^shard-\d+\.json$/.test(name));
  if (found.length < SHARDS) {
    console.log(`tidy histories: ${found.length} of ${SHARDS} shards have passed in this run; the last judges whether all reach every outcome`);
    return;
  }
  const sum: Tally = {};
  for (const name of found) for (const [key, n] of Object.entries(JSON.parse(readFileSync(join(run, name), 'utf8')) as Tally)) sum[key] = (sum[key] ?? 0) + n;
  const drawn = [...ALL_LANDINGS.map((l) => `landing ${l}`), ...ALL_STATES.map((s) => `state ${s}`), ...ALL_EDGES.map((e) => `edge ${e}`)];
  const edges = [...KEEPING].map((e) => `kept by edge ${e}`);
  const merges = ALL_MERGES.map((m) => `commit ${m}`);
  const keys = ['removed, branch deleted', 'removed, branch kept', 'kept', 'skipped', 'squash of several kept', 'cli histories', 'landing pairs checked', 'places linked', 'kept by places linked', 'lookalike beside a deleted branch', 'lookalike beside a kept branch', 'branch kept by content', 'caller git variables', ...edges, ...drawn, ...merges];
  console.log(`tidy histories: all ${SHARDS} shards passed; over all ${COVER_RUN ? `${COVER.length} of the cover` : COUNT}: ${Object.entries(sum).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (!COVER_RUN && SEED === DEFAULT_SEED) {
    const all: Record<number, string[]> = {};
    for (let k = 0; k < SHARDS; k++) Object.assign(all, JSON.parse(readFileSync(join(run, `reached-${k}.json`), 'utf8')) as Record<number, string[]>);
    console.log(`tidy histories: a cover of every outcome (COVER in test/integration/tidy/random.ts): [${greedyCover(all, keys).join(', ')}]`);
  }
  remove(run);
  const missing = keys.filter((key) => !(sum[key] > 0));
  const fix = COVER_RUN ? ' (the cover no longer reaches them: run FLUME_TIDY_HISTORIES=200 and paste the cover it prints into COVER)' : '';
  expect(missing, `outcomes no history reached${fix}`).toEqual([]);
}

/** The fewest histories (greedily) that reach every one of `keys` they reach together, in index order. */
export function greedyCover(reached: Record<number, string[]>, keys: string[]): number[] {
  const wanted = new Set(keys.filter((key) => Object.values(reached).some((own) => own.includes(key))));
  const chosen: number[] = [];
  while (wanted.size > 0) {
    let best = -1;
    let gain = 0;
    for (const [index, own] of Object.entries(reached)) {
      const g = own.filter((key) => wanted.has(key)).length;
      if (g > gain) [best, gain] = [Number(index), g];
    }
    if (best < 0) break;
    chosen.push(best);
    for (const key of reached[best]) wanted.delete(key);
  }
  return chosen.sort((a, b) => a - b);
}

/** What the reason of place `i`, kept by `edge`, names: the very repository, submodule, stash or link. */
function namedBy(edge: Edge, i: number): string {
  switch (edge) {
    case 'nested-ignored':
      return `repository of its own (p${i}/out.log/tool)`;
    case 'nested':
      return `repository of its own (p${i}/tool/tool)`;
    case 'submodule':
      return `submodule p${i}/lib holds 1 commit its remotes lack`;
    case 'submodule-pushed':
      return `holds the submodule p${i}/lib`;
    case 'stash':
      return `On fix/p${i}: half done p${i}`;
    default:
      return `${join('places', `fix--p${i}`)} is a symlink`;
  }
}

function historySeed(seed: number, index: number): number {
  return (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
}

/** What the rules say tidy does with a place, from facts read before it ran. */
interface Expected {
  action: 'removed' | 'kept' | 'skipped';
  branchDeleted?: boolean;
  missing: number;
  /** Merging the branch into main would add or change something (judged by content: git merge-tree here). */
  adds: boolean;
  /** What the kept place's reason must name (an edge that keeps it, when no worktree state does). */
  named?: string;
}

async function runHistory(plan: HistoryPlan, tally: Tally, stateDir: string): Promise<void> {
  const count = (key: string) => (tally[key] = (tally[key] ?? 0) + 1);
  const root = await makeHistoryRepo();
  const elsewhere = tempDir('flume-tidy-elsewhere-');
  const tag = String(plan.seed);
  try {
    const driver: Driver = plan.cli ? cliDriver(root, stateDir) : await engineDriver(root);
    if (plan.cli) count('cli histories');
    const records: PlaceRecord[] = [];
    for (const place of plan.places) records.push(await driver.launch(place.name));
    for (const [j, kind] of plan.mainBefore.entries()) await mainCommit(root, j, kind, tag);
    for (const [i, place] of plan.places.entries()) {
      for (const [k, kind] of place.commits.entries()) await placeCommit(records[i].path, records[i].branch, i, k, kind, tag);
    }
    const squashes = new Map<number, { squashed: boolean; nonEmpty: number }>();
    for (const i of plan.landingOrder) {
      const place = plan.places[i];
      if (place.landing !== 'squash') {
        await land(root, records[i].path, records[i].branch, place);
        continue;
      }
      // Only a squash's outcome is read here: how many commits it squashed, and whether main moved.
      const nonEmpty = await nonEmptyCommits(root, records[i].branch);
      const before = await git(root, 'rev-parse', 'refs/heads/main');
      await land(root, records[i].path, records[i].branch, place);
      squashes.set(i, { squashed: before !== (await git(root, 'rev-parse', 'refs/heads/main')), nonEmpty });
    }
    for (const [j, kind] of plan.mainAfter.entries()) await mainCommit(root, 10 + j, kind, tag);
    // Folder edges and stashes, made while every place is clean (before the worktree states).
    // Each nested repository's commits are read now, with its git folder (a submodule's lives in the
    // place's admin folder, and a link made later moves the folder from its relative .git pointer).
    const nested: Array<{ folder: string; gitDir: string; commits: string[] }> = [];
    const made = plan.places.map(() => false);
    for (const [i, place] of plan.places.entries()) {
      if (place.edge === 'none' || NO_FOLDER.has(place.state) || (place.edge === 'stash' && place.state === 'other-branch')) continue;
      const folders = await leaveFolderEdge(records[i].path, i, place.edge, tag);
      for (const folder of folders) {
        // Its git folder as its `.git` names it, read against the folder's path as written: with
        // places/ moved elsewhere and linked back, git itself would resolve the relative pointer from
        // the folder's real path, where nothing is.
        const gitDir = gitDirOf(folder);
        nested.push({ folder, gitDir, commits: (await git(root, `--git-dir=${gitDir}`, 'rev-list', '--all', '--reflog')).split('\n').filter(Boolean) });
      }
      made[i] = folders.length > 0 || place.edge === 'stash';
    }
    const hand: string[] = [];
    if (plan.handUnder) hand.push(await handWorktree(root, join(root, 'places', 'fix--hand'), 'hand/under'));
    if (plan.handElsewhere) hand.push(await handWorktree(root, join(elsewhere, 'wt'), 'hand/elsewhere'));
    if (plan.handElsewhere && plan.handElsewhereGone) remove(join(elsewhere, 'wt'));
    const left: Array<{ path: string; files: Record<string, string> }> = [];
    for (const [i, place] of plan.places.entries()) {
      const kept = await leaveWorktree(root, records[i].path, i, place.state, elsewhere);
      left.push(kept);
      if (place.state === 'moved') hand.push(kept.path);
    }
    for (const place of plan.places) if (place.drop) await driver.drop(place.name);
    const lookalikes = new Map<number, string>();
    for (const [i, place] of plan.places.entries()) {
      const ref = await leaveLookalike(root, i, place.edge);
      if (ref) lookalikes.set(i, ref);
      if (place.edge === 'link-place' && !NO_FOLDER.has(place.state)) {
        renameSync(records[i].path, join(elsewhere, `linked-p${i}`));
        symlinkSync(join(elsewhere, `linked-p${i}`), records[i].path);
        made[i] = true;
      }
    }
    const placesLinked = plan.placesLinked && existsSync(join(root, 'places'));
    if (placesLinked) {
      count('places linked');
      renameSync(join(root, 'places'), join(elsewhere, 'places'));
      symlinkSync(join(elsewhere, 'places'), join(root, 'places'));
    }

    // Facts before tidying: every ref, every commit (here and in each nested repository), every
    // branch's head, and the commits whose patch main lacks.
    const refs = await allRefs(root);
    const commits = await everyCommit(root);
    const heads = branchHeads(refs);
    const plus = new Map<string, string[]>();
    for (const branch of heads.keys()) if (branch !== 'main') plus.set(branch, await cherryPlus(root, 'main', branch));
    const pairs = [...plus.keys()].map((branch) => ({ branch, target: 'main' }));
    const counts = await unlandedCounts(root, pairs);
    for (const [branch, missing] of plus) {
      count('landing pairs checked');
      if (counts.get(branch) !== missing.length) {
        throw new Error(`unlandedCounts says ${branch} lacks ${counts.get(branch)} on main, git cherry says ${missing.length}`);
      }
    }
    const adding = new Map<string, boolean>();
    for (const branch of plus.keys()) adding.set(branch, await mergeAdds(root, 'main', branch));
    const expected = plan.places.map((place, i): Expected => {
      const record = records[i];
      const missing = plus.get(record.branch)!.length;
      const adds = adding.get(record.branch)!;
      const over = place.drop || (heads.get(record.branch) !== record.base && missing === 0 && !adds);
      if (!over) return { action: 'skipped', missing, adds };
      if (BLOCKING.has(place.state)) return { action: 'kept', missing, adds };
      if (placesLinked) return { action: 'kept', missing, adds, named: 'symlink' };
      if (made[i] && KEEPING.has(place.edge)) return { action: 'kept', missing, adds, named: namedBy(place.edge, i) };
      // A branch checked out in a worktree (one made by hand elsewhere) is never deleted.
      return { action: 'removed', branchDeleted: missing === 0 && !adds && place.state !== 'moved', missing, adds };
    });

    // As inside a git hook: git's local variables name another repository, which must stay as it was.
    const decoy = plan.callerGit ? await callerGit(elsewhere) : undefined;
    if (decoy) count('caller git variables');
    const outcomes = await withCallerGit(decoy, () => driver.tidy());

    const afterRefs = await allRefs(root);
    const after = { heads: branchHeads(afterRefs), worktrees: await worktrees(root), all: new Set((await git(root, 'rev-list', '--all')).split('\n')), refs: afterRefs };
    // (a) every commit that existed is still there, in the repository and in every nested one.
    for (const { folder, gitDir, commits: list } of [{ folder: root, gitDir: join(root, '.git'), commits }, ...nested]) {
      if (!existsSync(folder) || !existsSync(gitDir)) throw new Error(`the repository at ${folder} (git folder ${gitDir}) went`);
      const lost = await missingCommits(root, list, gitDir);
      if (lost.length) throw new Error(`${lost.length} commits of ${folder} are gone: ${lost.slice(0, 3).join(', ')}`);
    }
    // No ref moved or went but the branch of a place whose branch tidy may delete.
    for (const [ref, head] of refs) {
      const mayGo = records.some((record, i) => ref === `refs/heads/${record.branch}` && expected[i].branchDeleted);
      if (!mayGo && after.refs.get(ref) !== head) throw new Error(`the ref ${ref} moved or went (${head} → ${after.refs.get(ref)})`);
    }
    // (a) no commit whose patch main lacks became unreachable.
    for (const [branch, commits] of plus) {
      for (const commit of commits) if (!after.all.has(commit)) throw new Error(`${commit} of ${branch}, whose patch main lacks, is no longer reachable`);
    }
    // (b) the main checkout and every worktree flume did not make (or must keep) is still there.
    if (after.worktrees.get(root)?.branch !== 'main' || !existsSync(join(root, 'README.md'))) throw new Error('the main checkout was touched');
    for (const path of hand) {
      if (!after.worktrees.has(path)) throw new Error(`the hand-made worktree ${path} was removed or pruned`);
      if (!existsSync(path) && !(path === join(elsewhere, 'wt') && plan.handElsewhereGone)) throw new Error(`the folder of the hand-made worktree ${path} went`);
    }
    for (const [branch, head] of heads) {
      const mayGo = records.some((record, i) => record.branch === branch && expected[i].branchDeleted);
      if (!mayGo && after.heads.get(branch) !== head) throw new Error(`the branch ${branch} moved or went (${head} → ${after.heads.get(branch)})`);
    }
    for (const [i, place] of plan.places.entries()) {
      const record = records[i];
      const want = expected[i];
      const outcome = outcomes.find((o) => o.id === record.id);
      const what = `${record.id} (${place.state}, edge ${place.edge}, ${place.drop ? 'dropped' : 'not dropped'}, landing ${place.landing}, ${want.missing} missing)`;
      if (!outcome) throw new Error(`tidy said nothing of ${what}`);
      checkOutcome(what, want, outcome);
      const registered = after.worktrees.has(record.path);
      const present = registered && (existsSync(record.path) || place.state === 'folder-deleted');
      if (want.action === 'removed' && (registered || existsSync(record.path))) throw new Error(`${what}: tidy said removed, but the worktree is there`);
      if (want.action !== 'removed' && place.state !== 'moved' && !present) throw new Error(`${what}: the worktree went, though tidy ${want.action} it`);
      for (const [file, content] of Object.entries(left[i].files)) {
        if (readFileSync(join(left[i].path, file), 'utf8') !== content) throw new Error(`${what}: the uncommitted ${file} in ${left[i].path} changed`);
      }
      const branchThere = after.heads.has(record.branch);
      if (want.branchDeleted && branchThere) throw new Error(`${what}: the branch should have been deleted`);
      if (!want.branchDeleted && !branchThere) throw new Error(`${what}: the branch was deleted`);
      count(want.action === 'removed' ? `removed, branch ${want.branchDeleted ? 'deleted' : 'kept'}` : want.action);
      count(`landing ${place.landing}`);
      count(`state ${place.state}`);
      count(`edge ${place.edge}`);
      if (want.action === 'kept' && want.named) count(placesLinked ? 'kept by places linked' : `kept by edge ${place.edge}`);
      if (want.named && !outcome.reason?.includes(want.named)) throw new Error(`${what}: kept, but the reason does not name ${want.named}: ${outcome.reason}`);
      if (lookalikes.has(i)) count(`lookalike beside a ${want.branchDeleted ? 'deleted' : 'kept'} branch`);
      for (const kind of place.commits) if (ALL_MERGES.includes(kind)) count(`commit ${kind}`);
      if (want.action === 'removed' && !want.branchDeleted && want.missing === 0 && want.adds) {
        if (outcome.branchOutcome?.by !== 'content') throw new Error(`${what}: its branch was kept, but not by content: ${JSON.stringify(outcome.branchOutcome)}`);
        count('branch kept by content');
      }
      // (d) a squash of several commits is not landed to git cherry: the branch is kept and named.
      const squash = squashes.get(i);
      if (squash?.squashed && squash.nonEmpty >= 2) {
        if (want.missing === 0 || want.branchDeleted) throw new Error(`${what}: a squash of ${squash.nonEmpty} commits was judged landed`);
        count('squash of several kept');
      }
    }
    // (c) every place tidy left, or whose branch it kept, shows in status with why.
    const report = await withCallerGit(decoy, () => driver.status());
    if (decoy && (await decoySnapshot(decoy)) !== decoy.before) throw new Error(`the repository git's local variables named (${decoy.root}) changed`);
    for (const [i, record] of records.entries()) {
      const want = expected[i];
      const shown = report.places.find((p) => p.id === record.id);
      const what = `${record.id} in status`;
      if (want.action === 'removed' && want.branchDeleted) {
        if (shown) throw new Error(`${what}: shown after it was removed and its branch deleted`);
        continue;
      }
      if (!shown) throw new Error(`${what}: missing, though tidy ${want.action} it`);
      if (want.action === 'skipped') {
        if (shown.kept || shown.landing.state === 'landed' || shown.dropped) throw new Error(`${what}: skipped, yet shown ${JSON.stringify(shown.landing)} ${JSON.stringify(shown.kept)}`);
        continue;
      }
      if (shown.state !== 'kept' || !shown.kept?.reason) throw new Error(`${what}: ${want.action}, yet shown as ${shown.state} with no reason`);
      // The reason names what keeps the branch: the patches main lacks, what merging it would add, else the worktree still on it.
      const named = want.missing > 0 ? String(want.missing) : want.adds ? 'merging it into main' : left[i].path;
      if (want.action === 'removed' && (!shown.kept.branchKept || !shown.kept.reason.includes(record.branch) || !shown.kept.reason.includes(named))) {
        throw new Error(`${what}: its branch was kept but status does not name it with ${named}: ${shown.kept.reason}`);
      }
    }
  } finally {
    // Removed off the event loop: the history running beside this one goes on meanwhile.
    await Promise.all([root, elsewhere].map((path) => rm(path, { recursive: true, force: true })));
  }
}

function checkOutcome(what: string, want: Expected, outcome: TidyOutcome): void {
  if (outcome.action !== want.action) throw new Error(`${what}: tidy ${outcome.action} it (${outcome.reason}), the rules say ${want.action}`);
  if (want.action === 'kept' && !outcome.reason) throw new Error(`${what}: kept with no reason`);
  if (want.action !== 'removed') return;
  if (outcome.branchOutcome?.deleted !== want.branchDeleted) throw new Error(`${what}: branch ${outcome.branchOutcome?.deleted ? 'deleted' : 'kept'}, the rules say otherwise`);
  if (!want.branchDeleted && outcome.branchOutcome?.missing !== want.missing) throw new Error(`${what}: branch kept with ${outcome.branchOutcome?.missing} missing, git cherry says ${want.missing}`);
}

/** Whether merging `branch` into `target` adds or changes anything (or conflicts): git merge-tree's tree is not the target's. */
async function mergeAdds(root: string, target: string, branch: string): Promise<boolean> {
  const targetTree = await git(root, 'rev-parse', `refs/heads/${target}^{tree}`);
  try {
    return (await git(root, 'merge-tree', '--write-tree', `refs/heads/${target}`, `refs/heads/${branch}`)).split('\n')[0] !== targetTree;
  } catch {
    return true; // a conflict: merging it would change something
  }
}

/** A repository for git's local variables to name, and its files and refs as they stand. */
async function callerGit(elsewhere: string): Promise<{ root: string; before: string }> {
  const root = join(elsewhere, 'caller');
  mkdirSync(root);
  await git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, 'caller.txt'), 'the caller\'s own repository\n');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'caller');
  return { root, before: await decoySnapshot({ root }) };
}

/** Every file of the repository, its git folder included, by path and content. */
async function decoySnapshot(decoy: { root: string }): Promise<string> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.push(`${path}\0${readFileSync(path).toString('base64')}`);
    }
  };
  walk(decoy.root);
  return files.join('\n');
}

/** Runs `act` with git's local variables naming the decoy repository, in this process (the engine) and in any flume it starts (the CLI). */
async function withCallerGit<T>(decoy: { root: string } | undefined, act: () => Promise<T>): Promise<T> {
  if (!decoy) return act();
  const names = { GIT_DIR: join(decoy.root, '.git'), GIT_WORK_TREE: decoy.root, GIT_INDEX_FILE: join(decoy.root, '.git', 'index') };
  const saved = Object.fromEntries(Object.keys(names).map((name) => [name, process.env[name]]));
  Object.assign(process.env, names);
  try {
    return await act();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The branch's commits not on main that change something (merges aside). */
async function nonEmptyCommits(root: string, branch: string): Promise<number> {
  const out = await git(root, 'log', '--no-merges', '--format=tformat:C', '--raw', branch, '--not', 'main', '--');
  return out.split(/^C$/m).filter((part) => part.trim()).length;
}

/** A worktree made by hand on a new branch with a commit of its own; returns its path. */
async function handWorktree(root: string, path: string, branch: string): Promise<string> {
  await git(root, 'worktree', 'add', '-q', '-b', branch, path, 'main');
  writeFileSync(join(path, 'hand.txt'), `work on ${branch}\n`);
  await git(path, 'add', 'hand.txt');
  await git(path, 'commit', '-q', '-m', `work on ${branch}`);
  return path;
}

/** The git folder of the repository at `folder`: its `.git` folder, or where its `.git` file points, resolved against `folder` as written. */
function gitDirOf(folder: string): string {
  const dotGit = join(folder, '.git');
  if (!existsSync(dotGit)) return folder; // a bare repository is its own git folder
  if (!statSync(dotGit).isFile()) return dotGit;
  const target = readFileSync(dotGit, 'utf8').replace(/^gitdir:\s*/, '').trim();
  return isAbsolute(target) ? target : resolve(folder, target);
}
