/**
 * `flume doctor`: what flume needs on this machine before a first launch, one check a line. The core
 * checks node, git, the repository's config trust and the supervisor; each pane host and each agent
 * driver the repository's kinds use brings its own checks (`checks()` in their contract), so a
 * third-party driver is checked as the built-ins are. Nothing here runs an untrusted config: where
 * a repository's config is not run (untrusted, or it does not load), its agents and hosts are listed
 * as not checked, since they are the config's to name.
 */
import type { ContainerSpec } from '../../api/record.js';
import type { DoctorCheck } from '../../api/pane-host.js';
import { run, which } from '../../support/exec.js';
import { driverOf, openRepository } from '../../config/repository.js';
import { reachDriver } from '../../drivers/reach.js';
import { createFlume, type Flume, type FlumePlugin } from '../../api/plugin.js';
import { findRepository } from '../../support/git.js';
import { trustState } from '../../config/trust.js';
import { lockHolder } from '../../state/lock.js';
import { supervisorLock } from '../supervisor/supervisor-state.js';
import { FlumeError } from '../../api/errors.js';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { hostStateDir } from '../../state/dir.js';

/** What doctor found. */
export interface DoctorReport {
  version: 1;
  /** False when a check a launch needs failed. */
  ok: boolean;
  repo?: string;
  checks: Array<DoctorCheck & { by: string }>;
}

/**
 * The oldest node and git flume is built for (package.json's engines; git 2.38 for
 * `merge-tree --write-tree`, which judges a branch's landing by content).
 */
const NODE_MIN = [20, 19, 0];
const GIT_MIN = [2, 38, 0];

/** Runs every check for the repository at `repo` (or the folder `cwd`'s, default the current one, if it is one). */
export async function doctor(preset: () => Promise<FlumePlugin[]>, options: { repo?: string; cwd?: string } = {}): Promise<DoctorReport> {
  const checks: DoctorReport['checks'] = [];
  const add = (by: string, list: DoctorCheck[]) => checks.push(...list.map((check) => ({ ...check, by })));
  const report = (): DoctorReport => ({ version: 1, ok: checks.every((check) => check.ok || !check.needed), ...(root ? { repo: root } : {}), checks: dedupe(checks) });
  add('flume', [nodeCheck(), await gitCheck()]);
  const root = await findRepository(options.repo ?? options.cwd ?? process.cwd()).then(
    (info) => info.root,
    (error) => {
      if (options.repo !== undefined) throw error;
      return undefined;
    },
  );
  let flume: Flume | undefined;
  // The hosts and agents to check are the config's (its agent program, its config folder): where a
  // config is there but not run (untrusted, or it does not load), they are not checked, rather than
  // checking the built-ins' defaults in their place.
  let unchecked: string | undefined;
  if (root) {
    const trust = await trustState(root);
    const trusted = trust.state === 'trusted' || (trust.state === 'no-config' && trust.record?.file === null);
    add('flume', [trustCheck(root, trust.state, trusted)]);
    if (trusted) {
      try {
        flume = (await openRepository(root, await preset())).flume;
      } catch (error) {
        const failure = error instanceof FlumeError ? error : undefined;
        add('flume', [{ name: 'config', ok: false, needed: true, detail: failure ? `${failure.code} ${failure.message}` : String(error), fix: failure?.fix }]);
        unchecked = 'its config does not load';
      }
    } else if (trust.state !== 'no-config') unchecked = 'its config is not trusted';
  }
  add('flume', [await supervisorCheck()]);
  if (unchecked) {
    add('flume', [{ name: 'agents and pane hosts', ok: false, needed: false, detail: `not checked: ${unchecked}`, fix: 'Fix the repository\'s config (above), then run flume doctor again.' }]);
    add('flume', [await namespaceCheck()]);
    return report();
  }
  flume ??= await createFlume({ plugins: await preset() });
  const wanted = flume.config.agent?.host ?? 'auto';
  for (const host of flume.hosts.all()) {
    if (!host.checks) continue;
    // A host the config does not insist on is a choice among others: missing, it is not needed.
    add(host.key, (await host.checks()).map((check) => ({ ...check, needed: check.needed && wanted === host.key })));
  }
  add('flume', await containerChecks(flume.config.agent?.container, root));
  for (const key of driversUsed(flume)) {
    const driver = reachDriver(flume, key);
    const checks = driver ? await driver.checks() : undefined;
    if (!driver) add('flume', [{ name: `agent ${key}`, ok: false, needed: true, detail: 'no plugin provides it', fix: 'Name an agent a plugin provides, or add the plugin that provides it to the config.' }]);
    else if (checks) add(key, checks);
    else add(key, [{ name: `agent ${key}`, ok: true, needed: false, detail: 'its driver declares no checks; not checked' }]);
  }
  add('flume', [await namespaceCheck()]);
  return report();
}

/**
 * The container engines found here, and, where the config runs agents in containers, whether its
 * engine answers and a container of its image starts (git inside finding the repository, its mounts
 * writing through): what a launch checks first. Without `agent.container`, none is needed.
 */
