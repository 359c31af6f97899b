/**
 * What flume knows of a running agent: the handle a driver returns when it starts one, what a reading
 * of it says (its state, a dialog, the turn's end), whether a prompt was taken, and what it spent.
 */

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
   * same id without it belongs to another agent (`ownsPane`, core/api/pane-host.ts).
   */
  paneIdentity?: string;
  /** The agent's process id, when known. */
  pid?: number;
  /**
   * When that process started (`processStart`; flume notes it as the agent starts, where a driver did
   * not): a later process given the same pid is never taken for the agent, signalled or read alive.
   */
  pidStart?: string;
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

/**
 * What a reading of the transcript says of a prompt sent to the agent: `taken` once its record holds
 * it; `held` while the program shows it holds the text queued, to submit by itself once its start or
 * its turn ends (the Gemini CLI): not taken yet, and never to be sent again; `not-yet`; `unknown`
 * while there is no record to read.
 */
export type PromptState = 'taken' | 'held' | 'not-yet' | 'unknown';

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
