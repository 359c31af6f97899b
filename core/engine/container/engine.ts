/**
 * A place's container, through the engine's own command line (`podman` or `docker`; no daemon API):
 * the checks made before anything is made, the container made afresh for each agent of the place
 * (named after it, labelled `flume.place=<id>`, the worktree, the place's own repository and the
 * agent's home mounted at the same paths inside as outside: mountArgs), the command a pane runs to
 * start the agent in it, the end of everything run in it, its removal, and every container of a host
 * in one look.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { flumeError } from '../../api/errors.js';
import { run, startDetached, which } from '../../support/exec.js';
import { fileURLToPath } from 'node:url';
import { bridgeProgram, proxyDir, proxyInit, proxyLog } from './proxy.js';
import type { ContainerSpec } from '../../api/record.js';
import { bringBackOrRefuse, containerGitDir, containerGitFile, extraMounts, hostObjects, makeContainerRepository, type ContainerRepositoryPlace } from './repository.js';

/** The engines flume drives, by their command. */
export const ENGINES = ['podman', 'docker'] as const;
export type EngineName = ContainerSpec['engine'];
export type { ContainerSpec };

/** The place a container is made for: its id, its worktree and branch, the repository's root and git folder, and the agent's home. */
export interface ContainerPlace extends ContainerRepositoryPlace {
  id: string;
  home: string;
}

/** The variables that send an engine's commands to another machine: such an engine is refused. */
const REMOTE_VARIABLES = ['DOCKER_HOST', 'CONTAINER_HOST', 'CONTAINER_CONNECTION', 'DOCKER_CONTEXT'];

/** The label each of flume's containers carries, with its place's id. */
export const PLACE_LABEL = 'flume.place';

/** The container's name for a place: flume-<kind>--<name>-<8 hex of the git folder>, so two repositories' places never share one. */
export function containerName(place: { id: string; commonDir: string }): string {
  const hash = createHash('sha256').update(place.commonDir).digest('hex').slice(0, 8);
  return `flume-${place.id.replace('/', '--').replace(/[^a-zA-Z0-9_.-]/g, '_')}-${hash}`;
}

/**
 * Refuses an engine flume cannot use here, with the fix: one whose commands would run on another
 * machine, one not installed, one that does not answer, an image not on this machine.
 */
export async function checkEngine(spec: ContainerSpec, env: NodeJS.ProcessEnv = process.env): Promise<{ imageId: string }> {
  const remote = REMOTE_VARIABLES.find((name) => env[name]);
  if (remote) throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine, variable: remote, value: env[remote]! }, { variant: 'remote', details: { engine: spec.engine, variable: remote } });
  if (!which(spec.engine, env.PATH ?? '')) throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine }, { variant: 'missing', details: { engine: spec.engine } });
  // One question answers both when all is well: the engine answers, and has the image.
  const image = await engine(spec, ['image', 'inspect', '--format', '{{.Id}}', spec.image], 30_000);
  if (image.exitCode === 0) return { imageId: image.stdout.trim() };
  const version = await engine(spec, ['version', '--format', '{{.Client.Version}}'], 30_000);
  if (version.exitCode !== 0) {
    throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine, said: firstLine(version.stderr || version.stdout) }, { variant: 'silent', details: { engine: spec.engine } });
  }
  throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine, image: spec.image }, { variant: 'noImage', details: { engine: spec.engine, image: spec.image } });
}

/** The engine's version as its client says it; undefined when it does not answer. */
export async function engineVersion(engineName: EngineName): Promise<string | undefined> {
  const out = await run(engineName, ['version', '--format', '{{.Client.Version}}'], { timeoutMs: 30_000 });
  return out.exitCode === 0 ? out.stdout.trim() || undefined : undefined;
}

/**
 * Checks, in a container of the image that is removed at once, that what flume relies on holds: each
 * of the config's mounts names a folder here; git runs inside and reads the host's objects (mounted
 * read-only) through a repository of its own, as a place's agent will; a file written in a mounted
 * folder inside is the host's file. Refuses with CONTAINER_UNUSABLE, naming which failed and its own
 * fix, otherwise; nothing is left behind.
 */
