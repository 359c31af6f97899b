/**
 * The repository a place's container sees (docs/decisions/container-repository.md): a git folder of
 * the place's own (`<state>/gits/<container name>`), never the host's. Its objects borrow the host's
 * (`objects/info/alternates`, the host's objects mounted read-only), its refs are the place's branch
 * and its target as they stood when it was made, and the worktree's `.git` inside names it (a file of
 * flume's, mounted read-only over the host's). The agent commits there. Nothing in it is trusted: no
 * git on this machine runs in it; its refs are read as files without following links; what the host
 * lacks is packed by git in a container and taken through a quarantine (`bringBack`); and it is made
 * afresh for each agent. */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { flumeError } from '../../api/errors.js';
import { run, runPiped } from '../../support/exec.js';
import { linkOnTheWay, readNoFollow } from '../../state/no-follow.js';
import type { PlaceContainer } from '../../api/record.js';

/** What the place's own repository is made from: the place's worktree and branch, its target, the host's repository. */
export interface ContainerRepositoryPlace {
  /** The main checkout's root (where the host's git runs). */
  root: string;
  /** The host's git folder. */
  commonDir: string;
  /** The place's worktree. */
  path: string;
  branch: string;
  target: string;
}

/** The place's own git folder, beside its home: `<state>/gits/<container name>`. */
export function containerGitDir(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return join(dirname(dirname(container.home)), 'gits', container.name);
}

/** The `.git` file mounted read-only over the worktree's inside: it names the place's own git folder. */
export function containerGitFile(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return `${containerGitDir(container)}.gitfile`;
}

/** The host's objects folder, mounted read-only inside for the place's repository to borrow from. */
export function hostObjects(commonDir: string): string {
  return join(commonDir, 'objects');
}

/**
 * Makes the place's own repository afresh (whatever was there is gone: take the branch back first,
 * `bringBack`): its HEAD on the place's branch, the branch and its target at the host's heads, the
 * host's objects borrowed, the worktree's index as the host has it, and the `.git` file naming it.
 */
export async function makeContainerRepository(container: Pick<PlaceContainer, 'home' | 'name'>, place: ContainerRepositoryPlace): Promise<string> {
  const dir = containerGitDir(container);
  // One git for both heads; the worktree's index where its `.git` file names its folder.
  const listed = await run('git', ['for-each-ref', '--format=%(objectname) %(refname)', `refs/heads/${place.branch}`, `refs/heads/${place.target}`], { cwd: place.root, timeoutMs: 30_000 });
  const found = new Map(listed.stdout.split('\n').filter(Boolean).map((line) => [line.slice(line.indexOf(' ') + 1), line.slice(0, line.indexOf(' '))]));
  const heads = [found.get(`refs/heads/${place.branch}`), found.get(`refs/heads/${place.target}`)];
  const gitFile = await readFile(join(place.path, '.git'), 'utf8').catch(() => '');
  const named = /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim();
  const index = named ? join(resolve(place.path, named), 'index') : undefined;
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'objects', 'info'), { recursive: true });
  await mkdir(join(dir, 'refs', 'heads'), { recursive: true });
  await mkdir(join(dir, 'refs', 'tags'), { recursive: true });
  await writeFile(join(dir, 'HEAD'), `ref: refs/heads/${place.branch}\n`);
  await writeFile(join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n');
  await writeFile(join(dir, 'objects', 'info', 'alternates'), `${hostObjects(place.commonDir)}\n`);
  const refs = new Map<string, string>();
  if (heads[1]) refs.set(`refs/heads/${place.target}`, heads[1]);
  if (heads[0]) refs.set(`refs/heads/${place.branch}`, heads[0]);
  const lines = [...refs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([ref, oid]) => `${oid} ${ref}\n`);
  await writeFile(join(dir, 'packed-refs'), `# pack-refs with: peeled sorted \n${lines.join('')}`);
  if (index) await copyFile(index, join(dir, 'index')).catch(() => undefined);
  await writeFile(containerGitFile(container), `gitdir: ${dir}\n`);
  return dir;
}

/** Removes the place's own repository and its `.git` file. */
export async function removeContainerRepository(container: Pick<PlaceContainer, 'home' | 'name'>): Promise<void> {
  await rm(containerGitDir(container), { recursive: true, force: true });
  await rm(containerGitFile(container), { force: true });
}

/** What taking the place's branch back found: nothing to take, taken (the host's branch moved), or refused (not a fast-forward). */
export type BroughtBack = { taken: false; refused?: string } | { taken: true; head: string };