async function containerChecks(configured: ContainerConfig | undefined, root: string | undefined): Promise<DoctorCheck[]> {
  const { checkEngine, checkMounts, engineVersion, ENGINES } = await import('../container/engine.js');
  const found: DoctorCheck[] = [];
  for (const engine of ENGINES) {
    if (!which(engine) || (configured && (configured.engine ?? (which('podman') ? 'podman' : 'docker')) === engine)) continue;
    const out = await run(engine, ['version', '--format', '{{.Client.Version}}'], { timeoutMs: 30_000 });
    found.push({ name: `container engine ${engine}`, ok: out.exitCode === 0, needed: false, detail: out.exitCode === 0 ? out.stdout.trim() : `does not answer: ${(out.stderr || out.stdout).trim().split('\n')[0]}`, ...(out.exitCode === 0 ? { version: out.stdout.trim() } : {}) });
  }
  if (!configured) return found;
  // Checked as a launch makes it: with no network set, through the proxy (the image's node needed).
  const spec: ContainerSpec = { ...configured, engine: configured.engine ?? (which('podman') ? 'podman' : 'docker'), network: (configured.network as ContainerSpec['network']) ?? { allow: [] } };
  const name = `container engine ${spec.engine}`;
  try {
    await checkEngine(spec);
    const version = (await engineVersion(spec.engine)) ?? 'its version unread';
    found.push({ name, ok: true, needed: true, detail: `${version}, image ${spec.image} here`, version });
  } catch (error) {
    const refusal = error as FlumeError;
    found.push({ name, ok: false, needed: true, detail: refusal.message, ...(refusal.fix ? { fix: refusal.fix } : {}) });
    return found;
  }
  if (!root) return found;
  const { commonDir } = await findRepository(root);
  const home = join(hostStateDir(), 'homes', `.check-${randomUUID()}`);
  try {
    await checkMounts(spec, { commonDir, home });
    found.push({ name: 'a container starts', ok: true, needed: true, detail: `${spec.image}: git inside finds ${commonDir}; its mounts write through` });
  } catch (error) {
    const refusal = error as FlumeError;
    found.push({ name: 'a container starts', ok: false, needed: true, detail: refusal.message, ...(refusal.fix ? { fix: refusal.fix } : {}) });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return found;
}

type ContainerConfig = NonNullable<NonNullable<Flume['config']['agent']>['container']>;

/** The agent drivers the repository's kinds run (a stage naming none runs the config's or the preset's default). */
function driversUsed(flume: Flume): string[] {
  const keys = new Set(flume.kinds.all().flatMap((kind) => kind.stages.flatMap((stage) => driverOf(flume, stage) ?? [])));
  return [...keys];
}

/** The same check given by two drivers (Claude Code under `claude-code` and `printed`) is listed once. */
function dedupe(checks: DoctorReport['checks']): DoctorReport['checks'] {
  const seen = new Set<string>();
  return checks.filter((check) => {
    const key = `${check.name}\0${check.detail}\0${check.ok}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function atLeast(version: number[], min: number[]): boolean {
  for (let i = 0; i < min.length; i++) if ((version[i] ?? 0) !== min[i]) return (version[i] ?? 0) > min[i];
  return true;
}

function nodeCheck(): DoctorCheck {
  const version = process.versions.node.split('.').map(Number);
  const ok = atLeast(version, NODE_MIN);
  return { name: 'node', ok, needed: true, detail: process.versions.node, version: process.versions.node, ...(ok ? {} : { fix: `Install node ${NODE_MIN.join('.')} or newer.` }) };
}

async function gitCheck(): Promise<DoctorCheck> {
  const fix = `Install git ${GIT_MIN.join('.')} or newer.`;
  if (!which('git')) return { name: 'git', ok: false, needed: true, detail: 'not found on PATH', fix };
  const out = await run('git', ['--version']);
  const found = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(out.stdout);
  const version = found ? [Number(found[1]), Number(found[2]), Number(found[3] ?? 0)] : undefined;
  const ok = Boolean(version && atLeast(version, GIT_MIN));
  return { name: 'git', ok, needed: true, detail: version ? version.join('.') : out.stdout.trim() || 'its version could not be read', ...(version ? { version: version.join('.') } : {}), ...(ok ? {} : { fix }) };
}

function trustCheck(root: string, state: string, trusted: boolean): DoctorCheck {
  const detail = trusted ? `${root}: trusted` : state === 'no-config' ? `${root}: no config, not trusted` : `${root}: config ${state === 'changed' ? 'changed since it was trusted' : 'not trusted'}`;
  // A repository without a config launches untrusted (Claude Code then asks its own folder question).
  const needed = state === 'untrusted' || state === 'changed';
  const fix = state === 'no-config'
    ? `\`flume trust --repo ${root}\` lets flume answer Claude Code's "trust this folder" question for its places; otherwise Claude Code asks in the pane.`
    : `Read its config, then \`flume trust --repo ${root}\`.`;
  return { name: 'repository trust', ok: trusted, needed, detail, ...(trusted ? {} : { fix }) };
}

async function supervisorCheck(): Promise<DoctorCheck> {
  const holder = await lockHolder(supervisorLock());
  if (holder?.alive) return { name: 'supervisor', ok: true, needed: false, detail: `running${holder.pid ? ` (pid ${holder.pid})` : ''}` };
  return { name: 'supervisor', ok: false, needed: false, detail: 'none running', fix: 'A launch starts one; or run `flume watch` yourself.' };
}

/** Whether this machine can make the network namespace flume's own tests run in (for developers of flume). */
async function namespaceCheck(): Promise<DoctorCheck> {
  const name = 'network namespace (flume\'s own tests)';
  if (!which('unshare')) return { name, ok: false, needed: false, detail: 'unshare not found', fix: 'Install util-linux to run flume\'s tests.' };
  for (const flags of ['-n', '-rn']) {
    if ((await run('unshare', [flags, 'true'], { timeoutMs: 5000 })).exitCode === 0) return { name, ok: true, needed: false, detail: `unshare ${flags} works` };
  }
  return { name, ok: false, needed: false, detail: 'neither unshare -n nor unshare -rn works here', fix: 'Run flume\'s tests as root, or where user namespaces are allowed.' };
}
