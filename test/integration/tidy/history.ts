/**
 * Random repository histories for the tidy tests: places launched from main, commits made in them
 * (files, edits, empty commits, renames, mode changes, merges inside the branch), landed on main in
 * every way a team lands work, main moved on, worktrees left clean, dirty, locked or on another
 * branch, hand-made worktrees beside them. A plan is data drawn from a seed, so a failure names a
 * seed and its plan, and the same seed builds the same history again.
 */
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir, write } from '../../helpers/repo.js';
import { git, tryGit } from './support.js';

import { prng } from '../../helpers/prng.js';

export { prng };

/** What one commit in a place does. */
export type CommitKind = 'add' | 'edit' | 'empty' | 'rename' | 'mode' | 'merge-side' | 'merge-main' | 'merge-main-extra' | 'merge-main-conflict';
/** How a place's work reaches main. */
export type Landing = 'none' | 'cherry-pick' | 'cherry-pick-keep-empty' | 'partial' | 'rebase-ff' | 'rebase-copy' | 'merge' | 'ff' | 'squash' | 'revert';
/** What the place's worktree is left holding when tidy runs. */
export type WorktreeState = 'clean' | 'modified' | 'staged' | 'untracked' | 'ignored' | 'locked' | 'other-branch' | 'moved' | 'folder-deleted' | 'skip-worktree' | 'assume-unchanged';
/** A commit on main that has nothing to do with any place. */
export type MainCommit = 'edit' | 'edit-renamed' | 'add' | 'empty';

/**
 * An edge a place is left at, beside its worktree state: a repository nested in it (in
 * an ignored folder or not), a submodule (with commits its remote lacks, or all pushed), a stash
 * made in it, a ref named like its branch (a tag, a remote-tracking ref, a ref straight under
 * `refs/`), or its own folder moved elsewhere and linked back.
 */
export type Edge = 'none' | 'nested-ignored' | 'nested' | 'submodule' | 'submodule-pushed' | 'stash' | 'lookalike-tag' | 'lookalike-remote' | 'lookalike-ref' | 'link-place';

/** One place of a history. */
export interface PlacePlan {
  name: string;
  commits: CommitKind[];
  landing: Landing;
  /** For `partial`: which of the branch's non-merge commits are picked (by index). */
  picked: number[];
  state: WorktreeState;
  drop: boolean;
  edge: Edge;
}

/** One history: its places, main's own commits around them, and hand-made worktrees. */
export interface HistoryPlan {
  index: number;
  seed: number;
  places: PlacePlan[];
  /** Main's commits after the places were made, before their work (so merges and rebases have something to cross). */
  mainBefore: MainCommit[];
  /** Main's commits after the landings. */
  mainAfter: MainCommit[];
  /** The order the places land in. */
  landingOrder: number[];
  handUnder: boolean;
  handElsewhere: boolean;
  /** The hand-made worktree elsewhere has had its folder deleted (git lists it as prunable). */
  handElsewhereGone: boolean;
  /** Run launch, drop, tidy and status through the built CLI instead of the engine in-process. */
  cli: boolean;
  /** The repository's `places/` folder is moved elsewhere and linked back before tidying. */
  placesLinked: boolean;
  /** Tidy and status run with git's local variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE) naming another repository, as inside a git hook. */
  callerGit: boolean;
}

const COMMITS: CommitKind[] = ['add', 'add', 'add', 'edit', 'edit', 'empty', 'rename', 'mode', 'merge-side', 'merge-main'];
const LANDINGS: Landing[] = ['none', 'none', 'cherry-pick', 'cherry-pick-keep-empty', 'partial', 'rebase-ff', 'rebase-copy', 'merge', 'ff', 'squash', 'squash'];
const STATES: WorktreeState[] = ['clean', 'clean', 'clean', 'clean', 'clean', 'ignored', 'modified', 'staged', 'untracked', 'locked', 'other-branch', 'moved', 'folder-deleted'];
/**
 * What the second round of edges adds, drawn from a stream of its own so the histories drawn before
 * stay as they were beside it: merges of main that carry work of their own (an extra file, a
 * conflict settled), a landing whose pick main reverts, edits hidden by an index bit.
 */
