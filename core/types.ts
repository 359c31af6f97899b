/**
 * The shapes every part of flume shares: a place's record, the agent driver contract, deliverable
 * readings. Config shapes derive from the config schema (config/schema.ts) and are re-exported here.
 */
import type { FlumeConfig, KindDef, StageDef, ReadyStep } from './config/schema.js';

export type { FlumeConfig, KindDef, StageDef, ReadyStep };

/** Where a place stands in its life; `making` and `tidying` are the two-phase writes crash recovery reads. */
export type PlacePhase = 'making' | 'made' | 'tidying' | 'gone';

/** What readying a place came to. */
export interface ReadyRecord {
  state: 'none' | 'ready' | 'failed';
  at: string;
  /** The failed step, when one failed: its label, exit code and the tail of its output. */
  failed?: { step: string; exitCode: number | null; tail: string };
}

/** The agent of a stage, as flume started it. Persisted in the place's record. */
export interface AgentHandle {
  /** The driver's key, e.g. `claude-code`. */
  driver: string;
  /** The session id flume gave the agent; its transcript is named after it. */
  sessionId: string;
  /** Where it runs: `tmux`, `herdr`, or `printed` (a command the operator runs). */
  host: string;
  /** The agent program's version as it reports it (`2.1.332`), when it does; picks the driver's patterns. */
  version?: string;
  /** The pane on that host, when there is one. */
  pane?: string;
  /**
   * The identity the host gave the pane at open (tmux: a pane option `@flume-pane`). A pane at the
   * same id without it belongs to another agent (core/agent.ts ownsPane).
   */
  paneIdentity?: string;
  /** The agent's process id, when known. */
  pid?: number;
  /** The transcript's path, once found. */
  transcriptPath?: string;
  /** The exact command that starts the agent (shown by the printed host). */
  command?: string[];
  /** The folder the agent runs in. */
  cwd: string;
  startedAt: string;
  /** What the driver needs to find the agent again (Claude Code: its config folder). */
  data?: Record<string, string>;
}

/** Tokens an agent's model read and wrote, as its own record counts them. */
export interface TokenCounts {
  /** Input tokens not read from or written to the prompt cache. */
  input: number;
  output: number;
  /** Input tokens read from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number;
}

/**
 * What an agent used, as its own record says (a driver's `usage`): tokens by model, how many replies
 * they came from, and a cost only where the record itself states one for all of them.
 */
export interface AgentUsage {
  /** Tokens by model id as the record names it (`claude-sonnet-4-5`). */
  models: Record<string, TokenCounts>;
  /** Model replies counted, each once. */
  replies: number;
  /** A cost the agent recorded itself, covering every reply counted (Claude Code: its `cost-state` line). */
  recordedCost?: { amount: number; currency: string };
}

/** What a reading of the transcript says of a prompt sent to the agent. */
export type PromptState = 'taken' | 'not-yet' | 'unknown';

/** The agent's state, read from its own record (and, for dialogs, its screen). */
export type AgentState = 'not-up' | 'starting' | 'idle' | 'working' | 'asking' | 'exited';

/** One reading of an agent. */
export interface AgentReading {
  state: AgentState;
  /** What an agent that stopped short needs, in its own words (its last text, or its open question). */
  needs?: string;
  /** The dialog open on it, when asking: a question, a permission prompt, or the agent's folder-trust question. */
  dialog?: 'question' | 'permission' | 'trust';
  /** When its transcript last grew (ISO). */
  lastActivity?: string;
  /** True when its last turn ended (the agent is waiting for input). */
  turnEnded?: boolean;
  /** True when the handle's pane is no longer its own (closed, or its id now another agent's): status names no pane. */
  paneGone?: boolean;
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
}

/** A place's live record: `<git-common-dir>/flume/places/<kind>--<name>.json`. */
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
  /** Set when the work is over because the last stage delivered. */
  finished?: { at: string };
}

/** A minimal logger handed to plugins; only the CLI decides where lines go. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}
