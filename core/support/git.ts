/**
 * The one module that runs git. What changes a repository (a worktree added or removed, a branch
 * deleted) goes through simple-git; what only reads it goes through exec.ts's `run`, since loading
 * simple-git costs a cold `flume status` (which only reads) more than its git processes do
 * (docs/decisions/git-reads.md). A reading of a repository (`readRepository`) costs a fixed number
 * of git processes however many places it holds: that is what keeps status cheap.
 */
import { keptCache } from './kept.js';
import type { SimpleGit } from 'simple-git';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { FlumeError, flumeError } from '../api/errors.js';
import { run, runBytes } from './exec.js';
import { passedOn } from './environment.js';
import { emptyCommits, EMPTY_PATCH, judgeLanding, parseLog, reaches } from './landing.js';

/** A worktree as `git worktree list --porcelain` gives it. */
export interface Worktree {
  path: string;
  head?: string;
  /** Short branch name (`fix/x`), or undefined when detached. */
  branch?: string;
  bare: boolean;
  locked: boolean;
  lockReason?: string;
  prunable: boolean;
}

/** A local branch: its head and the head's committer time. */
export interface Branch {
  name: string;
  head: string;
  time: string;
}

/** The repository a folder belongs to. */
export interface RepositoryInfo {
  /** The main checkout's root. */
  root: string;
  /** The common git dir (`<root>/.git` for an ordinary repository). */
  commonDir: string;
  /** The branch the main checkout is on, or undefined when detached. */
  mainBranch?: string;
  /** True when HEAD points at a commit. */
  hasCommit: boolean;
}

/** One reading of a repository: its worktrees and branches, taken once. */
export interface RepositoryReading {
  worktrees: Worktree[];
  branches: Map<string, Branch>;
}

let simpleGitModule: ReturnType<typeof loadSimpleGit> | undefined;
const loadSimpleGit = () => import('simple-git');

/**
 * simple-git for `cwd`, the module loaded on first use (a command that reads no repository never pays
 * for it). Its git gets what the caller's environment passes on, as everything flume runs
 * (core/support/exec.ts). simple-git refuses an environment it is handed that holds EDITOR, PAGER, GIT_SSH and
 * the like; those are the caller's own, which git gets all the same, so they are let through.
 */
async function git(cwd: string): Promise<SimpleGit> {
  const { simpleGit } = await (simpleGitModule ??= loadSimpleGit());
  return simpleGit({ baseDir: cwd, trimmed: false, maxConcurrentProcesses: 6, unsafe: CALLERS_OWN }).env(passedOn(process.env));
}

/** The kinds of variable simple-git checks in an environment it is handed, all the caller's own here. */
const CALLERS_OWN = {
  allowUnsafeEditor: true,
  allowUnsafeAskPass: true,
  allowUnsafeConfigPaths: true,
  allowUnsafeDiffExternal: true,
  allowUnsafePager: true,
  allowUnsafeGitProxy: true,
  allowUnsafeTemplateDir: true,
  allowUnsafeSshCommand: true,
};

/**
 * git's own race: while another git adds or removes a worktree, its admin folder is half written, and
 * any git that lists worktrees meanwhile dies reading it. It passes in a moment; such a run is retried.
 */
const WORKTREE_RACE = /failed to read .*worktrees\/[^/\s]+\/(commondir|gitdir)/;

/** What reads a repository: git run directly, answered as simple-git answers (below). */
async function read(cwd: string, args: string[], retries = 5): Promise<string> {
  return retried(args, retries, () => readGit(cwd, args));
}

/** What changes a repository: through simple-git. */
async function change(cwd: string, args: string[], retries = 5): Promise<string> {
  return retried(args, retries, async () => (await git(cwd)).raw(args));
}

/** The most git reads at once, as simple-git's own limit for its commands. */
const READS_AT_ONCE = 6;
let reading = 0;
const queued: Array<() => void> = [];

/**
 * One git run that only reads, answered as simple-git's `raw` answers: its standard output, or an
 * error whose message is its output and its errors when it exits non-zero having written errors (a
 * git that exits non-zero silently, as `config --get` of a missing key, answers its output). One that
 * could not start, ran past its time limit or was ended by a signal is an error too.
 */
async function readGit(cwd: string, args: string[]): Promise<string> {
  if (reading >= READS_AT_ONCE) await new Promise<void>((go) => queued.push(go));
  reading += 1;
  try {
    const result = await run('git', args, { cwd });
    if (result.failedToStart) throw new Error(result.failedToStart);
    if (result.timedOut) throw new Error(`git ${args[0]} ran past its time limit`);
    if (result.exitCode === null || (result.exitCode !== 0 && result.stderr !== '')) throw new Error(`${result.stdout}${result.stderr}`);
    return result.stdout;
  } finally {
    reading -= 1;
    queued.shift()?.();
  }
}