const MERGES: Array<CommitKind | undefined> = [undefined, undefined, undefined, undefined, 'merge-main-extra', 'merge-main-conflict'];
const REVERTS = 0.08;
const HIDDEN: Array<WorktreeState | undefined> = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, 'skip-worktree', 'assume-unchanged'];
const MAIN: MainCommit[] = ['edit', 'edit-renamed', 'add', 'empty'];
const EDGES: Edge[] = [
  ...Array<Edge>(7).fill('none'),
  'nested-ignored',
  'nested',
  // Twice: a submodule's commit leaves the branch unlanded, so only a dropped place reaches the rule.
  'submodule',
  'submodule',
  'submodule-pushed',
  'submodule-pushed',
  'stash',
  'lookalike-tag',
  'lookalike-remote',
  'lookalike-ref',
  'link-place',
];

/** Every way of landing and every worktree state a plan draws, for the coverage check. */
export const ALL_LANDINGS: Landing[] = [...new Set(LANDINGS), 'revert'];
export const ALL_STATES: WorktreeState[] = [...new Set(STATES), 'skip-worktree', 'assume-unchanged'];
export const ALL_MERGES: CommitKind[] = ['merge-main-extra', 'merge-main-conflict'];
export const ALL_EDGES = [...new Set(EDGES)].filter((edge) => edge !== 'none');

/** Draws history `index` from `seed`. */
export function planHistory(seed: number, index: number, options: { cliEvery?: number } = {}): HistoryPlan {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const count = (max: number) => Math.floor(random() * (max + 1));
  const places: PlacePlan[] = [];
  for (let i = 0, n = 1 + count(2); i < n; i++) {
    const commits = random() < 0.15 ? [] : Array.from({ length: 1 + count(2) }, () => pick(COMMITS));
    const picked = commits.map((_, k) => k).filter(() => random() < 0.5);
    places.push({ name: `p${i}`, commits, landing: pick(LANDINGS), picked, state: pick(STATES), drop: random() < 0.35, edge: 'none' });
  }
  const landingOrder = places.map((_, i) => i).sort(() => random() - 0.5);
  // The edges come from a stream of their own, so a seed draws the same histories as before them.
  const edgy = prng(seed ^ 0x3d9e);
  for (const place of places) place.edge = EDGES[Math.floor(edgy() * EDGES.length)];
  const second = prng(seed ^ 0x5a17);
  const draw = <T>(items: readonly T[]): T => items[Math.floor(second() * items.length)];
  for (const place of places) {
    const merge = draw(MERGES);
    if (merge) place.commits.push(merge);
    if (second() < REVERTS) place.landing = 'revert';
    place.state = draw(HIDDEN) ?? place.state;
  }
  return {
    index,
    seed,
    places,
    mainBefore: random() < 0.5 ? Array.from({ length: 1 + count(1) }, () => pick(MAIN)) : [],
    mainAfter: random() < 0.3 ? [pick(MAIN)] : [],
    landingOrder,
    handUnder: random() < 0.25,
    handElsewhere: random() < 0.2,
    handElsewhereGone: random() < 0.5,
    cli: options.cliEvery ? index % options.cliEvery === options.cliEvery - 1 : false,
    placesLinked: edgy() < 0.05,
    callerGit: second() < 0.15,
  };
}

const SHARED_LINES = 80;
const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

let template: Promise<string> | undefined;
let library: Promise<string> | undefined;

/**
 * A repository on main with the files histories edit, `*.log` ignored by a committed .gitignore.
 * The first is made with git; the rest are copies of it (a copied repository is the same repository,
 * and a copy costs no git process).
 */
export async function makeHistoryRepo(): Promise<string> {
  template ??= initRepo(tempDir('flume-tidy-template-'));
  const root = tempDir('flume-tidy-');
  // Copied off the event loop: the history running beside this one goes on meanwhile.
  await cp(await template, root, { recursive: true });
  return root;
}

/** Removes the template repository (call once, after the last history). */
export async function removeTemplate(): Promise<void> {
  if (template) rmSync(await template, { recursive: true, force: true });
  if (library) rmSync(await library, { recursive: true, force: true });
  template = undefined;
  library = undefined;
}

async function initRepo(root: string): Promise<string> {
  await git(root, 'init', '-q', '-b', 'main');
  const files: Record<string, string> = { 'README.md': '# test\n', '.gitignore': '*.log\n', 'shared.txt': lines('shared', SHARED_LINES) };
  for (let i = 0; i < 3; i++) {
    files[`r${i}.txt`] = lines(`rename-me ${i}`, 60);
    files[`m${i}.sh`] = `echo ${i}\n`;
  }
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'init');
  return root;
}

function editLine(root: string, path: string, line: number, text: string): void {
  const all = readFileSync(join(root, path), 'utf8').split('\n');
  all[line - 1] = text;
  writeFileSync(join(root, path), all.join('\n'));
}

