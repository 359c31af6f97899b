/**
 * Where the conformance checks run: one throwaway repository for the suite, and for each scenario one
 * place made and stepped by flume's own engine (`makePlace`, `advance`), with the harness's driver
 * and host registered in a flume instance of the scenario's own. Host state (the trust file, the list
 * of repositories) goes to a folder of the suite's own, never the user's.
 */
import { mkdtempSync, realpathSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFlume, definePlugin, type Flume } from '../api/plugin.js';
import { defineDeliverable } from '../api/deliverable.js';
import { findRepository, initRepository } from '../support/git.js';
import { trustRepository } from '../config/trust.js';
import { readRecord } from '../state/store.js';
import { processRunning, signalQuietly, waitGone } from '../support/process.js';
import { makePlace } from '../engine/launch/launch.js';
import { advance } from '../engine/stage/step.js';
import type { Repository } from '../config/repository.js';
import { ownsPane } from '../api/pane-host.js';
import { reachDriver, type ReachedDriver } from '../drivers/reach.js';
import type { AgentDriver } from '../api/driver.js';
import type { AgentHandle } from '../api/agent.js';
import type { FlumeConfig } from '../api/plugin.js';
import type { PlaceRecord } from '../api/record.js';
import { timeoutsOf, type ConformanceHarness, type ConformanceScenario, type ScenarioSetup } from './harness.js';

/** How long close waits for a place still being made before leaving it to end itself, ms. */
const PENDING_PLACE_MS = 15_000;
const PENDING: unique symbol = Symbol('pending');

/** The kind every conformance place is made of: one stage whose prompt is the brief, ended by nothing. */
export const CONFORMANCE_KIND = 'conformance';
const NEVER = 'conformance-never';

/** One scenario's place, made and stepped once (its first prompt sent, resent, or given up on). */
export interface Place {
  scenario: ConformanceScenario;
  repository: Repository;
  key: string;
  /** The stage's prompt (the brief). */
  prompt: string;
  setup: ScenarioSetup;
  driver: ReachedDriver;
  /** What the first `advance` threw, if it threw (a start the driver refused). */
  error?: unknown;
  /** What the driver answered, method by method, while flume's step made and stepped the place. */
  calls: DriverCall[];
  /** The place's record as it is now. */
  record(): Promise<PlaceRecord>;
  /** The stage's agent handle, once the record has one. */
  handle(): Promise<AgentHandle | undefined>;
}

/** The suite's folder, its repository and its places, made as the checks first ask for them. */
export class Bench {
  private root?: string;
  private repo?: string;
  private savedStateDir?: string | undefined;
  private readonly places = new Map<ConformanceScenario, Promise<Place>>();

  constructor(readonly harness: ConformanceHarness) {}

  /** The scenario's place, made and stepped the first time it is asked for. */
  place(scenario: ConformanceScenario): Promise<Place> {
    let place = this.places.get(scenario);
    if (!place) this.places.set(scenario, (place = this.make(scenario)));
    return place;
  }

  /** Ends every agent the suite started, then what each scenario set up, then the suite's folder. */
  async close(): Promise<void> {
    try {
      await this.closePlaces();
    } finally {
      // A host made for the suite (flume/testing's testHost) ends with it.
      await (this.harness.host as { end?: () => Promise<void> }).end?.();
    }
  }

  private async closePlaces(): Promise<void> {
    for (const made of this.places.values()) {
      // A place still being made (a check the test runner timed out goes on in the background) is
      // waited for a while, then left to end itself once made: close must not wait on a hung check,
      // or the runner times close out too and nothing is ended.
      const place = await Promise.race([made.catch(() => undefined), sleep(PENDING_PLACE_MS).then((): typeof PENDING => PENDING)]);
      if (place === PENDING) {
        void made.then((late) => this.endPlace(late), () => undefined);
        continue;
      }
      if (place) await this.endPlace(place);
    }
    this.places.clear();
    if (this.root) {
      if (this.savedStateDir === undefined) delete process.env.FLUME_STATE_DIR;
      else process.env.FLUME_STATE_DIR = this.savedStateDir;
      rmSync(this.root, { recursive: true, force: true, maxRetries: 5 });
      this.root = undefined;
    }
  }

  /** Ends the place's agent, then what its scenario set up. */
  private async endPlace(place: Place): Promise<void> {
    const handle = await place.handle().catch(() => undefined);
    if (handle) await endAgent(this.harness, place.driver, handle);
    await place.setup.close?.();
  }

