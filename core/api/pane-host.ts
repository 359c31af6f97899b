/**
 * The contract of a pane host: where an agent runs (a tmux pane, a herdr pane, a printed command),
 * how flume opens one, types into it, looks at it and closes it; and the checks every host shares.
 */
import { flumeError } from './errors.js';
import { processRunning, sameProcess } from '../support/process.js';
import type { AgentHandle } from './agent.js';

/** How a host types text (`PaneHost.type`). */
export interface TypeOptions {
  /**
   * Send the text as one bracketed paste (`ESC[200~ … ESC[201~`, core/drivers/pane-env.ts asPaste)
   * framed by the host whatever the program asked its terminal for, so that no character of it is a
   * key. For a program that reads bracketed paste (every agent flume drives): typed key by key, `!` is
   * a shell mode to the Gemini CLI and OpenCode (the words after it run as a command) and `?` the Gemini
   * CLI's shortcuts, and the Gemini CLI asks for bracketed paste only a moment after its input box
   * shows, so a terminal's own paste comes to it as keys at first. A program that does not read it
   * (a line reader) would take the markers as text: its driver types without.
   */
  paste?: boolean;
}

/** What a pane host opens: one program in one folder with one environment. */
export interface PaneSpec {
  /** A label for the pane (the place id and stage). */
  title: string;
  cwd: string;
  argv: string[];
  /** The complete environment of the program (flume builds it; the host adds nothing). */
  env: Record<string, string>;
}

/** A pane as a look at all of a host's panes finds it. */
export interface PaneState {
  /** The identity the host gave the pane at open (as `identity` reads it), if it carries one. */
  identity?: string;
  /** True while the pane's program runs (as `alive` reads it). */
  alive: boolean;
}

/**
 * Where an agent runs. What the core needs to know of a host it reads from what the host declares
 * (`canType`, `priority`), never from its key: a third-party host is chosen and driven as a built-in is.
 */
export interface PaneHost {
  key: string;
  /**
   * Optional, default true. False for a host with no pane flume can type into: the agent's command is
   * handed to the operator (carrying its prompt, so it counts as sent once), flume never types or
   * presses keys, and an agent not yet up there is not gone (nobody has run the command yet).
   */
  canType?: boolean;
  /**
   * Optional, default 0. With `agent.host: "auto"`, flume starts agents on the available host of the
   * highest priority (the built-ins: herdr 30, tmux 20, a printed command 0).
   */
  priority?: number;
  /** Optional: why `agent.host: "auto"` chose this host, in words for launch's output ("herdr is running here, …"). */
  chosen?: string;
  /** True when this host can open panes here now (tmux found, herdr running, …). */
  available(): Promise<boolean>;
  /** Optional: what this host needs here, for `flume doctor` (its program and version). */
  checks?(): Promise<DoctorCheck[]>;
  /**
   * Opens a pane running the program; returns its id and pid where the host knows them, and the
   * identity the host gave the pane: a mark no other pane carries, even one that later gets the same
   * id (tmux numbers panes afresh in a new server), which `identity` reads back.
   */
  open(spec: PaneSpec): Promise<{ pane?: string; pid?: number; identity?: string }>;
  /** The identity the pane at this id carries now; undefined when no pane is there or it carries none. */
  identity(pane: string): Promise<string | undefined>;
  /** The pane's screen as text (`history`: with what scrolled off, where the host keeps it), or undefined when the host cannot read screens. */
  capture(pane: string, options?: { history?: boolean }): Promise<string | undefined>;
  /**
   * Types literal text into the pane; nothing is submitted. As a terminal would give it to the
   * program: keys, or one paste where the text holds a newline or another control character (framed
   * as a bracketed paste when the program asked for one). With `paste`, always one bracketed paste
   * framed by the host (TypeOptions).
   */
  type(pane: string, text: string, options?: TypeOptions): Promise<void>;
  /** Presses named keys (`Enter`, `Escape`, `C-c`, `C-u`). */
  keys(pane: string, keys: string[]): Promise<void>;
  /** True while the pane's program is running. */
  alive(pane: string): Promise<boolean>;
  /**
   * Optional: the pane's identity, whether its program runs, and (while it runs) its screen, in one
   * look: the same answers as `identity`, `alive` and `capture`, at the cost of one call where the
   * host can (tmux: one client process instead of three). Undefined when no pane is there; rejects
   * when the host could not be asked (its program failed or did not answer), which is never "no pane".
   */
  look?(pane: string): Promise<PaneLook | undefined>;
  /**
   * Optional: the command that shows the pane on the caller's terminal until the operator leaves it
   * (tmux: `attach-session` on flume's own socket); the live view runs it with the terminal handed over.
   */
  attach?(pane: string): { file: string; args: string[]; env?: Record<string, string | undefined>; leave: string } | undefined;
  /** Closes the pane, ending whatever runs in it. */
  close(pane: string): Promise<void>;
  /**
   * Optional: runs a short program to its end where this host's panes run theirs, when that is not
   * this machine's own (the container host: in the place's container). A driver asks its program's
   * presence and version through it, so what it checks is what the pane will run.
   */
  run?(argv: string[], env: Record<string, string>): Promise<{ exitCode: number | null; stdout: string; stderr: string }>;
  /**
   * Optional: every pane the host has now, by id, in one look (what `identity` and `alive` would say
   * of each). Status reads many agents at once with it: a fixed number of processes however many
   * places there are. A host without it is asked pane by pane.
   */
  panes?(): Promise<Map<string, PaneState>>;
  /** Optional: the screens of many panes in one look (as `capture` reads each); a pane not read is absent. */
  captureMany?(panes: string[]): Promise<Map<string, string>>;
  /**
   * Optional: what `look` answers for each of many panes, in one call (tmux: one client process for
   * all); a pane not there is absent. Status reads many agents with it.
   */
  lookMany?(panes: string[]): Promise<Map<string, PaneLook>>;
}

