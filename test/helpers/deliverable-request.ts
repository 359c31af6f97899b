/**
 * Real git repositories for the deliverable readers' tests, and a real `DeliverableRequest` read
 * from one: the head is fixed when the request is made, files and folders are read at that head by
 * `git cat-file --batch` (batched per tick, as the engine's reading batches them), landing by the
 * core's `unlandedCounts`. No git is mocked.
 */
import { mkdtemp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { run } from '../../core/support/exec.js';
import { addWorktree, commonDirOf, createBranch, excludePath, readObjects, resolveRevision, treeNames, judgeLandings, unlandedCounts } from '../../core/support/git.js';
import type { DeliverableRequest } from '../../core/api/hooks.js';
import type { PlaceRecord } from '../../core/api/record.js';
import type { StageDef } from '../../core/api/config.js';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'flume test',
  GIT_AUTHOR_EMAIL: 'test@flume.invalid',
  GIT_COMMITTER_NAME: 'flume test',
  GIT_COMMITTER_EMAIL: 'test@flume.invalid',
};

/** A repository in a temp folder, its main checkout on `main` with one commit. */
export interface TestRepo {
  root: string;
  /** Runs git in `cwd` (default the root); throws on a non-zero exit. */
  git(args: string[], cwd?: string, env?: Record<string, string>): Promise<string>;
  /** Writes files (null deletes) in `cwd`, commits them all, and returns the new head. */
  commit(cwd: string, files: Record<string, string | Buffer | null>, message?: string, date?: string): Promise<string>;
  remove(): Promise<void>;
}

/** Makes a repository with a first commit on `main`. */
export async function makeRepo(): Promise<TestRepo> {
  const root = await mkdtemp(join(tmpdir(), 'flume-deliverables-'));
  const git: TestRepo['git'] = async (args, cwd = root, env = {}) => {
    const result = await run('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: { ...IDENTITY, ...env } });
    if (result.exitCode !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout.trim();
  };
  const commit: TestRepo['commit'] = async (cwd, files, message = 'work', date) => {
    for (const [path, content] of Object.entries(files)) {
      const file = join(cwd, path);
      if (content === null) await rm(file, { force: true });
      else await mkdir(dirname(file), { recursive: true }).then(() => writeFile(file, content));
    }
    await git(['add', '-A'], cwd);
    const env: Record<string, string> = date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {};
    await git(['commit', '--quiet', '--allow-empty', '-m', message], cwd, env);
    return git(['rev-parse', 'HEAD'], cwd);
  };
  await git(['init', '--quiet', '-b', 'main']);
  await excludePath(join(root, '.git'), '/places/');
  await commit(root, { 'README.md': '# test\n' }, 'first');
  return { root, git, commit, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Makes a place (worktree and branch `<kind>/<name>`) and its record, its stage begun now at its head. */
export async function makePlace(repo: TestRepo, kind: string, name: string, stage = 'code'): Promise<PlaceRecord> {
  const path = join(repo.root, 'places', `${kind}--${name}`);
  const branch = `${kind}/${name}`;
  const base = await repo.git(['rev-parse', 'HEAD']);
  await createBranch(repo.root, branch, base, `test: make ${branch}`);
  await addWorktree(repo.root, path, branch);
  const now = new Date().toISOString();
  return {
    version: 1, id: `${kind}/${name}`, kind, name, repo: repo.root, path, branch, target: 'main', base,
    brief: 'test', createdAt: now, phase: 'made', ready: { state: 'none', at: now },
    stage: { name: stage, index: 0, startedAt: now, startHead: base, attempt: 1, delivery: 'taken', sends: 1 },
    history: [],
  };
}

/** A request as the engine builds one, plus how many `cat-file` processes it has run. */
export type TestRequest = DeliverableRequest & { readonly catFiles: number };

/**
 * Builds a real request for `place`: its branch head is read here, once (or `head` is taken as
 * given), and every file, folder and time is read at that commit.
 */
export async function deliverableRequest(
  place: PlaceRecord,
  options: { type: string; [key: string]: unknown },
  at: { head?: string; stage?: StageDef } = {},
): Promise<TestRequest> {
  const root = place.repo;
  const head = at.head ?? (await resolveRevision(root, `refs/heads/${place.branch}`));
  if (!head) throw new Error(`branch ${place.branch} has no head`);
  const headTime = (await run('git', ['show', '-s', '--format=%cI', head], { cwd: root })).stdout.trim();
  const read = batched(root, head);
  const request: TestRequest = {
    place,
    stage: at.stage ?? { name: place.stage?.name ?? 'code', prompt: 'work', deliverable: options as StageDef['deliverable'] },
    options,
    head,
    headTime,
    commonDir: await commonDirOf(root),
    get catFiles() {
      return read.processes;
    },
    file: async (path) => {
      const object = await read.object(path);
      return object?.type === 'blob' ? object.content.toString('utf8') : undefined;
    },
    list: async (path) => {
      const object = await read.object(path);
      return object?.type === 'tree' ? treeNames(object.content) : undefined;
    },
    workingFile: (path) => readFile(join(place.path, path), 'utf8').catch(() => undefined),
    workingFileWritten: (path) => stat(join(place.path, path)).then((s) => s.mtime.toISOString(), () => undefined),
    // core's unlandedCounts throws when a branch or target is gone; to a reader that is "cannot tell".
    unlanded: () =>
      unlandedCounts(root, [{ branch: place.branch, target: place.target }]).then(
        (counts) => counts.get(place.branch),
        () => undefined,
      ),
    landing: () =>
      judgeLandings(root, [{ branch: place.branch, target: place.target }]).then(
        (judged) => {
          const at = judged.get(place.branch);
          return at && { patches: at.patches, ...(at.content ? { content: at.content } : {}) };
        },
        () => undefined,
      ),
  };
  return request;
}

// Paths asked for in the same tick go to git in one `cat-file --batch`, as the engine batches them.
function batched(root: string, head: string) {
  type Entry = { type: string; content: Buffer } | undefined;
  type Waiter = { resolve(entry: Entry): void; reject(error: unknown): void };
  let queue: Map<string, Waiter[]> | undefined;
  const state = {
    processes: 0,
    object(path: string): Promise<Entry> {
      const spec = `${head}:${path.replace(/^\/+|\/+$/g, '')}`;
      return new Promise((resolve, reject) => {
        if (!queue) {
          const mine = (queue = new Map<string, Waiter[]>());
          setImmediate(() => {
            queue = undefined;
            state.processes++;
            const all = [...mine.entries()];
            readObjects(root, all.map(([key]) => key)).then(
              (found) => all.forEach(([key, waiters]) => waiters.forEach((waiter) => waiter.resolve(found.get(key)))),
              (error: unknown) => all.forEach(([, waiters]) => waiters.forEach((waiter) => waiter.reject(error))),
            );
          });
        }
        queue.set(spec, [...(queue.get(spec) ?? []), { resolve, reject }]);
      });
    },
  };
  return state;
}