  private async folder(): Promise<{ root: string; repo: string }> {
    if (this.root && this.repo) return { root: this.root, repo: this.repo };
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'flume-conformance-')));
    const repo = join(root, 'repo');
    mkdirSync(repo);
    // flume's host state (trust, the list of repositories) is read from FLUME_STATE_DIR at each use:
    // pointed at the suite's own folder while it runs, so the user's is never written.
    this.savedStateDir = process.env.FLUME_STATE_DIR;
    process.env.FLUME_STATE_DIR = join(root, 'state');
    this.root = root;
    await initRepository(repo);
    // A repository the user trusted: flume lets a driver pre-seed its agent's own folder trust there.
    await trustRepository(repo);
    this.repo = repo;
    return { root, repo };
  }

  private async make(scenario: ConformanceScenario): Promise<Place> {
    const { root, repo } = await this.folder();
    const setup = await this.harness.scenario(scenario, { root, repo });
    // What the scenario set up is ended here when no place comes of it; close() ends it otherwise.
    return this.placeFor(scenario, repo, setup).catch(async (error: unknown) => {
      await setup.close?.();
      throw error;
    });
  }

  private async placeFor(scenario: ConformanceScenario, repo: string, setup: ScenarioSetup): Promise<Place> {
    const calls: DriverCall[] = [];
    const repository: Repository = { info: await findRepository(repo), flume: await flumeFor(this.harness, setup, calls) };
    const driver = reachDriver(repository.flume, this.harness.agent);
    if (!driver) {
      throw new Error(`conformance: the plugins of scenario "${scenario}" register no driver "${this.harness.agent}" (they register: ${repository.flume.agents.all().map((d) => d.key).join(', ') || 'none'})`);
    }
    // Three lines, as a stage's prompt has several: an agent may show such a paste folded in its box
    // (OpenCode: `[Pasted ~3 lines]`), and a second sending must still find it there.
    const prompt = `Conformance check (${scenario}).\nReply in one short line.\n${randomBytes(4).toString('hex')}`;
    const record = await makePlace(repository, { kind: CONFORMANCE_KIND, name: scenario, brief: prompt, watch: false });
    const key = `${record.kind}--${record.name}`;
    const { commonDir } = repository.info;
    const current = async () => (await readRecord(commonDir, key)) ?? record;
    const place: Place = { scenario, repository, key, prompt, setup, driver, calls: [], record: current, handle: async () => (await current()).stage?.agent };
    // The engine's own step: it starts the agent, sends the prompt, confirms it, sends it once more,
    // or gives up on it, exactly as flume does for every stage.
    place.error = await advance(repository, key).then(() => undefined, (error: unknown) => error);
    // What the checks ask the driver afterwards is theirs, not the step's.
    place.calls = calls.splice(0);
    return place;
  }
}

/** One answer the driver gave: the method, what it was asked (in short), and what it answered. */
export interface DriverCall {
  method: string;
  asked: string;
  answer: string;
}

/** The driver methods whose answers a failure reports (start's handle is in the stage's record). */
const OBSERVED = new Set(['waitForInput', 'send', 'resend', 'confirm', 'read', 'hasDraft', 'stop']);

/** The driver as registered, each observed method's answer noted in `calls` as it comes. */
function observed(driver: AgentDriver, calls: DriverCall[]): AgentDriver {
  return new Proxy(driver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !OBSERVED.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const note = (answer: string) => calls.push({ method: property, asked: askedOf(property, args), answer });
        try {
          const answer: unknown = value.apply(target, args);
          if (!(answer instanceof Promise)) return (note(answerOf(answer)), answer);
          return answer.then(
            (resolved: unknown) => (note(answerOf(resolved)), resolved),
            (error: unknown) => (note(`threw ${describeError(error)}`), Promise.reject(error)),
          );
        } catch (error) {
          note(`threw ${describeError(error)}`);
          throw error;
        }
      };
    },
  });
}

function askedOf(method: string, args: unknown[]): string {
  if (method === 'waitForInput') return `handle, ${String(args[1])}`;
  if (method === 'send' || method === 'resend') return 'handle, text';
  if (method === 'confirm') return '{ handle, text, since }';
  if (method === 'stop') return args[1] === undefined ? 'handle' : `handle, ${JSON.stringify(args[1])}`;
  return 'handle';
}

function answerOf(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

function describeError(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

/** A flume instance with the kit's kind and the harness's driver and host, limited as the harness asks. */
async function flumeFor(harness: ConformanceHarness, setup: ScenarioSetup, calls: DriverCall[]): Promise<Flume> {
  const timeouts = timeoutsOf(harness);
  const kit = definePlugin({
    name: 'flume:testing:conformance',
    apply(flume) {
      flume.kinds.add({
        name: CONFORMANCE_KIND,
        description: 'The driver conformance kit: one stage, its prompt the brief, ended by nothing.',
        stages: [{ name: 'work', prompt: '{brief}', deliverable: NEVER, agent: harness.agent }],
      });
      flume.deliverables.add(defineDeliverable({ type: NEVER, read: async () => ({ present: false }) }));
      // Last of the plugins: the driver under test is registered again observed, in its own plugin's
      // name, so a failure can say which method answered what.
      const driver = flume.agents.get(harness.agent);
      if (driver) flume.agents.register(flume.agents.owner(harness.agent)!, observed(driver, calls), { replace: true });
      // The harness's plugins may bring the host themselves.
      if (!flume.hosts.get(harness.host.key)) flume.hosts.add(harness.host);
    },
  });
  // The host is the harness's, whatever its key: the schema's list of hosts names only the built-ins.
  const config = {
    ...setup.config,
    agent: { ...setup.config?.agent, host: harness.host.key, driver: harness.agent },
    limits: { ...setup.config?.limits, startTimeout: `${timeouts.startMs}ms`, promptTimeout: `${timeouts.promptMs}ms` },
  };
  return createFlume({ plugins: [...setup.plugins, kit], config: config as FlumeConfig });
}

/** Ends an agent whatever the driver does: its own stop first, then the process, so none outlives the suite. */
export async function endAgent(harness: ConformanceHarness, driver: ReachedDriver, handle: AgentHandle): Promise<void> {
  await driver.stop(handle, { hangUp: true }).catch(() => undefined);
  const pid = await pidOf(harness, handle);
  if (pid !== undefined && processRunning(pid)) {
    signalQuietly(pid, 'SIGKILL');
    await waitGone(pid, 2000);
  }
  // A pane that is no longer the agent's is another's: left alone.
  if (handle.pane && (await ownsPane(harness.host, handle).catch(() => false))) await harness.host.close(handle.pane).catch(() => undefined);
}

/** The agent's pid: the handle's, else the harness's answer. */
export async function pidOf(harness: ConformanceHarness, handle: AgentHandle): Promise<number | undefined> {
  return handle.pid ?? (await harness.pidOf?.(handle));
}
