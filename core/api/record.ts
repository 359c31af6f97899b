/**
 * The state record flume keeps of each place (one JSON file per place in the repository's git
 * folder): its phase, its readiness, the stage under way and the stages before it.
 */
import type { AgentHandle, AgentUsage } from './agent.js';

/** Where a place stands in its life; `making` and `tidying` are the two-phase writes crash recovery reads. */
export type PlacePhase = 'making' | 'made' | 'tidying' | 'gone';

/** What readying a place came to. */
export interface ReadyRecord {
  state: 'none' | 'ready' | 'failed';
  at: string;
  /** The failed step, when one failed: its label, exit code and the tail of its output. */
  failed?: { step: string; exitCode: number | null; tail: string };
}

/** The stage's prompt delivery, as status reports it. */
export type DeliveryState = 'sending' | 'taken' | 'unknown' | 'never-started';

/** The state of the current stage, as status reports it. */
export type StageState =
  | 'starting'
  | 'working'
  | 'waiting'
  | 'stuck'
  | 'over-budget'
  | 'never-started'
  | 'delivered'
  | 'not-ready'
  | 'done';

/** The current stage of a place, as recorded. */
export interface StageRecord {
  name: string;
  index: number;
  startedAt: string;
  /** The branch head when the stage began; a `commit` deliverable is a commit after it. */
  startHead: string;
  /** How many times this stage has been started in this place (retry, fix rounds). */
  attempt: number;
  agent?: AgentHandle;
  delivery: DeliveryState;
  /** Sendings of the prompt so far (at most two). */
  sends: number;
  /** When the prompt was last sent (ISO); unset while the agent has not yet accepted input. */
  lastSentAt?: string;
  /**
   * When the agent last showed it holds the prompt queued (ISO; PromptState `held`): the time to
   * take it is counted from then, so the moment between the program submitting what it held and its
   * record holding it is never read as a prompt not taken.
   */
  heldAt?: string;
  /** The prompt as sent, so the transcript can be searched for it. */
  prompt: string;
  /** Recorded when the agent stopped short: what it needs. */
  waiting?: { needs: string; at: string };
  /** Recorded when the stage went quiet past the limit. */
  stuck?: { since: string; at: string };
  /**
   * Recorded when the stage's tokens passed `limits.tokens`: the figures then, and whether flume
   * stopped its agent for it (the kind's `onBudget: 'stop'`); otherwise it waits for the operator.
   */
  overBudget?: { at: string; tokens: number; limit: number; stopped?: boolean };
  /** Recorded when the deliverable was read present. */
  delivered?: { at: string; head: string; what: string };
  /** Rounds of `fix` verdicts sent back to code. */
  fixRounds?: number;
  /** The deliverable this run of the stage ends on, when not the stage's own (a fix round ends on a commit). */
  deliverable?: { type: string; [key: string]: unknown };
  /** The deliverable as it already stood when the stage began: only a different one ends the stage. */
  presentAtStart?: string;
  /** This start follows one cut before its agent was noted (a crash): one cut too is not started again. */
  afterCut?: boolean;
}

/** A place's live record: `<git-common-dir>/flume/places/<kind>--<name>.json`. */
/** What a place's container is made of: `agent.container` in the config, or `launch --container`. */
export interface ContainerSpec {
  engine: 'podman' | 'docker';
  image: string;
  /** Folders of this machine mounted at the same path inside (`PATH`, or `PATH:ro` read-only). */
  mounts?: string[];
  /** Variables the agent is given inside. */
  env?: Record<string, string>;
  /**
   * What the container reaches: `{ allow }`, only those hosts (`host:port`) through flume's proxy;
   * `none`, nothing; any other word, the engine's network of that name (`--network`).
   */
  network?: string | { allow: string[] };
}

/** A place's container: what it is made of, its name, and the agent's home (mounted at the same path). */
export interface PlaceContainer extends ContainerSpec {
  name: string;
  home: string;
  /** The repository's git folder (whose objects the place's own repository borrows, read-only inside; the folder itself is not mounted). */
  gitDir: string;
}

export interface PlaceRecord {
  version: 1;
  /** `<kind>/<name>`. */
  id: string;
  kind: string;
  name: string;
  /** The main checkout's root. */
  repo: string;
  /** The place's folder: `<repo>/places/<kind>--<name>`. */
  path: string;
  branch: string;
  /** The branch the work lands on. */
  target: string;
  /** The commit the branch started at. */
  base: string;
  brief: string;
  createdAt: string;
  /**
   * A random id of the launch that made the place; the first entry of its branch's reflog names it,
   * so a rolled-back launch removes its branch only if this launch made it. Absent in older records.
   */
  launch?: string;
  phase: PlacePhase;
  ready: ReadyRecord;
  stage?: StageRecord;
  /** Set for a place whose agents run in a container of its own. */
  container?: PlaceContainer;
  /** Stages ended, oldest first. */
  history: Array<{ name: string; startedAt: string; endedAt: string; delivered?: string; usage?: AgentUsage }>;
  dropped?: { at: string; reason?: string };
  /** Set when tidying kept the place or its branch, with why. */
  kept?: { at: string; reason: string; branchKept?: boolean };
  /**
   * How it was launched: `start: false` (--no-start) starts no stage until `flume stage` or `flume
   * retry`; `watch: false` (--no-watch) is stepped by its caller, so commands on it start no
   * supervisor. A record without it was launched with both.
   */
  launched?: { start: boolean; watch: boolean };
  /** Set when a stage is refused because readying failed; `flume retry` readies again. */
  held?: { at: string; reason: string };
  /**
   * Set while the place waits for its caller: a kind whose caller starts its stages (`advance:
   * 'caller'`), or a stage that is a gate. `after` the stage that delivered (none before the first),
   * `gate` when one stage's gate holds it; cleared when a stage starts.
   */
  awaits?: { at: string; after?: string; what?: string; gate: boolean };
  /** Set when the work is over because the last stage delivered. */
  finished?: { at: string };
  /**
   * Events written with the record and not yet appended to the logs: the record and its event are
   * one write, so a flume killed between the two loses neither; the next step of the place
   * publishes them (store.ts `publishUnpublished`).
   */
  unpublished?: Array<{ event: string; at: string } & Record<string, unknown>>;
}