/** Makes commit `k` of place `i` in its folder. */
export async function placeCommit(place: string, branch: string, i: number, k: number, kind: CommitKind, tag: string): Promise<void> {
  switch (kind) {
    case 'add':
      write(place, `p${i}/f${k}.txt`, `${tag} place ${i} commit ${k}\n`);
      await git(place, 'add', '-A');
      return void (await git(place, 'commit', '-q', '-m', `p${i}: add f${k}`));
    case 'edit':
      editLine(place, 'shared.txt', 20 * i + 3 * k + 2, `p${i} edit ${k} ${tag}`);
      return void (await git(place, 'commit', '-q', '-am', `p${i}: edit shared ${k}`));
    case 'empty':
      return void (await git(place, 'commit', '-q', '--allow-empty', '-m', `p${i}: empty ${k}`));
    case 'rename':
      if (!existsSync(join(place, `r${i}.txt`))) return placeCommit(place, branch, i, k, 'add', tag);
      await git(place, 'mv', `r${i}.txt`, `r${i}-renamed.txt`);
      editLine(place, `r${i}-renamed.txt`, 1, `renamed by p${i} ${tag}`);
      return void (await git(place, 'commit', '-q', '-am', `p${i}: rename r${i}`));
    case 'mode': {
      const file = join(place, `m${i}.sh`);
      chmodSync(file, statSync(file).mode & 0o100 ? 0o644 : 0o755);
      return void (await git(place, 'commit', '-q', '-am', `p${i}: mode of m${i}.sh`));
    }
    case 'merge-side': {
      const side = `side/p${i}-${k}`;
      await git(place, 'checkout', '-q', '-b', side);
      write(place, `p${i}/side${k}.txt`, `${tag} side ${i} ${k}\n`);
      await git(place, 'add', '-A');
      await git(place, 'commit', '-q', '-m', `p${i}: side ${k}`);
      await git(place, 'checkout', '-q', branch);
      await git(place, 'merge', '-q', '--no-ff', '-m', `p${i}: merge side ${k}`, side);
      return void (await git(place, 'branch', '-q', '-D', side));
    }
    case 'merge-main':
      if (!(await tryGit(place, 'merge', '-q', '--no-ff', '-m', `p${i}: merge main`, 'main'))) await git(place, 'merge', '--abort');
      return;
    case 'merge-main-extra': {
      // main moves, and the place merges it with a file of its own in the merge itself.
      const root = join(place, '..', '..');
      write(root, `main/for-p${i}-${k}.txt`, `${tag} main for p${i} ${k}\n`);
      await git(root, 'add', '-A');
      await git(root, 'commit', '-q', '-m', `main: for p${i} ${k}`);
      if (!(await tryGit(place, 'merge', '-q', '--no-ff', '--no-commit', 'main'))) return void (await git(place, 'merge', '--abort'));
      write(place, `p${i}/merged${k}.txt`, `${tag} added in the merge by p${i}\n`);
      await git(place, 'add', '-A');
      return void (await git(place, 'commit', '-q', '--no-edit', '-m', `p${i}: merge main, with merged${k}`));
    }
    case 'merge-main-conflict': {
      // The place and main change the same line; the place merges main and settles the conflict its own way.
      const root = join(place, '..', '..');
      const line = 20 * i + 3 * k + 1;
      editLine(place, 'shared.txt', line, `p${i} side of line ${line} ${tag}`);
      await git(place, 'commit', '-q', '-am', `p${i}: line ${line}`);
      editLine(root, 'shared.txt', line, `main side of line ${line} ${tag}`);
      await git(root, 'commit', '-q', '-am', `main: line ${line}`);
      if (await tryGit(place, 'merge', '-q', '--no-ff', '-m', `p${i}: merge main`, 'main')) return;
      if ((await git(place, 'diff', '--name-only', '--diff-filter=U')) !== 'shared.txt') return void (await git(place, 'merge', '--abort'));
      // Each conflict taken on the place's side, then the line settled another way than either side.
      let side: 'both' | 'ours' | 'theirs' = 'both';
      const settled: string[] = [];
      for (const text of readFileSync(join(place, 'shared.txt'), 'utf8').split('\n')) {
        if (text.startsWith('<<<<<<<')) side = 'ours';
        else if (text.startsWith('=======') && side === 'ours') side = 'theirs';
        else if (text.startsWith('>>>>>>>') && side === 'theirs') side = 'both';
        else if (side !== 'theirs') settled.push(text);
      }
      writeFileSync(join(place, 'shared.txt'), settled.join('\n'));
      editLine(place, 'shared.txt', line, `p${i} settled line ${line} ${tag}`);
      await git(place, 'add', 'shared.txt');
      return void (await git(place, 'commit', '-q', '--no-edit'));
    }
  }
}