async function retried(args: string[], retries: number, attempt: () => Promise<string>): Promise<string> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const message = error instanceof Error ? error.message.trim() : String(error);
      if (tries < retries && WORKTREE_RACE.test(message)) {
        await new Promise((done) => setTimeout(done, 10 + Math.random() * 40 * (tries + 1)));
        continue;
      }
      throw flumeError('GIT_FAILED', { command: args[0], message: firstLine(message) }, {
        details: { args, message },
        cause: error,
      });
    }
  }
}

/** Finds the repository a folder is in, or throws NOT_A_REPOSITORY. */
export async function findRepository(dir: string): Promise<RepositoryInfo> {
  const folder = resolve(dir);
  if (!existsSync(folder)) {
    throw flumeError('NOT_A_REPOSITORY', { folder }, {
      variant: 'noFolder',
      details: { repo: folder },
    });
  }
  let out: string;
  try {
    out = await readGit(folder, ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository']);
  } catch {
    throw flumeError('NOT_A_REPOSITORY', { folder }, {
      details: { repo: folder },
    });
  }
  const [commonDirLine, bare] = out.trim().split('\n');
  const commonDir = isAbsolute(commonDirLine) ? commonDirLine : resolve(folder, commonDirLine);
  if (bare === 'true') {
    throw flumeError('NOT_A_REPOSITORY', { folder }, {
      variant: 'bare',
      details: { repo: folder },
    });
  }
  const worktrees = parseWorktrees(await read(folder, ['worktree', 'list', '--porcelain']));
  const main = worktrees[0];
  const root = main?.path ?? dirname(commonDir);
  const hasCommit = Boolean(main?.head && !/^0+$/.test(main.head));
  return { root, commonDir, mainBranch: main?.branch, hasCommit };
}

/**
 * A repository the host's list names, checked without a git process: its root's `.git` is still the
 * folder the list recorded as its common dir (so it is the same repository, and not bare). Undefined
 * when anything differs or cannot be read the plain way (moved, replaced, a reftable store): then
 * `findRepository` decides. Status calls it for each listed repository on every run.
 */
export async function knownRepository(root: string, commonDir: string): Promise<RepositoryInfo | undefined> {
  const { readFile, realpath } = await import('node:fs/promises');
  try {
    const [dotGit, common] = await Promise.all([realpath(resolve(root, '.git')), realpath(commonDir)]);
    if (dotGit !== common || existsSync(resolve(common, 'reftable'))) return undefined;
    const head = (await readFile(resolve(common, 'HEAD'), 'utf8')).trim();
    if (!head.startsWith('ref: ')) return /^[0-9a-f]{40,64}$/.test(head) ? { root, commonDir, hasCommit: true } : undefined;
    const ref = head.slice(5);
    if (!ref.startsWith(HEADS)) return undefined;
    const loose = existsSync(resolve(common, ref));
    const packed = loose || (await readFile(resolve(common, 'packed-refs'), 'utf8').catch(() => '')).split('\n').some((line) => line.endsWith(` ${ref}`));
    return { root, commonDir, mainBranch: ref.slice(HEADS.length), hasCommit: loose || packed };
  } catch {
    return undefined;
  }
}

/**
 * The common git dir of the main checkout at `root`, read without a git process where the plain
 * layout allows (`<root>/.git` a folder, or a `gitdir:` file, as `--separate-git-dir` leaves, whose
 * folder may name its `commondir`); otherwise git answers.
 */
export async function commonDirOf(root: string): Promise<string> {
  const { readFile, stat } = await import('node:fs/promises');
  const dotGit = resolve(root, '.git');
  try {
    if ((await stat(dotGit)).isDirectory()) return dotGit;
    const line = (await readFile(dotGit, 'utf8')).trim();
    if (line.startsWith('gitdir: ')) {
      const dir = resolve(root, line.slice(8).trim());
      const common = (await readFile(resolve(dir, 'commondir'), 'utf8').catch(() => undefined))?.trim();
      return common ? resolve(dir, common) : dir;
    }
  } catch {
    // not the plain layout: git answers below
  }
  return (await findRepository(root)).commonDir;
}

/**
 * `readRepository`, kept for the life of the process by everything git reads for it (the common
 * dir's HEAD, packed-refs, every loose branch ref and its folders, each worktree's admin files, each
 * worktree's `.git`), so a process that reads the same repository again and again (the supervisor
 * answering status) pays a few `stat` calls, not two git processes, while nothing changed. As git's
 * own index does with racily clean files, a reading is kept only when every file it stamps is older
 * than the reading by a margin: a change made after the reading then always shows in the stamp.
 */
export async function readRepositoryKept(root: string, commonDir: string): Promise<RepositoryReading> {
  const key = `${root}\0${commonDir}`;
  const kept = READINGS.get(key);
  if (kept && kept.stamp === repositoryStamp(commonDir, kept.reading.worktrees).stamp) return copyReading(kept.reading);
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  const reading = await readRepository(root);
  const stamp = repositoryStamp(commonDir, reading.worktrees);
  READINGS.delete(key);
  // Anything changed since shortly before the reading began is newer than the margin: not kept.
  if (stamp.newestNs < startedNs - RACY_MARGIN_NS) {
    READINGS.set(key, { stamp: stamp.stamp, reading: copyReading(reading) });
  }
  return reading;
}

/** Repository readings kept by `readRepositoryKept`, by root and common dir, each with its stamp. */
const READINGS = keptCache<string, { stamp: string; reading: RepositoryReading }>('repository readings', { holds: "a repository's worktrees and branches, by root, with the stamp of the files git read them from", entries: 50 });

/** How much older than a reading every file it stamps must be for the reading to be kept: 1 s. */
const RACY_MARGIN_NS = 1_000_000_000n;

/** The files git reads to list worktrees and branches, by identity, size and times; and the newest time among them. */
function repositoryStamp(commonDir: string, worktrees: Worktree[] = []): { stamp: string; newestNs: bigint } {
  const parts: string[] = [];
  let newestNs = 0n;
  const add = (path: string) => {
    try {
      const s = statSync(path, { bigint: true });
      parts.push(`${path}\0${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`);
      if (s.mtimeNs > newestNs) newestNs = s.mtimeNs;
      if (s.ctimeNs > newestNs) newestNs = s.ctimeNs;
      return s;
    } catch {
      parts.push(`${path}\0-`);
      return undefined;
    }
  };
  const names = (dir: string) => {
    try {
      return readdirSync(dir).sort();
    } catch {
      return [];
    }
  };
  const walk = (dir: string) => {
    if (!add(dir)?.isDirectory()) return;
    for (const name of names(dir)) walk(join(dir, name));
  };
  add(join(commonDir, 'HEAD'));
  add(join(commonDir, 'packed-refs'));
  walk(join(commonDir, 'refs', 'heads'));
  const admin = join(commonDir, 'worktrees');
  add(admin);
  for (const id of names(admin)) for (const file of ['', 'HEAD', 'gitdir', 'locked']) add(join(admin, id, file));
  // Whether each linked worktree is still there (git calls one whose folder is gone prunable); the
  // main checkout's `.git` is the common dir itself, changed by any git command run there.
  for (const worktree of worktrees.slice(1)) add(join(worktree.path, '.git'));
  return { stamp: parts.join('\n'), newestNs };
}

function copyReading(reading: RepositoryReading): RepositoryReading {
  return { worktrees: reading.worktrees.map((w) => ({ ...w })), branches: new Map([...reading.branches].map(([name, branch]) => [name, { ...branch }])) };
}

/** The one reading of a repository: two git processes, whatever the number of places. */
export async function readRepository(root: string): Promise<RepositoryReading> {
  const [worktreeText, refText] = await Promise.all([
    read(root, ['worktree', 'list', '--porcelain']),
    // The full ref name, never `%(refname:short)`: git shortens a branch beside a tag of its name to
    // `heads/<name>`, and the branch would read as gone.
    read(root, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(committerdate:iso-strict)', 'refs/heads/']),
  ]);
  const branches = new Map<string, Branch>();
  for (const line of refText.split('\n')) {
    if (!line) continue;
    const [ref, head, time] = line.split('\0');
    const name = ref.slice(HEADS.length);
    branches.set(name, { name, head, time });
  }
  return { worktrees: parseWorktrees(worktreeText), branches };
}

/**
 * The patch `git cherry` hashes for a commit: no rename detection, three lines of context, and none
 * of the user's diff config (colour, external diff, textconv, submodule logs, hidden root diffs).
 */
const CHERRY_DIFF = ['-p', '--root', '--no-renames', '-U3', '--no-color', '--no-ext-diff', '--no-textconv', '--submodule=short'];

/**
 * How a branch stands against its target, judged two ways, both of which must find nothing for the
 * branch to hold nothing beyond its target: by patch (`patches`: its commits whose patch the target
 * lacks, as `git cherry` counts them, merges aside) and, when no patch is missing, by content
 * (`content`: what merging the branch into the target would add or change, as
 * `git merge-tree --write-tree` merges them). A merge commit that carries work of its own (how an
 * agent settles a conflict with its target) or a patch the target took and reverted is seen only
 * by content.
 */
export interface LandingJudgement {
  patches: number;
  /** Undefined when merging adds nothing (the merge yields the target's own tree). */
  content?: { paths: string[]; conflict: boolean };
  /** The two heads it was judged at (refs can move while it runs). */
  branchHead: string;
  targetHead: string;
}

/**
 * For each branch, how many of its patches its target lacks, judged as `git cherry <target> <branch>`
 * judges it (patch ids, merges ignored), for all branches at once in a fixed number of processes.
 */
export async function unlandedCounts(root: string, pairs: Array<{ branch: string; target: string }>): Promise<Map<string, number>> {
  return new Map([...(await unlandedAt(root, pairs))].map(([branch, at]) => [branch, at.count]));
}

/** As `unlandedCounts`, with the two heads each count was judged at (refs can move while it runs). */
export async function unlandedAt(root: string, pairs: Array<{ branch: string; target: string }>): Promise<Map<string, { count: number; branchHead: string; targetHead: string }>> {
  const judged = await judgeByPatch(root, pairs);
  return new Map([...judged].map(([branch, at]) => [branch, { count: at.patches, branchHead: at.branchHead, targetHead: at.targetHead }]));
}

/**
 * Each branch judged by patch and, where no patch is missing, by content (`LandingJudgement`): the
 * patch pass costs a fixed number of processes for all branches; the content pass one merge a
 * branch that passed it. The merges write their trees into a temporary object folder, removed after:
 * judging leaves nothing in the repository's own store.
 */
export async function judgeLandings(root: string, pairs: Array<{ branch: string; target: string }>): Promise<Map<string, LandingJudgement>> {
  const judged = await judgeByPatch(root, pairs);
  const candidates = [...judged.values()].filter((at) => at.patches === 0 && !at.contained);
  if (candidates.length === 0) return judged;
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const objects = join(await commonDirOf(root), 'objects');
  const scratch = await mkdtemp(join(tmpdir(), 'flume-merge-'));
  // The merges see every object of the repository and write only into the scratch folder.
  const env = { GIT_OBJECT_DIRECTORY: scratch, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
  try {
    for (let i = 0; i < candidates.length; i += 4) {
      await Promise.all(candidates.slice(i, i + 4).map(async (at) => {
        at.content = await mergeAdds(root, at, env);
      }));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return judged;
}

/** What merging the branch into its target adds (the paths that differ from the target's tree), or undefined when nothing. */
async function mergeAdds(root: string, at: PatchJudgement, env: Record<string, string>): Promise<LandingJudgement['content']> {
  const merged = await run('git', ['merge-tree', '--write-tree', '--no-messages', '--name-only', at.targetHead, at.branchHead], { cwd: root, env });
  const lines = merged.stdout.split('\n').filter(Boolean);
  if (merged.exitCode === 1 && lines.length > 0) return { paths: [...new Set(lines.slice(1))], conflict: true };
  if (merged.exitCode !== 0 || !lines[0]) {
    throw flumeError('GIT_FAILED', { message: firstLine(merged.stderr) }, {
      variant: 'mergeTree',
      details: { args: ['merge-tree', '--write-tree', at.targetHead, at.branchHead], message: merged.stderr },
    });
  }
  if (lines[0] === at.targetTree) return undefined;
  const diff = await run('git', ['diff-tree', '-r', '-z', '--name-only', '--no-renames', at.targetTree, lines[0]], { cwd: root, env });
  if (diff.exitCode !== 0) throw flumeError('GIT_FAILED', { command: 'diff-tree', message: firstLine(diff.stderr) }, { details: { message: diff.stderr } });
  return { paths: diff.stdout.split('\0').filter(Boolean), conflict: false };
}

/** A pair judged by patch alone, with what the content pass needs: the target's tree, and whether the target contains the branch. */
type PatchJudgement = LandingJudgement & { targetTree: string; contained: boolean };

/** Every pair judged by patch alone (`content` not yet judged). */
async function judgeByPatch(root: string, pairs: Array<{ branch: string; target: string }>): Promise<Map<string, PatchJudgement>> {
  const result = new Map<string, PatchJudgement>();
  if (pairs.length === 0) return result;
  const tips = [...new Set(pairs.flatMap((pair) => [pair.branch, pair.target]))].map((name) => `refs/heads/${name}`);
  const bases = (await run('git', ['merge-base', '--octopus', ...tips], { cwd: root })).stdout.trim();
  const range = bases ? [...tips, '--not', bases] : tips;
  const logText = await read(root, ['log', '--format=%H %P', ...range, '--']);
  const patchText = await read(root, ['log', '--no-merges', ...CHERRY_DIFF, '--format=commit %H', ...range, '--']);
  const patchIds = (await run('git', ['patch-id', '--stable'], { cwd: root, input: patchText })).stdout;
  const ids = new Map<string, string>();
  for (const line of patchIds.split('\n')) {
    const [patch, commit] = line.split(' ');
    if (patch && commit) ids.set(commit, patch);
  }
  for (const commit of emptyCommits(patchText)) if (!ids.has(commit)) ids.set(commit, EMPTY_PATCH);
  const heads = await readHeads(root, tips);
  const graph = parseLog(logText);
  for (const pair of pairs) {
    const branchHead = heads.get(`refs/heads/${pair.branch}`);
    const target = heads.get(`refs/heads/${pair.target}`);
    if (!branchHead || !target) continue;
    const patches = judgeLanding(graph, ids, branchHead.commit, target.commit);
    // A branch its target contains adds nothing by merging: no content to judge.
    const contained = !graph.has(branchHead.commit) || reaches(graph, target.commit, branchHead.commit);
    result.set(pair.branch, { patches, branchHead: branchHead.commit, targetHead: target.commit, targetTree: target.tree, contained });
  }
  return result;
}

/** `git cherry <target> <branch>`: the commits of the branch, each `+` (patch missing) or `-`. */
export async function cherry(root: string, target: string, branch: string): Promise<Array<{ sign: '+' | '-'; commit: string }>> {
  const out = await read(root, ['cherry', `refs/heads/${target}`, `refs/heads/${branch}`]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ sign: line[0] as '+' | '-', commit: line.slice(2).trim() }));
}

/**
 * The commit a revision names, or undefined when it names none. A name that is a branch means the
 * branch (as `git switch` reads it), never a tag or other ref git would rank before it.
 */
export async function resolveRevision(root: string, revision: string): Promise<string | undefined> {
  const candidates = revision.startsWith('refs/') ? [revision] : [`${HEADS}${revision}`, revision];
  for (const candidate of candidates) {
    const out = await run('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{commit}`], { cwd: root });
    if (out.exitCode === 0) return out.stdout.trim();
  }
  return undefined;
}

/** True when `name` is a valid branch name to git itself. */
export async function isValidBranchName(root: string, name: string): Promise<boolean> {
  const out = await run('git', ['check-ref-format', '--branch', name], { cwd: root });
  return out.exitCode === 0;
}

/**
 * Makes the branch `branch` at `base` only if no branch of that name exists (one atomic step of git's
 * own: `update-ref <ref> <base> ""`), with `message` as its reflog's first entry, so that who made
 * the branch can be told later. Returns false, changing nothing, when the branch exists already.
 */
export async function createBranch(root: string, branch: string, base: string, message: string): Promise<boolean> {
  const ref = `refs/heads/${branch}`;
  const out = await run('git', ['update-ref', '--create-reflog', '-m', message, ref, base, ''], { cwd: root });
  if (out.exitCode === 0) return true;
  if ((await run('git', ['rev-parse', '--verify', '--quiet', ref], { cwd: root })).exitCode === 0) return false;
  throw flumeError('GIT_FAILED', { command: 'update-ref', message: firstLine(out.stderr) }, {
    details: { args: ['update-ref', ref, base], message: out.stderr },
  });
}

/** The message of the first entry of a branch's reflog (what made it), or undefined when it has none. */
export async function branchCreation(root: string, branch: string): Promise<string | undefined> {
  const out = await run('git', ['reflog', 'show', '--format=%gs', `refs/heads/${branch}`, '--'], { cwd: root });
  if (out.exitCode !== 0) return undefined;
  const lines = out.stdout.split('\n').filter(Boolean);
  return lines[lines.length - 1];
}

/** Makes a worktree at `path` on the existing branch `branch` (never makes a branch itself). */
export async function addWorktree(root: string, path: string, branch: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await change(root, ['worktree', 'add', '--quiet', path, branch], 0);
      return;
    } catch (error) {
      if (attempt >= 5 || existsSync(path) || !WORKTREE_RACE.test(String((error as FlumeError).details?.message ?? ''))) throw error;
      await new Promise((done) => setTimeout(done, 10 + Math.random() * 40 * (attempt + 1)));
    }
  }
}

/** The paths under `dir` (relative to the root) that the index or HEAD holds; at most `limit` of them. */
export async function trackedUnder(root: string, dir: string, limit = 5): Promise<string[]> {
  const [index, head] = await Promise.all([
    run('git', ['ls-files', '-z', '--cached', '--', `:(top,literal)${dir}`], { cwd: root }),
    run('git', ['ls-tree', '-r', '-z', '--name-only', 'HEAD', '--', `:(top,literal)${dir}`], { cwd: root }),
  ]);
  const paths = new Set([index, head].flatMap((out) => (out.exitCode === 0 ? out.stdout.split('\0').filter(Boolean) : [])));
  return [...paths].sort().slice(0, limit);
}

/** The branch a symbolic ref points at (`refs/remotes/origin/HEAD` → `refs/remotes/origin/main`), or undefined. */
export async function symbolicRef(root: string, ref: string): Promise<string | undefined> {
  const out = await run('git', ['symbolic-ref', '--quiet', ref], { cwd: root });
  return out.exitCode === 0 ? out.stdout.trim() || undefined : undefined;
}

/** A git config value as git reads it (all scopes), or undefined when unset. */
export async function configValue(root: string, key: string): Promise<string | undefined> {
  const out = await run('git', ['config', '--get', key], { cwd: root });
  return out.exitCode === 0 ? out.stdout.trim() || undefined : undefined;
}

/**
 * Makes a new repository in `dir` on branch `main` with one empty commit, its author named here so a
 * machine with no git identity can make it: a throwaway repository for the driver conformance kit.
 */
export async function initRepository(dir: string): Promise<void> {
  const init = await run('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  const commit = init.exitCode === 0
    ? await run('git', ['-c', 'user.name=flume', '-c', 'user.email=flume@localhost', '-c', 'commit.gpgsign=false', 'commit', '-q', '--allow-empty', '-m', 'A first commit'], { cwd: dir })
    : init;
  if (commit.exitCode !== 0) {
    throw flumeError('GIT_FAILED', { dir, message: firstLine(commit.stderr) }, {
      variant: 'init',
      details: { dir, message: commit.stderr },
    });
  }
}

/** True when the local branch `branch` exists (by its full ref name: a tag of that name is not it). */
export async function hasBranch(root: string, branch: string): Promise<boolean> {
  return (await run('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: root })).exitCode === 0;
}

/** Removes a clean worktree with git's own tool (never forced: git refuses a dirty or locked one). */
export async function removeWorktree(root: string, path: string): Promise<void> {
  await change(root, ['worktree', 'remove', path]);
}

/** Deletes a branch, but only while it is still at `head`: a branch that moved since is kept. */
export async function deleteBranch(root: string, branch: string, head: string): Promise<void> {
  await change(root, ['update-ref', '-d', `refs/heads/${branch}`, head]);
}

/** What in a worktree is not committed. */
export interface WorktreeChanges {
  /** Tracked files changed, staged or not. */
  modified: string[];
  /** Untracked files that are not ignored. */
  untracked: string[];
  /**
   * Folders holding a repository of their own (a `.git` folder or file, or a bare repository),
   * ignored or not: their commits are in no object store of this repository. Found among ignored
   * folders too only when asked (`nested: true`).
   */
  nested: string[];
}

/**
 * What in a worktree is not committed: modified and untracked files that are not ignored, and with
 * `nested` the repositories inside it, ignored ones too. git itself walks the ignored folders
 * (`--ignored` with every untracked file): it never follows a symlink and stops at a nested
 * repository, which it names as a folder.
 */
export async function worktreeChanges(path: string, options: { nested?: boolean } = {}): Promise<WorktreeChanges> {
  const ignored = options.nested ? ['--ignored=traditional'] : [];
  const out = await read(path, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none', ...ignored]);
  const modified: string[] = [];
  const untracked: string[] = [];
  const nested = new Set<string>();
  const entries = out.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!entry) continue;
    const code = entry.slice(0, 2);
    const file = entry.slice(3);
    if (code === '??' || code === '!!') {
      if (code === '??') untracked.push(file);
      const repository = nestedRepository(path, file);
      if (repository !== undefined) nested.add(repository);
    } else modified.push(file);
    if (code[0] === 'R' || code[0] === 'C') i++;
  }
  return { modified, untracked, nested: [...nested] };
}

/** A tracked file whose edit `git status` does not show: a bit of `git update-index` hides it. */
export interface HiddenEdit {
  file: string;
  bit: 'skip-worktree' | 'assume-unchanged';
}

/**
 * The tracked files of a worktree that carry the skip-worktree or assume-unchanged bit and whose
 * content differs from the index: edits `git status` (and `git worktree remove`) never see. A file
 * such a bit marks that is not in the folder (a sparse checkout leaves them so) holds nothing.
 * The content is hashed as git would add it (through the repository's filters).
 */
export async function hiddenEdits(path: string): Promise<HiddenEdit[]> {
  const listed = await read(path, ['ls-files', '-v', '-s', '-z']);
  const flagged: Array<HiddenEdit & { mode: string; oid: string }> = [];
  for (const entry of listed.split('\0')) {
    const match = /^(\S) (\d{6}) ([0-9a-f]+) \d\t(.*)$/s.exec(entry);
    if (!match) continue;
    const [, tag, mode, oid, file] = match;
    const skip = tag === 'S' || tag === 's';
    const assumed = tag !== tag.toUpperCase();
    if ((!skip && !assumed) || mode === '160000') continue;
    flagged.push({ file, bit: skip ? 'skip-worktree' : 'assume-unchanged', mode, oid });
  }
  const { lstat, readlink } = await import('node:fs/promises');
  const changed: HiddenEdit[] = [];
  const regular: typeof flagged = [];
  for (const entry of flagged) {
    const file = resolve(path, entry.file);
    const stat = await lstat(file).catch(() => undefined);
    if (!stat) continue;
    if (entry.mode === '120000' || stat.isSymbolicLink()) {
      // A link's content is the name it points at, hashed here as git hashes a blob.
      const same = entry.mode === '120000' && stat.isSymbolicLink() && blobId(Buffer.from(await readlink(file)), entry.oid.length) === entry.oid;
      if (!same) changed.push({ file: entry.file, bit: entry.bit });
    } else if (entry.file.includes('\n')) changed.push({ file: entry.file, bit: entry.bit }); // hashed by name a line: kept unread
    else if (stat.isFile()) regular.push(entry);
  }
  if (regular.length) {
    const hashed = await run('git', ['hash-object', '--stdin-paths'], { cwd: path, input: regular.map((entry) => entry.file).join('\n') + '\n' });
    if (hashed.exitCode !== 0) throw flumeError('GIT_FAILED', { command: 'hash-object', message: firstLine(hashed.stderr) }, { details: { message: hashed.stderr } });
    const ids = hashed.stdout.split('\n');
    regular.forEach((entry, i) => {
      if (ids[i] !== entry.oid) changed.push({ file: entry.file, bit: entry.bit });
    });
  }
  return changed.sort((a, b) => a.file.localeCompare(b.file));
}

/** The object id git gives a blob of `content` (SHA-1, or SHA-256 for a 64-digit id). */
function blobId(content: Buffer, digits: number): string {
  const hash = createHash(digits === 64 ? 'sha256' : 'sha1');
  hash.update(`blob ${content.length}\0`);
  hash.update(content);
  return hash.digest('hex');
}

/** What the worktree at `path` holds against `base`, committed or not, as `git diff --stat` words it. */
export async function diffStat(path: string, base: string, width = 80): Promise<string> {
  return read(path, ['diff', `--stat=${Math.max(20, width)}`, base, '--'], 0);
}

/** The populated submodules of a worktree (gitlinks whose folder holds a repository): `git worktree remove` refuses these. */
export async function populatedSubmodules(path: string): Promise<string[]> {
  const out = await read(path, ['ls-files', '--stage', '-z']);
  return out
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1))
    .filter((file) => existsSync(resolve(path, file, '.git')));
}

/** How many commits of the repository at `path` none of its remote-tracking refs reach; undefined when unreadable. */
export async function commitsRemotesLack(path: string): Promise<number | undefined> {
  const out = await run('git', ['rev-list', '--count', '--all', '--not', '--remotes', '--'], { cwd: path });
  return out.exitCode === 0 ? Number(out.stdout.trim()) : undefined;
}

/** The repository's stash entries, newest first: `stash@{n}` and its subject (`WIP on <branch>: …`, `On <branch>: …`). */
export async function stashEntries(root: string): Promise<Array<{ ref: string; subject: string }>> {
  const out = await read(root, ['stash', 'list', '--format=%gd%x00%gs']);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref, subject] = line.split('\0');
      return { ref, subject: subject ?? '' };
    });
}

