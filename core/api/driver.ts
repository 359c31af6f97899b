/**
 * The contract a third party implements to run an agent program under flume: how it is started,
 * where its transcript is and how to read it, how it is told and stopped, and what `doctor` checks.
 * Every answer a driver gives must come from the agent's own record, never from a guess.
 */
import type { AgentPlan, ConfirmRequest, StartRequest } from './hooks.js';
import type { DoctorCheck, PaneHost } from './pane-host.js';
import type { AgentHandle, AgentReading, AgentUsage, PromptState } from './agent.js';

/** A driver's answer to `usage`: the figures, and the cursor to hand back next time (plain JSON). */
export interface UsageRead {
  usage: AgentUsage;
  cursor: unknown;
}

/** An agent program flume can start, confirm prompts to, read, tell and stop. */
export interface AgentDriver {
  /** The key stages name in `agent:` (`claude-code`). */
  key: string;
  /**
   * Optional: the key of the pane host this driver always runs on, whatever host the launch chose
   * (a driver that hands its command to the operator names a host that cannot type).
   */
  host?: string;
  /**
   * Optional: a JSON schema (draft-07) of the driver's options, the config's `agents[<key>]`. flume
   * checks the config against it when the repository opens, naming the field and the driver.
   */
  optionsSchema?: Record<string, unknown>;
  /**
   * Optional: the variables a session of this program hands the programs it starts, bound to that
   * session (its id, its pid, its inbox socket and the token to it). flume leaves them out of every
   * agent's environment (`StartRequest.env`), whatever its driver, so an agent started from inside
   * another session is neither taken for its child nor handed its credentials. A name ending in `*`
   * stands for every name with that prefix.
   */
  sessionVariables?: readonly string[];
  /**
   * Optional, default false. True for a driver whose agent runs in a place's container (docs/containers.md):
   * everything it keeps for the agent lies under the agent's HOME, which is the place's home there, and
   * it checks its program through the host's `run`. A launch into a container whose kind runs a
   * driver without it is refused before anything is made.
   */
  inContainers?: boolean;
  /**
   * Optional: the hosts its program must reach (`host:port`), given the variables its agent gets
   * (an endpoint one of them names, say): what a place's container lets it reach by default, and no
   * more (docs/containers.md, "The network").
   */
  egress?(env: Record<string, string>): string[];
  /** Starts the agent for a stage on the given host and returns at once with its handle. */
  start(request: StartRequest, host: PaneHost): Promise<AgentHandle>;
  /**
   * Optional: what `start` would run for the request on the host, checked as `start` checks it (its
   * program present), starting nothing and writing nothing (`launch --dry-run`). Throws as `start`
   * would for what `start` refuses.
   */
  plan?(request: StartRequest, host: PaneHost): Promise<AgentPlan>;
  /**
   * Waits until the agent accepts input. `slow` when it did not within the time (never a failure),
   * `exited` when its process is gone.
   */
  waitForInput(handle: AgentHandle, timeoutMs: number): Promise<'ready' | 'slow' | 'exited'>;
  /**
   * Optional: the error to refuse `text` with when the program would take it as something other than
   * a prompt however it is sent (Claude Code runs a text starting with `/` as its command, past any
   * space before it); undefined for a text it takes as words. flume asks before it types a prompt or a
   * tell (a refused text is never typed), and before a launch makes anything, for each stage's prompt.
   */
  refuse?(text: string): Error | undefined;
  /** Types the text and submits it, whole, however long or multi-line. */
  send(handle: AgentHandle, text: string): Promise<void>;
  /**
   * Sends the text once more after it was not taken: submits it if it still sits in the input box,
   * types it again if the box is empty, and refuses (AGENT_BUSY) if the box holds anything else.
   */
  resend(handle: AgentHandle, text: string): Promise<void>;
  /** Reads the transcript: was the text taken as a prompt (or is it held, queued by the program: PromptState)? */
  confirm(request: ConfirmRequest): Promise<PromptState>;
  /** Reads the agent's state from its own record (and its screen, for dialogs). */
  read(handle: AgentHandle): Promise<AgentReading>;
  /**
   * Optional: reads many agents at once, each as `read` would (undefined where one could not be read),
   * sharing what they have in common (their host's panes, the agent's own state files). Status uses
   * it so its cost does not grow by a process per place; without it, `read` is called for each.
   */
  readMany?(handles: AgentHandle[]): Promise<Array<AgentReading | undefined>>;
  /** True when the input box holds text nobody submitted (a tell must not submit it). */
  hasDraft(handle: AgentHandle): Promise<boolean>;
  /**
   * Optional: takes back `text` that flume sent and the agent did not take, so nothing is left typed
   * one Enter away from work behind the record: clears the input box when it holds that text, and
   * leaves a box holding anything else alone. True when the box holds nothing afterwards. Called
   * after a prompt or a tell was given up on; without it, what was typed stays.
   */
  withdraw?(handle: AgentHandle, text: string): Promise<boolean>;
  /**
   * Ends the agent; resolves once its process is gone, else throws AGENT_DID_NOT_EXIT. `hangUp` ends it
   * at once (its stage delivered, nothing of its turn is wanted) rather than asking it to quit.
   */
  stop(handle: AgentHandle, options?: { hangUp?: boolean }): Promise<void>;
  /**
   * Optional: what the agent used so far, from its own record (Claude Code: `usage` of each reply in
   * its transcript; Codex: its rollout's token counts). `cursor` is what the last call returned for
   * this handle, kept by flume: the driver reads only what its record gained since (restarting when
   * the record shrank or was replaced), so asking costs what was added, not the record's length.
   * Undefined when the agent has no record yet.
   */
  usage?(handle: AgentHandle, cursor?: unknown): Promise<UsageRead | undefined>;
  /** Files and folders whose change may change a reading, for the supervisor to watch. */
  watchPaths(handle: AgentHandle): string[];
  /**
   * Optional: what this agent needs on this machine, for `flume doctor`: its program present, its
   * version within the range flume was tested with, its credentials. A third-party driver brings its
   * checks with it; one without is listed as unchecked.
   */
  checks?(): Promise<DoctorCheck[]>;
}


/**
 * A typed identity for writing an agent driver. Adding it (`flume.agents.add(driver)` in a plugin's
 * `apply`) is the whole job: the core reaches every method through one checked path (core/drivers/reach.ts).
 */
export function defineDriver<D extends AgentDriver>(driver: D): D {
  return driver;
}