/** One look at a pane: what `identity`, `alive` and `capture` would answer, taken at once. */
export interface PaneLook {
  identity?: string;
  alive: boolean;
  /** The screen while the program runs; undefined when the host cannot read screens or it ended. */
  screen?: string;
}

/** One line of `flume doctor`: what was checked, whether it holds, and the fix when it does not. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** What was found (a version, a path, a state). */
  detail: string;
  /** How to put it right, when it does not hold. */
  fix?: string;
  /** True when a launch cannot go without it (doctor exits 1 when such a check fails). */
  needed: boolean;
  /** The version of the program the check found, when it is a program's (`flume version` lists them). */
  version?: string;
}

/**
 * True when the handle's pane is the one its agent was opened in: the pane at its id carries the
 * identity the host gave it at open. A handle from a host that gave none is checked by its pid (the
 * program flume started there must still run). A pane that is not the handle's is never read, typed
 * into or closed for it: the handle's agent reads as gone.
 */
export async function ownsPane(host: PaneHost, handle: AgentHandle): Promise<boolean> {
  if (!handle.pane) return false;
  if (handle.paneIdentity !== undefined) return (await host.identity(handle.pane).catch(() => undefined)) === handle.paneIdentity;
  return handle.pid === undefined || sameProcess(handle.pid, handle.pidStart);
}

/** ownsPane, judged from a look at all the host's panes (`PaneHost.panes`) rather than a question of its own. */
export function ownsPaneIn(panes: Map<string, PaneState>, handle: AgentHandle): boolean {
  if (!handle.pane) return false;
  if (handle.paneIdentity !== undefined) return panes.get(handle.pane)?.identity === handle.paneIdentity;
  return handle.pid === undefined || sameProcess(handle.pid, handle.pidStart);
}

/**
 * The handle's pane at one look: whether it is the handle's own (as `ownsPane`), whether its program
 * runs, and its screen while it does. Hosts with `look` answer in one call, others in three: an agent
 * waiting for its input box is looked at many times a second across many places.
 */
export async function lookAtPane(host: PaneHost, handle: AgentHandle): Promise<PaneSeen> {
  if (!handle.pane) return { own: false, alive: false };
  const pane = handle.pane;
  try {
    if (host.look) return seenIn(handle, await host.look(pane));
    const own = handle.paneIdentity !== undefined ? (await host.identity(pane)) === handle.paneIdentity : await ownsPane(host, handle);
    const alive = own && (await host.alive(pane));
    const screen = alive ? await host.capture(pane) : undefined;
    return { own, alive, ...(screen !== undefined ? { screen } : {}) };
  } catch {
    return unanswered(handle);
  }
}