/**
 * Reads many blobs or trees at once (`git cat-file --batch`): each `<rev>:<path>` to its content,
 * or undefined when absent. Trees come back as their entry names.
 */
export async function readObjects(root: string, specs: string[]): Promise<Map<string, { type: string; content: Buffer } | undefined>> {
  const result = new Map<string, { type: string; content: Buffer } | undefined>();
  const unique = [...new Set(specs)];
  if (unique.length === 0) return result;
  const result0 = await runBytes('git', ['cat-file', '--batch'], { cwd: root, input: unique.join('\n') + '\n' });
  if (result0.exitCode !== 0) {
    throw flumeError('GIT_FAILED', { command: 'cat-file', message: firstLine(result0.stderr) }, { details: { stderr: result0.stderr } });
  }
  const out = result0.stdout;
  let offset = 0;
  for (const spec of unique) {
    const newline = out.indexOf(10, offset);
    const header = out.subarray(offset, newline).toString('utf8');
    offset = newline + 1;
    const parts = header.split(' ');
    if (parts.length < 3 || parts[parts.length - 1] === 'missing' || parts[1] === 'missing') {
      result.set(spec, undefined);
      continue;
    }
    const size = Number(parts[2]);
    result.set(spec, { type: parts[1], content: out.subarray(offset, offset + size) });
    offset += size + 1;
  }
  return result;
}

