/**
 * What the herdr plugin's actions (herdr-plugin.toml) do, as pure decisions: which place an action
 * is about, read from herdr's invocation context, and the flume command line it runs. bin.ts is the
 * thin part that asks, runs and prints.
 */
import type { PlaceStatus, StatusReport } from '../../core/index.js';

/** Every action the manifest declares, by its id there. */
export const ACTIONS = ['open', 'tell', 'stop', 'retry', 'next', 'launch'] as const;
export type ActionId = (typeof ACTIONS)[number];

/** Actions that need words from the operator run in a herdr popup, which is a terminal to ask in. */
export const PROMPTED = ['open', 'tell', 'next', 'launch'] as const;
export type PromptedId = (typeof PROMPTED)[number];

/** True for an action that asks in a popup. */
export function isPrompted(id: string): id is PromptedId {
  return (PROMPTED as readonly string[]).includes(id);
}

/** What herdr tells an action about where it was invoked. */
export interface HerdrContext {
  /** The focused pane (for a popup, the tiled pane under it). */
  paneId?: string;
  paneCwd?: string;
  workspaceCwd?: string;
}

/** What an action's flume command needs. */
export interface ActionInput {
  place?: string;
  /** A file holding the operator's text (a tell, a brief). */
  file?: string;
  repo?: string;
  kind?: string;
  /** The operator's note for the stage `next` starts. */
  note?: string;
}

/**
 * Reads herdr's context: `HERDR_PLUGIN_CONTEXT_JSON` (`focused_pane_id`, `focused_pane_cwd`,
 * `workspace_cwd`), else the pane variables herdr sets for actions and custom commands.
 */
export function invocationContext(env: NodeJS.ProcessEnv = process.env): HerdrContext {
  let json: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(env.HERDR_PLUGIN_CONTEXT_JSON ?? '{}') as unknown;
    if (parsed && typeof parsed === 'object') json = parsed as Record<string, unknown>;
  } catch {
    // A context herdr did not write is no context.
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const context: HerdrContext = {};
  const paneId = text(json.focused_pane_id) ?? text(env.HERDR_ACTIVE_PANE_ID) ?? text(env.HERDR_PANE_ID);
  const paneCwd = text(json.focused_pane_cwd) ?? text(env.HERDR_ACTIVE_PANE_CWD);
  const workspaceCwd = text(json.workspace_cwd);
  if (paneId) context.paneId = paneId;
  if (paneCwd) context.paneCwd = paneCwd;
  if (workspaceCwd) context.workspaceCwd = workspaceCwd;
  return context;
}

/**
 * The place an action is about: the one whose agent runs in the focused pane, else the one whose
 * folder holds the focused pane's folder (a shell opened in a place).
 */
export function placeOf(report: StatusReport, context: HerdrContext): PlaceStatus | undefined {
  const byPane = report.places.find((p) => p.stage?.agent?.host === 'herdr' && p.stage.agent.pane === context.paneId);
  if (byPane || !context.paneCwd) return byPane;
  const cwd = context.paneCwd;
  return report.places.find((p) => cwd === p.path || cwd.startsWith(`${p.path}/`));
}

/** The flume command line (after `flume`) an action runs; `open` reads the place it then shows. */
export function flumeCommand(action: ActionId, input: ActionInput): string[] {
  switch (action) {
    case 'stop':
      return ['stop', need(input.place, 'place')];
    case 'retry':
      return ['retry', need(input.place, 'place')];
    case 'next':
      return ['next', need(input.place, 'place'), ...(input.note ? ['--note', input.note] : [])];
    case 'tell':
      return ['tell', need(input.place, 'place'), '--file', need(input.file, 'file')];
    case 'open':
      return ['status', need(input.place, 'place'), '--json'];
    case 'launch':
      // flume names it from the brief (a suffix when taken), as for every caller that gives no name.
      return ['launch', '--repo', need(input.repo, 'repo'), '--kind', input.kind || 'fix', '--brief-file', need(input.file, 'file'), '--auto-name'];
  }
}

function need(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new Error(`the ${what} is missing`);
  return value;
}