export async function checkMounts(spec: ContainerSpec, place: Pick<ContainerPlace, 'commonDir' | 'home'> & { head?: string }): Promise<void> {
  for (const mount of spec.mounts ?? []) {
    const [path] = mount.split(/:(?=ro$|rw$)/);
    if (!path || !path.startsWith('/') || !existsSync(path)) {
      throw flumeError('CONTAINER_UNUSABLE', { mount }, { variant: 'mount', details: { engine: spec.engine, mount } });
    }
  }
  mkdirSync(place.home, { recursive: true });
  const token = randomUUID();
  const mark = join(place.home, `.flume-mount-${token}`);
  // A repository of the check's own in the home, borrowing the host's objects, as a place's does.
  const repo = join(place.home, `.flume-git-${token}`);
  mkdirSync(join(repo, 'objects', 'info'), { recursive: true });
  mkdirSync(join(repo, 'refs'), { recursive: true });
  writeFileSync(join(repo, 'HEAD'), 'ref: refs/heads/flume-check\n');
  writeFileSync(join(repo, 'objects', 'info', 'alternates'), `${hostObjects(place.commonDir)}\n`);
  try {
    // Each step says which failed: no git, a home it cannot write (and the user it runs as), objects it cannot read.
    const script = [
      'git --version >/dev/null 2>&1 || { echo "flume-check: no-git"; exit 3; }',
      'printf %s "$2" > "$3" || { echo "flume-check: not-written $(id -u 2>/dev/null || echo unknown)"; exit 4; }',
      '[ -z "$4" ] || git --git-dir "$1" cat-file -e "$4" || { echo "flume-check: no-objects"; exit 5; }',
      '[ -z "$5" ] || command -v node >/dev/null 2>&1 || { echo "flume-check: no-node"; exit 6; }',
      'echo flume-check: ok',
    ].join('\n');
    const volumes = [`${place.home}:${place.home}`, `${hostObjects(place.commonDir)}:${hostObjects(place.commonDir)}:ro`, ...extraMounts(spec)].flatMap((volume) => ['-v', volume]);
    const result = await engine(spec, ['run', '--rm', '--pull=never', '--init', ...networkArgs(spec), ...volumes, '--entrypoint', 'sh', spec.image, '-c', script, 'check', repo, token, mark, place.head ?? '', allowlist(spec) ? 'proxy' : ''], 60_000);
    const said = /flume-check: (\S+)(?: (\S+))?/.exec(result.stdout)?.slice(1) ?? [];
    if (said[0] === 'not-written' || (said[0] === 'ok' && (!existsSync(mark) || readFileSync(mark, 'utf8') !== token))) {
      const user = said[0] === 'not-written' ? said[1] : undefined;
      if (user !== undefined && user !== '0') {
        throw flumeError('CONTAINER_UNUSABLE', { image: spec.image, user, folder: place.home }, { variant: 'user', details: { engine: spec.engine, image: spec.image, user } });
      }
      throw flumeError('CONTAINER_UNUSABLE', { image: spec.image, folder: place.home }, { variant: 'home', details: { engine: spec.engine, image: spec.image } });
    }
    if (said[0] === 'no-node') {
      throw flumeError('CONTAINER_UNUSABLE', { image: spec.image }, { variant: 'proxy', details: { engine: spec.engine, image: spec.image } });
    }
    if (result.exitCode !== 0 || said[0] !== 'ok') {
      const what = said[0] === 'no-git' ? 'git is not in the image (or not on its PATH)' : said[0] === 'no-objects' ? `git inside cannot read the repository's objects at ${hostObjects(place.commonDir)}` : firstLine(result.stderr || result.stdout) || `exit ${result.exitCode}`;
      throw flumeError('CONTAINER_UNUSABLE', { image: spec.image, folder: place.commonDir, said: what }, { variant: 'gitFolder', details: { engine: spec.engine, image: spec.image } });
    }
  } finally {
    rmSync(mark, { force: true });
    rmSync(repo, { recursive: true, force: true });
  }
}