/** The entry names of a tree object's raw content. */
export function treeNames(content: Buffer): string[] {
  const names: string[] = [];
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(32, offset);
    const nul = content.indexOf(0, space);
    names.push(content.subarray(space + 1, nul).toString('utf8'));
    offset = nul + 21;
  }
  return names;
}

/** Adds a line to the repository's `info/exclude` unless it is there already. */
export async function excludePath(commonDir: string, line: string): Promise<void> {
  const { readFile, appendFile, mkdir } = await import('node:fs/promises');
  const file = resolve(commonDir, 'info', 'exclude');
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.split('\n').some((existing) => existing.trim() === line)) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`);
}

/** Parses `git worktree list --porcelain`. */
export function parseWorktrees(text: string): Worktree[] {
  const worktrees: Worktree[] = [];
  let current: Worktree | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice(9), bare: false, locked: false, prunable: false };
      worktrees.push(current);
    } else if (!current) {
      continue;
    } else if (line.startsWith('HEAD ')) current.head = line.slice(5);
    else if (line.startsWith('branch ')) current.branch = line.slice(7).replace(/^refs\/heads\//, '');
    else if (line === 'bare') current.bare = true;
    else if (line === 'locked' || line.startsWith('locked ')) {
      current.locked = true;
      current.lockReason = line.slice(7) || undefined;
    } else if (line === 'prunable' || line.startsWith('prunable ')) current.prunable = true;
  }
  return worktrees;
}

const HEADS = 'refs/heads/';

/**
 * The nested repository a status entry shows, if any: a folder entry (git names a nested repository
 * as a folder and does not enter it), a `.git` git did not take for a repository, or a bare
 * repository's `HEAD` beside its `objects/` and `refs/`.
 */
function nestedRepository(root: string, file: string): string | undefined {
  if (file.endsWith('/')) return file.slice(0, -1);
  const name = file.slice(file.lastIndexOf('/') + 1);
  const folder = file.slice(0, Math.max(0, file.lastIndexOf('/')));
  if (name === '.git') return folder || '.';
  if (name === 'HEAD' && existsSync(resolve(root, folder, 'objects')) && existsSync(resolve(root, folder, 'refs'))) return folder || '.';
  return undefined;
}

/** Each ref's commit and that commit's tree. */
async function readHeads(root: string, refs: string[]): Promise<Map<string, { commit: string; tree: string }>> {
  const out = await read(root, ['for-each-ref', '--format=%(refname) %(objectname) %(tree)', ...refs]);
  return new Map(out.split('\n').filter(Boolean).map((line) => {
    const [ref, commit, tree] = line.split(' ');
    return [ref, { commit, tree }];
  }));
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim())?.trim() ?? '';
}

/**
 * The identity git would commit with in `cwd` under `env` (its own variables, else the config it reads
 * there: the repository's, the user's global file, its `includeIf`s), as the variables that carry it
 * into a program that reads none of the user's config (the Gemini CLI's shell tool runs git with
 * `GIT_CONFIG_GLOBAL=/dev/null`). `git var` judges it as `git commit` does: where it finds none, nothing
 * is answered, and the agent's commit fails as the user's own would. A variable `env` sets is kept.
 */
/** git's variables that carry the identity a commit is made with. */
export const IDENTITY_VARIABLES = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'] as const;

/**
 * The whole identity git commits with in `cwd` under `env`, as its four variables: those `env` sets,
 * and the rest as identityVariables finds them. What git finds no identity for is missing.
 */
export async function gitIdentity(cwd: string, env: Record<string, string>): Promise<Record<string, string>> {
  const given = Object.fromEntries(IDENTITY_VARIABLES.filter((name) => env[name] !== undefined).map((name) => [name, env[name]!]));
  return { ...given, ...(await identityVariables(cwd, env)) };
}

export async function identityVariables(cwd: string, env: Record<string, string>): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const role of ['AUTHOR', 'COMMITTER'] as const) {
    const name = `GIT_${role}_NAME`;
    const email = `GIT_${role}_EMAIL`;
    if (env[name] !== undefined && env[email] !== undefined) continue;
    const out = await run('git', ['var', `GIT_${role}_IDENT`], { cwd, env, clean: true, timeoutMs: 10_000 });
    const ident = /^(.*) <([^>]*)> \d+ [+-]\d{4}$/.exec(out.stdout.trim());
    if (out.exitCode !== 0 || !ident) continue;
    if (env[name] === undefined) found[name] = ident[1]!;
    if (env[email] === undefined) found[email] = ident[2]!;
  }
  return found;
}