/** The container a place's branch is taken back through: its engine, image and mounts, its name and home. */
export type RepositoryContainer = Pick<PlaceContainer, 'home' | 'name' | 'engine' | 'image' | 'mounts'>;

/** The most a pack taken back may weigh: an agent's commits, not a disk's worth. */
const MAX_PACK = String(2 * 1024 ** 3);

/**
 * Takes the place's branch back from its own repository into the host's: a fast-forward of that
 * branch alone, or nothing. No git here ever reads that repository (whose refs, alternates and config
 * are the agent's): git packs what the host lacks in a container (the place's own while it runs,
 * else one of the image made for it and removed after), which sees nothing of this machine but that
 * repository and the repository's objects, both read-only, so what the agent planted there leads
 * nowhere here. The pack is taken by `git index-pack --strict` (every object checked, as a push from
 * anyone is), then the branch moves by `update-ref` from the head the caller read, and the worktree's
 * index is the new head's (its files as the agent left them). `hostHead` is the branch's head here as
 * the caller read it: when the place's is the same, nothing runs.
 */
export async function bringBack(container: RepositoryContainer, place: ContainerRepositoryPlace, hostHead: string | undefined): Promise<BroughtBack> {
  const dir = containerGitDir(container);
  const head = await placeHead(dir, place.branch);
  if (!head || head === hostHead) return { taken: false };
  if (!hostHead) return { taken: false, refused: `${place.branch} is not a branch here` };
  // What the agent's repository holds that git here lacks is taken into a folder of its own first
  // (the quarantine, as receive-pack does): only a pack that carries the head, a commit that follows
  // the branch here, joins this repository's objects; anything else is dropped with the folder.
  const quarantine = await mkdtemp(join(hostObjects(place.commonDir), 'flume-incoming-'));
  try {
    await mkdir(join(quarantine, 'pack'));
    const env = { GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: hostObjects(place.commonDir) };
    if (!(await hasCommit(place.root, head))) {
      const odd = await notPlain(dir);
      if (odd) return { taken: false, refused: `its repository holds ${odd}, which git never makes: nothing of it is read` };
      // In its own container while it runs; where that fails (gone, stopped, its git broken), in one made for it.
      const failed = (await packHere(container, place, dir, head, hostHead, true, env)) && (await packHere(container, place, dir, head, hostHead, false, env));
      if (!(await hasCommit(place.root, head, env))) return { taken: false, refused: `its objects could not be taken${failed ? `: ${failed}` : ''}` };
    }
    const ancestor = await run('git', ['merge-base', '--is-ancestor', hostHead, head], { cwd: place.root, env, timeoutMs: 60_000 });
    if (ancestor.exitCode !== 0) return { taken: false, refused: `${head.slice(0, 12)} does not follow ${hostHead.slice(0, 12)}: the branch was rewritten inside` };
    await keepQuarantined(quarantine, hostObjects(place.commonDir));
  } finally {
    await rm(quarantine, { recursive: true, force: true });
  }
  const moved = await run('git', ['update-ref', '-m', 'flume: taken back from the place\'s container', `refs/heads/${place.branch}`, head, hostHead], { cwd: place.root, timeoutMs: 60_000 });
  if (moved.exitCode !== 0) return { taken: false, refused: (moved.stderr || moved.stdout).trim().split('\n')[0] || 'the branch moved meanwhile' };
  // The worktree's index follows its branch (the files stay as they are).
  await run('git', ['reset', '--quiet'], { cwd: place.path, timeoutMs: 60_000 });
  return { taken: true, head };
}

/**
 * Packs `head` less what `hostHead` has, by git in the place's container (`inPlace`) or in one made
 * for it, into the host's repository through `git index-pack --strict`. Answers undefined when the
 * pack was taken, else what failed.
 */
async function packHere(container: RepositoryContainer, place: ContainerRepositoryPlace, dir: string, head: string, hostHead: string, inPlace: boolean, env: Record<string, string>): Promise<string | undefined> {
  const objects = hostObjects(place.commonDir);
  const git = ['--git-dir', dir, 'pack-objects', '--stdout', '--revs', '--thin', '-q'];
  const mounts = [`${dir}:${dir}:ro`, `${objects}:${objects}:ro`, ...extraMounts(container)].flatMap((volume) => ['-v', volume]);
  const argv = inPlace ? [container.engine, 'exec', '-i', container.name, 'git', ...git] : [container.engine, 'run', '--rm', '-i', '--pull=never', '--network', 'none', ...mounts, '--entrypoint', 'git', container.image, ...git];
  const ended = await runPiped({ file: argv[0]!, args: argv.slice(1), input: `${head}\n^${hostHead}\n` }, { file: 'git', args: ['index-pack', '--strict', '--stdin', '--fix-thin', `--max-input-size=${MAX_PACK}`], cwd: place.root, env }, 60_000);
  return ended.from === 0 && ended.to === 0 ? undefined : firstLine(ended.errors) || `exit ${ended.from}/${ended.to}`;
}

