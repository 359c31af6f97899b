/**
 * What a driver's author hands the conformance kit: the driver (as the plugins that register it), a
 * pane host, and a way to put their real agent into each scripted situation. The kit brings the
 * rest: a throwaway repository, flume's own engine, and the checks (checks.ts).
 */
import type { PaneHost } from '../api/pane-host.js';
import type { FlumePlugin } from '../api/plugin.js';
import type { AgentHandle } from '../api/agent.js';
import type { FlumeConfig } from '../api/plugin.js';

/**
 * A situation the harness puts its real agent into, for one agent started by the kit. The agent's
 * program is the real one; what changes is what it is told (a scripted model backend) or how it is
 * started.
 *
 * - `answers`: it comes up, takes every prompt and answers each with a short reply; the turn ends.
 * - `asks`: it comes up, takes its first prompt and answers it with a dialog (a permission prompt or
 *   a question) that stays open until someone answers it in the pane.
 * - `drops-first`: it comes up, but the first prompt submitted to it is not taken (nothing of it
 *   reaches its record: the text may go back into its input box or vanish); later ones are taken
 *   and answered as in `answers`.
 * - `drops-all`: as `drops-first`, for every prompt.
 * - `never-up`: its program exits before it accepts input (a refused option, a crash at start).
 */
export type ConformanceScenario = 'answers' | 'asks' | 'drops-first' | 'drops-all' | 'never-up';

/** Every scenario, in the order the checks first use them. */
export const CONFORMANCE_SCENARIOS: readonly ConformanceScenario[] = ['answers', 'drops-first', 'drops-all', 'never-up', 'asks'];

/** What the kit tells the harness about the agent it is about to start. */
export interface ScenarioContext {
  /** The kit's temp folder for the whole suite: the repository the agents work in is `<root>/repo`. */
  root: string;
  /** The repository the places are made in (its worktrees are the agents' folders). */
  repo: string;
}

/** One scenario as the harness set it up. */
export interface ScenarioSetup {
  /** The plugins that register the driver under test, set up for this scenario (as a repository's config would list them). */
  plugins: FlumePlugin[];
  /** Config merged over the kit's (the driver's options under `agents`, for instance). */
  config?: FlumeConfig;
  /**
   * The prompts the agent took so far, in order, as the harness sees them without the driver under
   * test: the requests its scripted model backend received, or the agent's record read by the
   * harness's own reader. The kit judges every "taken" against this.
   */
  taken(): Promise<string[]> | string[];
  /** Ends what the scenario started (its backend, its folders); called once, after the agents are gone. */
  close?(): Promise<void> | void;
}

/** What a driver's author supplies to run the kit. */
export interface ConformanceHarness {
  /** The driver's key, as a stage names it in `agent:`. */
  agent: string;
  /** The pane host the agents run on. It must type and read screens: the checks type into a pane. */
  host: PaneHost;
  /** Puts the real agent into `scenario` for the next agent the kit starts. */
  scenario(scenario: ConformanceScenario, context: ScenarioContext): Promise<ScenarioSetup>;
  /** The agent's process id, for a host whose handles carry none (the stop check needs it). */
  pidOf?(handle: AgentHandle): number | undefined | Promise<number | undefined>;
  /** How long things may take with this agent; the defaults suit a real agent on a loaded machine. */
  timeouts?: Partial<ConformanceTimeouts>;
}

/** The limits the checks run under, in milliseconds. */
export interface ConformanceTimeouts {
  /** For an agent to accept input (flume's `limits.startTimeout`). Default 60 s. */
  startMs: number;
  /** For a sent prompt to appear in the agent's record (flume's `limits.promptTimeout`). Default 8 s. */
  promptMs: number;
  /** For a state the scenario leads to (a dialog, a turn's end) to show in the driver's reading. Default 30 s. */
  settleMs: number;
  /** How long text typed but not submitted is watched for being (wrongly) taken. Default 2 s. */
  draftMs: number;
}

/** The timeouts a harness asked for, over the defaults. */
export function timeoutsOf(harness: ConformanceHarness): ConformanceTimeouts {
  return { startMs: 60_000, promptMs: 8_000, settleMs: 30_000, draftMs: 2_000, ...harness.timeouts };
}
