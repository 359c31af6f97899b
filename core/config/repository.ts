/**
 * Opens a repository for a command: finds it, loads its config, applies the preset and the config's
 * plugins, and checks that every stage names a deliverable and agent some plugin provides.
 */
import { flumeError } from '../api/errors.js';
import { tappedKeys } from '../api/hooks.js';
import { findRepository, type RepositoryInfo } from '../support/git.js';
import { createFlume, type Flume, type FlumePlugin } from '../api/plugin.js';
import { missingMethods } from '../drivers/reach.js';
import { optionProblems } from './driver-options.js';
import { configError, kindDurationProblems, type ConfigProblem } from './validate.js';
import { sharedBranch } from './branch-overlap.js';
import type { KindDef } from '../api/config.js';
import type { Logger } from '../api/plugin.js';

/** A repository opened for a command. */
export interface Repository {
  info: RepositoryInfo;
  flume: Flume;
  /** The config file, when the repository has one. */
  configFile?: string;
  /** Every plugin applied, in order, with where it came from: `built-in` (the preset) or the file it was loaded from. */
  plugins?: Array<{ name: string; from: string }>;
}

/**
 * Opens the repository containing `dir` with the preset's plugins then the config's. Its config runs
 * only when the user trusted it as it is now (UNTRUSTED_CONFIG otherwise), and only after a child
 * process loaded it within the time limit (CONFIG_HUNG otherwise): see config/trust.ts, config/guard.ts.
 */
export async function openRepository(dir: string, preset: FlumePlugin[], logger?: Logger): Promise<Repository> {
  return openRepositoryAt(await findRepository(dir), preset, logger);
}

/**
 * As `openRepository`, for a repository already found (status has found it: no second git process).
 * With `configWaitMs`, a config whose probe has not answered by then is refused with CONFIG_LOADING
 * and goes on being probed in the background.
 */
export async function openRepositoryAt(info: RepositoryInfo, preset: FlumePlugin[], logger?: Logger, options: { configWaitMs?: number } = {}): Promise<Repository> {
  const { requireTrust } = await import('./trust.js');
  // One read of the config: trust checks its digest, and the probe and the load run that very text.
  const found = await requireTrust(info.root);
  if (found) await (await import('./probe/guard.js')).guardConfig(info.root, found, { waitMs: options.configWaitMs });
  const { loadConfig } = await import('./load.js');
  const loaded = await loadConfig(info.root, found);
  const flume = await createFlume({ plugins: [...preset, ...loaded.plugins], config: loaded.config, root: info.root, logger });
  const problems = checkProvided(flume);
  if (problems.length) throw configError(loaded.file ?? `${info.root} (built-in kinds)`, problems);
  const plugins = [
    ...preset.map((plugin) => ({ name: plugin.name, from: 'built-in' })),
    ...loaded.plugins.map((plugin, i) => ({ name: plugin.name, from: loaded.origins[i] ?? loaded.file ?? info.root })),
  ];
  return { info, flume, configFile: loaded.file, plugins };
}

/** The kind named `name`, or UNKNOWN_KIND listing the kinds there are. */
export function kindOf(flume: Flume, name: string): KindDef {
  const kind = flume.kinds.get(name);
  if (kind) return kind;
  const known = flume.kinds.all().map((k) => k.name);
  throw flumeError('UNKNOWN_KIND', { kind: JSON.stringify(name), known: known.join(', ') || '(none)' }, {
    details: { kind: name, known },
  });
}

/** The deliverable type and options a stage names. */
export function deliverableOf(stage: KindDef['stages'][number]): { type: string; [key: string]: unknown } {
  return typeof stage.deliverable === 'string' ? { type: stage.deliverable } : stage.deliverable;
}

/**
 * The driver key a stage runs: the stage's, then the config's `agent.driver`, then the preset's
 * default; undefined when none names one.
 */
export function driverOf(flume: Flume, stage: KindDef['stages'][number]): string | undefined {
  return stage.agent ?? flume.config.agent?.driver ?? flume.defaults.driver;
}

