/**
 * A place's container, through the engine's own command line (`podman` or `docker`; no daemon API):
 * the checks made before anything is made, the container made for the place (named after it,
 * labelled `flume.place=<id>`, the worktree, the repository's git folder and the agent's home
 * mounted at the same paths inside as outside), the command a pane runs to start the agent in it,
 * the end of everything run in it, its removal, and every container of a host in one look.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { flumeError } from '../../api/errors.js';
import { run, which } from '../../support/exec.js';
import type { ContainerSpec } from '../../api/record.js';

/** The engines flume drives, by their command. */
export const ENGINES = ['podman', 'docker'] as const;
export type EngineName = ContainerSpec['engine'];
export type { ContainerSpec };

/** The place a container is made for: its id, its worktree, the repository's git folder and the agent's home. */
export interface ContainerPlace {
  id: string;
  path: string;
  commonDir: string;
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
 * Checks, in a container of the image that is removed at once, that what flume relies on holds:
 * git inside finds the repository at the host's git folder, and a file written in a mounted folder
 * inside is the host's file. Refuses with CONTAINER_UNUSABLE otherwise; nothing is left behind.
 */
export async function checkMounts(spec: ContainerSpec, place: Pick<ContainerPlace, 'commonDir' | 'home'>): Promise<void> {
  mkdirSync(place.home, { recursive: true });
  const token = randomUUID();
  const mark = join(place.home, `.flume-mount-${token}`);
  try {
    const script = `git --git-dir "$1" rev-parse --path-format=absolute --git-common-dir && printf %s "$2" > "$3"`;
    const result = await engine(spec, ['run', '--rm', '--pull=never', ...networkArgs(spec), ...mountArgs(spec, place), '--entrypoint', 'sh', spec.image, '-c', script, 'check', place.commonDir, token, mark], 60_000);
    const seen = result.stdout.trim().split('\n').at(-1);
    if (result.exitCode !== 0 || seen !== place.commonDir) {
      throw flumeError('CONTAINER_UNUSABLE', { image: spec.image, folder: place.commonDir, said: firstLine(result.stderr || result.stdout) || 'nothing' }, { variant: 'gitFolder', details: { engine: spec.engine, image: spec.image } });
    }
    if (!existsSync(mark) || readFileSync(mark, 'utf8') !== token) {
      throw flumeError('CONTAINER_UNUSABLE', { image: spec.image, folder: place.home }, { variant: 'home', details: { engine: spec.engine, image: spec.image } });
    }
  } finally {
    rmSync(mark, { force: true });
  }
}

/**
 * Makes the place's container, running (its first process, `sleep infinity`, waits and does nothing,
 * so the container stays while agents come and go); a container of that name already running is the place's (a
 * second start of a stage), one stopped is started again. Answers its name.
 */
export async function makeContainer(spec: ContainerSpec, place: ContainerPlace): Promise<string> {
  const name = containerName(place);
  mkdirSync(place.home, { recursive: true });
  const args = ['run', '-d', '--pull=never', '--name', name, '--label', `${PLACE_LABEL}=${place.id}`, ...networkArgs(spec), ...mountArgs(spec, place), '-w', place.path, '--entrypoint', 'sleep', spec.image, 'infinity'];
  // Made at once where there is none (the common case: one question, not two); else the one there.
  let made = await engine(spec, args, 120_000);
  if (made.exitCode === 0) return name;
  const state = await containerState(spec.engine, name);
  if (state === 'running') return name;
  if (state !== undefined) {
    const started = await engine(spec, ['start', name], 60_000);
    if (started.exitCode === 0) return name;
    await removeContainer(spec.engine, name);
    made = await engine(spec, args, 120_000);
    if (made.exitCode === 0) return name;
  }
  await removeContainer(spec.engine, name);
  throw flumeError('CONTAINER_UNUSABLE', { engine: spec.engine, image: spec.image, said: firstLine(made.stderr || made.stdout) || `exit ${made.exitCode}` }, { variant: 'notMade', details: { engine: spec.engine, image: spec.image, name } });
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
 * made. Only the repository's git folder and the config's mounts are mounted; secrets as execCommand.
 */
export function throwawayCommand(spec: ContainerSpec, place: Pick<ContainerPlace, 'commonDir'>, program: { env: Record<string, string>; argv: string[] }): { argv: string[]; env: Record<string, string> } {
  const all = { ...(spec.env ?? {}), ...program.env };
  const named = Object.entries(all).flatMap(([key, value]) => ['-e', PLAIN(key) ? `${key}=${value}` : key]);
  const env = Object.fromEntries(Object.entries(all).filter(([key]) => !PLAIN(key)));
  const [file, ...rest] = program.argv;
  return { argv: [spec.engine, 'run', '--rm', '--pull=never', ...networkArgs(spec), ...mountArgs(spec, place), ...named, '--entrypoint', file!, spec.image, ...rest], env };
}

/**
 * Ends every program run in the container but its first (which keeps it), by their pids on this
 * machine as the engine lists them (`top`): what a pane's program left running there once its exec
 * ended. Nothing in the image is relied on (no shell, no kill). Answers how many were ended.
 */
export async function endInside(engineName: EngineName, name: string): Promise<number> {
  const first = await run(engineName, ['container', 'inspect', '--format', '{{.State.Pid}}', name], { timeoutMs: 30_000 });
  const main = Number(first.stdout.trim());
  const listed = engineName === 'podman' ? await run(engineName, ['top', name, 'hpid'], { timeoutMs: 30_000 }) : await run(engineName, ['top', name, '-o', 'pid'], { timeoutMs: 30_000 });
  if (listed.exitCode !== 0) return 0;
  const pids = listed.stdout.split('\n').slice(1).map((line) => Number(line.trim())).filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== main);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  return pids.length;
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

function mountArgs(spec: ContainerSpec, place: Partial<ContainerPlace>): string[] {
  const own = [place.path, place.commonDir, place.home].filter((path): path is string => Boolean(path)).map((path) => `${path}:${path}`);
  const extra = (spec.mounts ?? []).map((mount) => {
    const [path, mode] = mount.split(/:(?=ro$|rw$)/);
    return mode ? `${path}:${path}:${mode}` : `${path}:${path}`;
  });
  return [...own, ...extra].flatMap((volume) => ['-v', volume]);
}

function networkArgs(spec: ContainerSpec): string[] {
  return spec.network ? ['--network', spec.network] : [];
}

function engine(spec: ContainerSpec, args: string[], timeoutMs: number) {
  return run(spec.engine, args, { timeoutMs });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