/** Makes one of main's own commits in the main checkout. */
export async function mainCommit(root: string, j: number, kind: MainCommit, tag: string): Promise<void> {
  switch (kind) {
    case 'edit':
      editLine(root, 'shared.txt', 70 + (j % 10), `main edit ${j} ${tag}`);
      return void (await git(root, 'commit', '-q', '-am', `main: edit ${j}`));
    case 'edit-renamed': {
      // An edit far from the line a place's rename changes: the rename lands, but under another patch.
      const file = [0, 1, 2].map((i) => `r${i}.txt`).find((f) => existsSync(join(root, f)));
      if (!file) return mainCommit(root, j, 'add', tag);
      editLine(root, file, 50, `main edit ${j} ${tag}`);
      return void (await git(root, 'commit', '-q', '-am', `main: edit ${file}`));
    }
    case 'add':
      write(root, `main/f${j}.txt`, `${tag} main ${j}\n`);
      await git(root, 'add', '-A');
      return void (await git(root, 'commit', '-q', '-m', `main: add f${j}`));
    case 'empty':
      return void (await git(root, 'commit', '-q', '--allow-empty', '-m', `main: empty ${j}`));
  }
}

/** Lands a place's branch on main (checked out in `root`) as the plan says; a conflict lands nothing more. */
export async function land(root: string, place: string, branch: string, plan: PlacePlan): Promise<void> {
  const commits = async () => (await git(root, 'rev-list', '--reverse', '--no-merges', branch, '--not', 'main', '--')).split('\n').filter(Boolean);
  const pickEach = async (list: string[], keepEmpty: boolean) => {
    for (const commit of list) {
      const extra = keepEmpty ? ['--allow-empty', '--keep-redundant-commits'] : [];
      if (!(await tryGit(root, 'cherry-pick', ...extra, commit))) {
        if (!(await tryGit(root, 'cherry-pick', '--abort'))) await git(root, 'reset', '-q', '--hard');
      }
    }
  };
  switch (plan.landing) {
    case 'none':
      return;
    case 'cherry-pick':
    case 'cherry-pick-keep-empty':
      return pickEach(await commits(), plan.landing === 'cherry-pick-keep-empty');
    case 'partial': {
      const all = await commits();
      const some = all.filter((_, k) => plan.picked.includes(k));
      return pickEach(some.length === all.length ? some.slice(1) : some, false);
    }
    case 'rebase-ff':
      if (!(await tryGit(place, 'rebase', '-q', 'main'))) await tryGit(place, 'rebase', '--abort');
      return void (await tryGit(root, 'merge', '-q', '--ff-only', branch));
    case 'rebase-copy': {
      const copy = `land/${plan.name}`;
      await git(root, 'checkout', '-q', '-b', copy, branch);
      if (!(await tryGit(root, 'rebase', '-q', 'main'))) await tryGit(root, 'rebase', '--abort');
      await git(root, 'checkout', '-q', 'main');
      await tryGit(root, 'merge', '-q', '--ff-only', copy);
      return void (await git(root, 'branch', '-q', '-D', copy));
    }
    case 'merge':
      if (!(await tryGit(root, 'merge', '-q', '--no-ff', '-m', `merge ${branch}`, branch))) await git(root, 'merge', '--abort');
      return;
    case 'ff':
      return void (await tryGit(root, 'merge', '-q', '--ff-only', branch));
    case 'squash':
      if (!(await tryGit(root, 'merge', '-q', '--squash', branch))) return void (await git(root, 'reset', '-q', '--hard'));
      if (!(await tryGit(root, 'commit', '-q', '-m', `squash ${branch}`))) await git(root, 'reset', '-q', '--hard');
      return;
    case 'revert': {
      // Picked, then the last pick reverted on main: the patches are there, the content is not.
      const before = await git(root, 'rev-parse', 'HEAD');
      await pickEach(await commits(), false);
      if ((await git(root, 'rev-parse', 'HEAD')) !== before) await tryGit(root, 'revert', '--no-edit', 'HEAD');
    }
  }
}

/**
 * Leaves a place's worktree as the plan says; returns the folder that must survive tidying with the
 * uncommitted files in it (`moved`: the place's worktree removed by hand and made again in `elsewhere`).
 */