function checkProvided(flume: Flume): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const declared = new Map((flume.config.kinds ?? []).map((kind, index) => [kind.name, index]));
  for (const kind of flume.kinds.all()) {
    const at = declared.has(kind.name) ? `kinds[${declared.get(kind.name)}]` : `kind ${kind.name}`;
    // A kind a plugin registers was checked by no loader: its durations are checked here.
    problems.push(...kindDurationProblems(kind, at));
    kind.stages.forEach((stage, index) => {
      const { type } = deliverableOf(stage);
      if (!flume.hooks.readDeliverable.get(type)?.isUsed()) {
        const known = tappedKeys(flume.hooks.readDeliverable);
        problems.push({ path: `${at}.stages[${index}].deliverable`, message: `no plugin reads the deliverable "${type}"`, fix: `use one of ${known.join(', ') || '(none)'}, or add the plugin that provides it` });
      }
      const driver = driverOf(flume, stage);
      const known = flume.agents.all().map((a) => a.key).join(', ') || '(none)';
      if (driver === undefined) {
        problems.push({ path: `${at}.stages[${index}].agent`, message: 'no agent is named for the stage, and no plugin sets a default', fix: `name one (stage "agent" or the config's agent.driver): ${known}` });
      } else if (flume.agents.all().length && !flume.agents.get(driver)) {
        problems.push({ path: `${at}.stages[${index}].agent`, message: `no plugin provides the agent "${driver}"`, fix: `use one of ${known}` });
      }
    });
  }
  problems.push(...driverProblems(flume), ...hostProblems(flume));
  problems.push(...sharedBranches(flume, declared));
  return problems;
}

/**
 * A registered driver that lacks a method the core calls, and a config's `agents[<key>]` its driver's
 * `optionsSchema` refuses: both found when the repository opens, before any place is made.
 */
function driverProblems(flume: Flume): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const driver of flume.agents.all()) {
    const lacks = missingMethods(driver);
    if (lacks.length) {
      problems.push({ path: `agent ${driver.key}`, message: `the driver registered by ${flume.agents.owner(driver.key)} has no ${lacks.join(', ')}`, fix: 'give the driver every method of AgentDriver (write it with defineDriver)' });
    }
  }
  for (const [key, options] of Object.entries(flume.config.agents ?? {})) {
    const driver = flume.agents.get(key);
    if (driver?.optionsSchema) problems.push(...optionProblems(key, driver.optionsSchema, options, flume.agents.owner(key)!));
  }
  return problems;
}

/** A config's `agent.host` that no plugin provides: a third-party host is chosen by its key, as a built-in is. */
function hostProblems(flume: Flume): ConfigProblem[] {
  const wanted = flume.config.agent?.host;
  if (wanted === undefined || wanted === 'auto' || flume.hosts.get(wanted)) return [];
  const known = ['auto', ...flume.hosts.all().map((host) => host.key)];
  return [{ path: 'agent.host', message: `no plugin provides the pane host "${wanted}"`, fix: `use one of ${known.join(', ')}, or add the plugin that provides it` }];
}

/**
 * Two kinds whose branch patterns can make one branch: each would take the other's branch for its
 * own (a launch of one refused, or worse, undoing the other's), so the config is refused instead.
 */
function sharedBranches(flume: Flume, declared: Map<string, number>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const kinds = flume.kinds.all().map((kind) => ({ name: kind.name, pattern: kind.branch ?? `${kind.name}/{name}` }));
  kinds.forEach((second, j) => {
    for (const first of kinds.slice(0, j)) {
      const branch = sharedBranch(first.pattern, second.pattern);
      if (branch === undefined) continue;
      // The path points at a declared kind when there is one: that is what the repository can change.
      const at = declared.has(second.name) ? `kinds[${declared.get(second.name)}].branch` : declared.has(first.name) ? `kinds[${declared.get(first.name)}].branch` : `kind ${second.name}.branch`;
      problems.push({
        path: at,
        message: `the kinds "${first.name}" (branch "${first.pattern}") and "${second.name}" (branch "${second.pattern}") can make the same branch, for example ${branch}`,
        fix: 'give each kind a branch pattern no other kind can make, for example "<kind>/{name}"',
      });
    }
  });
  return problems;
}