/** The most processes a place's container holds (`--pids-limit`): a fork bomb inside stops there. */
export const PIDS_LIMIT = 2048;

/**
 * Makes the place's container afresh for an agent: what the last agent committed on the place's
 * branch is taken back first (refused, with nothing removed, when it cannot be by fast-forward), the
 * container there before is removed with everything still running in it, and the place's own
 * repository is made anew from the host's. Its first process is the engine's init (`--init`: it
 * reaps what ends inside) running the keeper: `sleep infinity`, or under an allowlist the bridge to
 * its proxy (proxy.ts). Answers its name.
 */
export async function makeContainer(spec: ContainerSpec, place: ContainerPlace): Promise<string> {
  const name = containerName(place);
  const container = { name, home: place.home };
  await bringBackOrRefuse({ ...spec, ...container }, place);
  // The container there was goes, with everything in it: podman replaces it as it makes the new one.
  const removed = spec.engine === 'podman' ? undefined : removeContainer(spec.engine, name);
  mkdirSync(place.home, { recursive: true });
  // Under an allowlist the bridge to the proxy keeps it (proxy.ts), on a socket of this start's own;
  // the proxy starts now, while the repository and the container are made.
  const allow = allowlist(spec);
  const socket = allow ? join(proxyDir(container), `proxy-${randomUUID().slice(0, 8)}.sock`) : undefined;
  if (allow) {
    rmSync(proxyDir(container), { recursive: true, force: true });
    rmSync(proxyInit(container), { force: true });
    mkdirSync(proxyDir(container), { recursive: true, mode: 0o700 });
    startDetached(process.execPath, [proxyMain(), socket!, proxyLog(container), proxyInit(container), ...allow]);
  }
  await Promise.all([makeContainerRepository(container, place), removed]);
  const keeper = socket ? ['--entrypoint', 'node', spec.image, '-e', bridgeProgram(socket)] : ['--entrypoint', 'sleep', spec.image, 'infinity'];
  const replace = spec.engine === 'podman' ? ['--replace'] : [];
  const args = ['run', '-d', ...replace, '--pull=never', '--init', '--pids-limit', String(PIDS_LIMIT), '--name', name, '--label', `${PLACE_LABEL}=${place.id}`, ...networkArgs(spec), ...mountArgs(spec, place), '-w', place.path, ...keeper];
  const made = await engine(spec, args, 120_000);
  if (made.exitCode === 0 && (!socket || (await proxyListens(spec.engine, name, socket, proxyInit(container))))) return name;
  await removeContainer(spec.engine, name);
  if (allow) rmSync(proxyDir(container), { recursive: true, force: true });
  throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine, image: spec.image, said: firstLine(made.stderr || made.stdout) || (made.exitCode === 0 ? 'its proxy did not start' : `exit ${made.exitCode}`) }, { variant: 'notMade', details: { engine: spec.engine, image: spec.image, name } });
}

/** Variables whose values say nothing secret: handed in on the command line. */
const PLAIN = (name: string) => name === 'HOME' || name === 'TERM' || name === 'PATH' || name === 'LANG' || name.startsWith('LC_');

/**
 * The command a pane runs to start `argv` in the container, in `cwd`, with exactly `env` (besides
 * `agent.container.env`). No secret stands in its argv (which `ps` shows to every user, and tmux
 * keeps): a variable other than HOME, TERM, PATH and the locale is named alone (`-e NAME`), and the
 * engine's client takes its value from its own environment, `env` here, which the pane host hands it
 * as it hands any program its environment.
 */
export function execCommand(spec: ContainerSpec, name: string, program: { cwd: string; env: Record<string, string>; argv: string[] }): { argv: string[]; env: Record<string, string> } {
  const all = { ...(spec.env ?? {}), ...program.env };
  const named = Object.entries(all).flatMap(([key, value]) => ['-e', PLAIN(key) ? `${key}=${value}` : key]);
  const env = Object.fromEntries(Object.entries(all).filter(([key]) => !PLAIN(key)));
  return { argv: [spec.engine, 'exec', '-it', '-w', program.cwd, ...named, name, ...program.argv], env };
}