/** The config's mounts as the engine takes them (`PATH:PATH`, `PATH:PATH:ro`). */
export function extraMounts(spec: Pick<PlaceContainer, 'mounts'>): string[] {
  return (spec.mounts ?? []).map((mount) => {
    const [path, mode] = mount.split(/:(?=ro$|rw$)/);
    return mode ? `${path}:${path}:${mode}` : `${path}:${path}`;
  });
}

function firstLine(text: string): string {
  return text.trim().split('\n').find((line) => line.trim() !== '')?.slice(0, 300) ?? '';
}

async function hasCommit(root: string, oid: string, env?: Record<string, string>): Promise<boolean> {
  return (await run('git', ['cat-file', '-e', `${oid}^{commit}`], { cwd: root, ...(env ? { env } : {}), timeoutMs: 30_000 })).exitCode === 0;
}

/** The packs taken into the quarantine, moved into the repository's own objects (each index after its pack). */
async function keepQuarantined(quarantine: string, objects: string): Promise<void> {
  const packs = join(quarantine, 'pack');
  const names = await readdir(packs).catch(() => [] as string[]);
  for (const suffix of ['.pack', '.rev', '.idx']) {
    for (const name of names.filter((one) => one.endsWith(suffix))) await rename(join(packs, name), join(objects, 'pack', name));
  }
}

/**
 * The first entry of the place's repository that is not a plain file or folder (a link, a FIFO, a
 * socket, a device): git makes none, and git packing there would follow or wait on it. Undefined
 * where there is none. At most 200,000 entries are looked at.
 */
async function notPlain(dir: string): Promise<string | undefined> {
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0 && seen < 200_000) {
    const folder = pending.pop()!;
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      seen++;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (!entry.isFile()) return `${entry.isSymbolicLink() ? 'a link' : 'a file that is not a plain file'} at ${path}`;
    }
  }
  return undefined;
}

/**
 * Takes the branch back before the place's own repository is made afresh: refuses, with the folder
 * that holds them, when it holds commits of the branch the host's cannot take by fast-forward.
 */
export async function bringBackOrRefuse(container: RepositoryContainer, place: ContainerRepositoryPlace): Promise<void> {
  const host = (await revParse(place.root, [`refs/heads/${place.branch}`]))[0];
  const brought = await bringBack(container, place, host);
  if (!brought.taken && brought.refused) {
    const dir = containerGitDir(container);
    throw flumeError('CONTAINER_UNUSABLE', { branch: place.branch, folder: dir, said: brought.refused, engine: container.engine, name: container.name }, { variant: 'diverged', details: { branch: place.branch, folder: dir } });
  }
}

/**
 * The head of `branch` in the place's own repository, read as files without following a link (its
 * loose ref, else its packed-refs); undefined where it has none or what it holds is not a commit id.
 */
export async function placeHead(dir: string, branch: string): Promise<string | undefined> {
  const path = join(dir, 'refs', 'heads', ...branch.split('/'));
  // A folder on the way made a link (refs/heads/<kind>) would take the reading elsewhere.
  if ((await linkOnTheWay(path, dir)) !== undefined) return undefined;
  const loose = (await readNoFollow(path, 4096))?.text;
  if (loose !== undefined) return OID.test(loose.trim()) ? loose.trim() : undefined;
  const packed = (await readNoFollow(join(dir, 'packed-refs'), 1024 * 1024))?.text;
  const line = packed?.split('\n').find((row) => row.endsWith(` refs/heads/${branch}`));
  const oid = line?.slice(0, line.indexOf(' '));
  return oid && OID.test(oid) ? oid : undefined;
}

const OID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

async function revParse(root: string, refs: string[]): Promise<Array<string | undefined>> {
  return Promise.all(
    refs.map(async (ref) => {
      const out = await run('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: root, timeoutMs: 30_000 });
      return out.exitCode === 0 ? out.stdout.trim() || undefined : undefined;
    }),
  );
}