export async function leaveWorktree(root: string, place: string, i: number, state: WorktreeState, elsewhere: string): Promise<{ path: string; files: Record<string, string> }> {
  if (state === 'moved') {
    const path = join(elsewhere, `moved-p${i}`);
    await git(root, 'worktree', 'remove', place);
    await git(root, 'worktree', 'add', '-q', path, `fix/p${i}`);
    write(path, 'wip.txt', `work goes on ${i}\n`);
    return { path, files: { 'wip.txt': `work goes on ${i}\n` } };
  }
  if (state === 'folder-deleted') {
    rmSync(place, { recursive: true, force: true });
    return { path: place, files: {} };
  }
  return { path: place, files: await leaveUncommitted(root, place, i, state) };
}

async function leaveUncommitted(root: string, place: string, i: number, state: Exclude<WorktreeState, 'moved' | 'folder-deleted'>): Promise<Record<string, string>> {
  switch (state) {
    case 'clean':
      return {};
    case 'ignored':
      write(place, 'build.log', 'ignored\n');
      write(place, `p${i}/cache.log`, 'ignored\n');
      return {};
    case 'modified': {
      const content = `${readFileSync(join(place, 'README.md'), 'utf8')}uncommitted ${i}\n`;
      write(place, 'README.md', content);
      return { 'README.md': content };
    }
    case 'staged':
      write(place, `p${i}/staged.txt`, `staged ${i}\n`);
      await git(place, 'add', '--', `p${i}/staged.txt`);
      return { [`p${i}/staged.txt`]: `staged ${i}\n` };
    case 'untracked':
      write(place, 'note.txt', `untracked ${i}\n`);
      return { 'note.txt': `untracked ${i}\n` };
    case 'locked':
      await git(root, 'worktree', 'lock', '--reason', 'test lock', place);
      return {};
    case 'skip-worktree':
    case 'assume-unchanged': {
      // A tracked file edited, and hidden from git status by the bit.
      const content = `${readFileSync(join(place, 'README.md'), 'utf8')}hidden ${i}\n`;
      write(place, 'README.md', content);
      await git(place, 'update-index', `--${state}`, 'README.md');
      return { 'README.md': content };
    }
    case 'other-branch':
      await git(place, 'switch', '-q', '-c', `other/p${i}`);
      write(place, `p${i}/other.txt`, `other ${i}\n`);
      await git(place, 'add', '-A');
      await git(place, 'commit', '-q', '-m', `other work of p${i}`);
      return {};
  }
}

/**
 * Leaves place `i` at a folder edge (before its worktree state is made, with the place clean);
 * returns the repositories nested in it, whose folders and commits must survive tidying.
 */
export async function leaveFolderEdge(place: string, i: number, edge: Edge, tag: string): Promise<string[]> {
  switch (edge) {
    case 'nested-ignored':
    case 'nested': {
      // `*.log` is ignored: a folder so named is an ignored folder.
      const folder = join(place, `p${i}`, edge === 'nested' ? 'tool' : 'out.log', 'tool');
      await git(place, 'init', '-q', '-b', 'main', folder);
      write(folder, 'tool.txt', `${tag} nested in p${i}\n`);
      await git(folder, 'add', '-A');
      await git(folder, 'commit', '-q', '-m', `nested work of p${i}`);
      return [folder];
    }
    case 'submodule':
    case 'submodule-pushed': {
      library ??= initLibrary(tempDir('flume-tidy-library-'));
      const path = `p${i}/lib`;
      await git(place, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', await library, path);
      await git(place, 'commit', '-q', '-m', `p${i}: add lib`);
      const folder = join(place, path);
      if (edge === 'submodule') {
        write(folder, 'unpushed.txt', `${tag} unpushed in p${i}\n`);
        await git(folder, 'add', '-A');
        await git(folder, 'commit', '-q', '-m', `unpushed work of p${i}`);
      }
      return [folder];
    }
    case 'stash':
      write(place, 'README.md', `stashed by p${i} ${tag}\n`);
      await git(place, 'stash', 'push', '-q', '-m', `half done p${i}`);
      return [];
    default:
      return [];
  }
}

/** Makes a ref named like the place's branch (`fix/p<i>`) outside `refs/heads/`, at main. */
export async function leaveLookalike(root: string, i: number, edge: Edge): Promise<string | undefined> {
  const prefix = { 'lookalike-tag': 'refs/tags/', 'lookalike-remote': 'refs/remotes/', 'lookalike-ref': 'refs/' }[edge as string];
  if (!prefix) return undefined;
  const ref = `${prefix}fix/p${i}`;
  await git(root, 'update-ref', ref, 'refs/heads/main');
  return ref;
}

async function initLibrary(root: string): Promise<string> {
  await git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, 'lib.txt'), 'library\n');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'library');
  return root;
}