/**
 * The command that runs `argv` to its end in a container of the image made for it alone and removed
 * after (`run --rm`): what a dry run asks of the image, where the place and its container are not
 * made. Only the config's mounts are mounted; secrets as execCommand.
 */
export function throwawayCommand(spec: ContainerSpec, program: { env: Record<string, string>; argv: string[] }): { argv: string[]; env: Record<string, string> } {
  const all = { ...(spec.env ?? {}), ...program.env };
  const named = Object.entries(all).flatMap(([key, value]) => ['-e', PLAIN(key) ? `${key}=${value}` : key]);
  const env = Object.fromEntries(Object.entries(all).filter(([key]) => !PLAIN(key)));
  const [file, ...rest] = program.argv;
  return { argv: [spec.engine, 'run', '--rm', '--pull=never', '--init', ...networkArgs(spec), ...extraMounts(spec).flatMap((volume) => ['-v', volume]), ...named, '--entrypoint', file!, spec.image, ...rest], env };
}

/**
 * Ends every program that runs in the container but its init and the process that keeps it, by
 * their pids on this machine (`insidePids`), the container paused meanwhile (`<engine> pause`, its
 * cgroup frozen): a program that forks for ever cannot outrun the signals with new pids. Again until
 * none is left, a few times at most. Nothing in the image is relied on (no shell, no kill). Answers
 * how many were signalled.
 */
export async function endInside(engineName: EngineName, name: string): Promise<number> {
  let ended = 0;
  for (let round = 0; round < 5; round++) {
    // Unknown (undefined) is something running that a look could not catch: paused, it is caught.
    const running = await insidePids(engineName, name);
    if (running?.length === 0) return ended;
    const paused = (await run(engineName, ['pause', name], { timeoutMs: 30_000 })).exitCode === 0;
    try {
      const pids = (paused ? await insidePids(engineName, name) : running) ?? running ?? [];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // ended meanwhile
        }
      }
      ended += pids.length;
    } finally {
      if (paused) await run(engineName, ['unpause', name], { timeoutMs: 30_000 });
    }
    await new Promise((done) => setTimeout(done, 50 * (round + 1)));
  }
  return ended;
}

/**
 * The pids on this machine of what runs in the container besides its init (`State.Pid`) and the
 * keeper (the init's first child, while it is the program flume started): every process in the
 * init's pid namespace, read in /proc, the same for both engines. The engine's own listing is not asked: `docker top` answered by
 * podman prints the container's own numbers, which are other processes here. Empty when the
 * container does not run; undefined when the engine did not answer, or something runs that the
 * reading could not catch (the cgroup's count says so).
 */
export async function insidePids(engineName: EngineName, name: string): Promise<number[] | undefined> {
  return (await insidePidsOf(engineName, [name])).get(name);
}