/**
 * What a pane reads as when its host could not be asked (its program failed or timed out, as a tmux
 * client can on a starved host): the process table answers instead. The agent's own process still
 * running reads as its own and alive, with no screen, so a host that failed to answer never reads a
 * running agent as gone (status would show it exited, tidy would take its place from under it); a
 * handle without a pid, or whose process is gone, reads as gone.
 */
function unanswered(handle: AgentHandle): PaneSeen {
  const alive = handle.pid !== undefined && sameProcess(handle.pid, handle.pidStart) && processRunning(handle.pid);
  return { own: alive, alive };
}

/** A handle's pane as one look found it: its own or not, its program running, its screen while it runs. */
export interface PaneSeen {
  own: boolean;
  alive: boolean;
  screen?: string;
}

/**
 * `lookAtPane` for many handles of one host, in as few calls as the host allows: `lookMany` (one),
 * else `panes` then `captureMany` (two), else pane by pane. When a call for all of them fails, each
 * pane is looked at alone, and one whose host still cannot be asked reads as `lookAtPane` says.
 */
export async function lookAtPanes(host: PaneHost, handles: AgentHandle[]): Promise<Map<AgentHandle, PaneSeen>> {
  const seen = new Map<AgentHandle, PaneSeen>();
  const withPane = handles.filter((handle) => handle.pane);
  for (const handle of handles) if (!handle.pane) seen.set(handle, { own: false, alive: false });
  const panes = [...new Set(withPane.map((handle) => handle.pane!))];
  const looks = host.lookMany ? await host.lookMany(panes).catch(() => undefined) : undefined;
  if (looks) {
    for (const handle of withPane) seen.set(handle, seenIn(handle, looks.get(handle.pane!)));
    return seen;
  }
  const listed = host.panes ? await host.panes().catch(() => undefined) : undefined;
  if (!listed) {
    await Promise.all(withPane.map(async (handle) => seen.set(handle, await lookAtPane(host, handle))));
    return seen;
  }
  const live = withPane.filter((handle) => ownsPaneIn(listed, handle) && listed.get(handle.pane!)?.alive === true);
  const screens = host.captureMany ? await host.captureMany(live.map((handle) => handle.pane!)).catch(() => undefined) : undefined;
  for (const handle of withPane) {
    const own = ownsPaneIn(listed, handle);
    const alive = live.includes(handle);
    const screen = alive ? (screens ? screens.get(handle.pane!) : await host.capture(handle.pane!).catch(() => undefined)) : undefined;
    seen.set(handle, { own, alive, ...(screen !== undefined ? { screen } : {}) });
  }
  return seen;
}

/** What one look at a pane says of the handle's agent: not its own when the pane carries another identity. */
function seenIn(handle: AgentHandle, look: PaneLook | undefined): PaneSeen {
  const own = handle.paneIdentity !== undefined ? look?.identity === handle.paneIdentity : handle.pid === undefined || sameProcess(handle.pid, handle.pidStart);
  const alive = own && Boolean(look?.alive);
  return { own, alive, ...(alive && look?.screen !== undefined ? { screen: look.screen } : {}) };
}

/** A typed identity for writing a pane host; a plugin adds it with `flume.hosts.add(host)`. */
export function definePaneHost<H extends PaneHost>(host: H): H {
  return host;
}

/** True when flume can type into the host's panes (its `canType`, true unless it says otherwise). */
export function canType(host: Pick<PaneHost, 'canType'> | undefined): boolean {
  return host?.canType !== false;
}

/**
 * Refuses a pane spec a host cannot run as `env -i KEY=VAL … argv`: a program that is not named first
 * or reads as a variable, or variable names that `env` would misread. Every host checks with this.
 */
export function checkPaneSpec(spec: PaneSpec): void {
  const [program] = spec.argv;
  if (!program || program.includes('=')) {
    throw flumeError('BAD_USAGE', { argv: JSON.stringify(spec.argv) }, {
      variant: 'paneProgram',
      details: { argv: spec.argv },
    });
  }
  const bad = Object.keys(spec.env).filter((key) => key === '' || key.includes('=') || key.startsWith('-'));
  if (bad.length) {
    throw flumeError('BAD_USAGE', { names: bad.join(', ') }, {
      variant: 'environmentNames',
      details: { names: bad },
    });
  }
}