/** `insidePids` of many containers of an engine, in one question to it and one reading of /proc. */
export async function insidePidsOf(engineName: EngineName, names: string[]): Promise<Map<string, number[] | undefined>> {
  const found = new Map<string, number[] | undefined>();
  if (names.length === 0) return found;
  const listed = await run(engineName, ['container', 'inspect', '--format', '{{.Name}} {{.State.Pid}}', ...names], { timeoutMs: 30_000 });
  const inits = new Map<string, number>();
  for (const line of listed.stdout.split('\n')) {
    const [name, pid] = line.trim().replace(/^\//, '').split(' ');
    if (name && names.includes(name)) inits.set(name, Number(pid));
  }
  // One the engine did not list: none of that name (removed), unless the engine did not answer at all.
  const answered = listed.exitCode === 0 || inits.size > 0 || /no such (container|object)/i.test(listed.stderr);
  const namespaces = new Map<string, string>();
  for (const name of names) {
    const init = inits.get(name);
    if (init === undefined) found.set(name, answered ? [] : undefined);
    else if (!Number.isInteger(init) || init <= 0) found.set(name, []);
    else {
      const namespace = await readlink(`/proc/${init}/ns/pid`).catch(() => undefined);
      if (namespace) namespaces.set(namespace, name);
      else found.set(name, []);
    }
  }
  if (namespaces.size === 0) return found;
  const members = new Map<string, Array<{ pid: number; parent: number; start: number }>>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const name = namespaces.get((await readlink(`/proc/${pid}/ns/pid`).catch(() => '')) as string);
    if (!name || pid === inits.get(name)) continue;
    const fields = await statFields(pid);
    if (!fields) continue;
    members.set(name, [...(members.get(name) ?? []), { pid, parent: Number(fields[1]), start: Number(fields[19]) }]);
  }
  for (const name of namespaces.values()) {
    const all = members.get(name) ?? [];
    const first = all.filter((member) => member.parent === inits.get(name)).sort((a, b) => a.start - b.start || a.pid - b.pid)[0];
    // The keeper only while it is still the program flume started: one the agent made another (an
    // exec in it, through ptrace) is something running like any other.
    const keeper = first && (await keeps(first.pid)) ? first : undefined;
    const others = all.filter((member) => member !== keeper).map((member) => member.pid);
    // A program that forks for ever is gone from each pid before /proc is read: the container's
    // cgroup counts its tasks whatever their pids. More than the init's and the keeper's own threads
    // is something running that the reading missed: unknown, never none.
    found.set(name, others.length === 0 && (await tasksBeyond(inits.get(name)!, keeper?.pid)) ? undefined : others);
  }
  return found;
}

/** The fields of /proc/PID/stat after the command's closing parenthesis (state, ppid, … starttime at 19); undefined for no such process. */
async function statFields(pid: number): Promise<string[] | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** True when the process is the keeper flume starts: `sleep infinity`, or node running the proxy's bridge (proxy.ts). */
async function keeps(pid: number): Promise<boolean> {
  const [exe, cmdline] = await Promise.all([readlink(`/proc/${pid}/exe`).catch(() => ''), readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')]);
  const program = exe.slice(exe.lastIndexOf('/') + 1);
  if (program === 'sleep') return cmdline === 'sleep\0infinity\0';
  return /^node/.test(program) && cmdline.startsWith('node\0-e\0') && cmdline.includes('net.createServer');
}

/** True when the cgroup of the container's init holds more tasks than the init's and the keeper's threads. */
async function tasksBeyond(init: number, keeper: number | undefined): Promise<boolean> {
  const groups = await readFile(`/proc/${init}/cgroup`, 'utf8').catch(() => '');
  const v1 = /^\d+:pids:(.*)$/m.exec(groups)?.[1];
  const v2 = /^0::(.*)$/m.exec(groups)?.[1];
  const file = v1 !== undefined ? join('/sys/fs/cgroup/pids', v1, 'pids.current') : v2 !== undefined ? join('/sys/fs/cgroup', v2, 'pids.current') : undefined;
  const tasks = file ? Number((await readFile(file, 'utf8').catch(() => '')).trim()) : NaN;
  if (!Number.isInteger(tasks)) return false;
  const threads = async (pid: number | undefined) => (pid === undefined ? 0 : Number(/^Threads:\s+(\d+)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? 0));
  return tasks > (await threads(init)) + (await threads(keeper));
}

/** Removes the place's container at once (its volumes never); answers true when it is gone. */
export async function removeContainer(engineName: EngineName, name: string): Promise<boolean> {
  // Its first process waits for nothing and ignores SIGTERM: podman is told not to wait for it to end.
  const result = await run(engineName, ['rm', '-f', ...(engineName === 'podman' ? ['-t', '0'] : []), name], { timeoutMs: 60_000 });
  return result.exitCode === 0 || (await containerState(engineName, name)) === undefined;
}

/** The container's state as its engine says it (`running`, `exited`, …); undefined when there is none of that name. */
export async function containerState(engineName: EngineName, name: string): Promise<string | undefined> {
  const result = await run(engineName, ['container', 'inspect', '--format', '{{.State.Status}}', name], { timeoutMs: 30_000 });
  return result.exitCode === 0 ? result.stdout.trim() || undefined : undefined;
}

/** Every flume container on this host, by its name, in one look (`ps --filter label=flume.place`); undefined when the engine did not answer. */
export async function listContainers(engineName: EngineName): Promise<Map<string, { place: string; state: string }> | undefined> {
  const result = await run(engineName, ['ps', '-a', '--filter', `label=${PLACE_LABEL}`, '--format', 'json'], { timeoutMs: 30_000 });
  if (result.exitCode !== 0) return undefined;
  // podman prints one array; docker one object a line, its labels as "k=v,k=v".
  const text = result.stdout.trim();
  let rows: Array<{ Names?: string | string[]; State?: string; Labels?: string | Record<string, string> }>;
  try {
    rows = text.startsWith('[') ? JSON.parse(text) : text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return undefined;
  }
  const found = new Map<string, { place: string; state: string }>();
  for (const row of rows) {
    const name = Array.isArray(row.Names) ? row.Names[0] : row.Names;
    const labels = typeof row.Labels === 'string' ? Object.fromEntries(row.Labels.split(',').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) : (row.Labels ?? {});
    const place = labels[PLACE_LABEL];
    if (name && place) found.set(name, { place, state: (row.State ?? '').toLowerCase() });
  }
  return found;
}

/**
 * What a place's container mounts, each at the same path inside as outside: the worktree; over its
 * `.git`, flume's file naming the place's own repository (read-only); that repository; the host's
 * objects, read-only, for it to borrow; the agent's home; then the config's mounts. The host's git
 * folder itself is not mounted: nothing of it (refs, hooks, config, other worktrees) is the agent's.
 */
function mountArgs(spec: ContainerSpec, place: ContainerPlace): string[] {
  const container = { name: containerName(place), home: place.home };
  const own = [
    `${place.path}:${place.path}`,
    `${containerGitFile(container)}:${join(place.path, '.git')}:ro`,
    `${containerGitDir(container)}:${containerGitDir(container)}`,
    `${hostObjects(place.commonDir)}:${hostObjects(place.commonDir)}:ro`,
    `${place.home}:${place.home}`,
  ];
  if (allowlist(spec)) own.push(`${proxyDir(container)}:${proxyDir(container)}:ro`);
  return [...own, ...extraMounts(spec)].flatMap((volume) => ['-v', volume]);
}

/**
 * Tells the container's proxy (proxy-main.ts, started before the container) which init it lives with
 * (its pid and start, in `init`: the proxy ends once that process is gone), and waits for it to
 * listen (within 10 s). Answers whether it does.
 */
async function proxyListens(engineName: EngineName, name: string, socket: string, init: string): Promise<boolean> {
  const first = await run(engineName, ['container', 'inspect', '--format', '{{.State.Pid}}', name], { timeoutMs: 30_000 });
  const pid = first.stdout.trim();
  const start = (await statFields(Number(pid)))?.[19];
  if (!start) return false;
  writeFileSync(`${init}.tmp`, `${pid} ${start}\n`);
  renameSync(`${init}.tmp`, init);
  for (let waited = 0; waited < 10_000; waited += 25) {
    if (existsSync(socket)) return true;
    await new Promise((done) => setTimeout(done, 25));
  }
  return false;
}

/** The built proxy program: beside this file, or (run from the TypeScript source, as tests do) in dist/. */
function proxyMain(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? join(dirname(here), '..', '..', '..', 'dist', 'core', 'engine', 'container', 'proxy-main.js') : join(dirname(here), 'proxy-main.js');
}


/** The engine's `--network`: none under an allowlist (the proxy is its only way out), else the word the config gives. */
function networkArgs(spec: ContainerSpec): string[] {
  if (spec.network === undefined) return [];
  return ['--network', typeof spec.network === 'string' ? spec.network : 'none'];
}

/** The hosts a container under an allowlist reaches; undefined for one that has none. */
export function allowlist(spec: ContainerSpec): string[] | undefined {
  return typeof spec.network === 'object' ? spec.network.allow : undefined;
}

function engine(spec: ContainerSpec, args: string[], timeoutMs: number) {
  return run(spec.engine, args, { timeoutMs });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

