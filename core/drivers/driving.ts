/**
 * Small helpers for writing an agent driver whose agent runs in a pane, public through `flume`:
 * reading a record kept as JSON lines, waiting on a look that may answer at once (`waitForInput(handle,
 * 0)` looks once), opening the agent's pane with its handle, typing and submitting into its own pane,
 * resending by what its input box holds, typing a prompt whole and submitting it once it shows, and
 * closing it (or asking it to quit) only once its process and every process it started are gone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { canType, ownsPane, type PaneHost } from '../api/pane-host.js';
import { flumeError } from '../api/errors.js';
import type { StartRequest } from '../api/hooks.js';
import { descendantsOf, processExists, processStart, sameProcess, signalQuietly, waitGone } from '../support/process.js';
import type { AgentHandle } from '../api/agent.js';

/**
 * Every complete line of a JSON-lines file, parsed, in order: [] while the file is not there. A
 * last line the agent is still writing (no newline yet) and a line that is not JSON are left out.
 */
export function readJsonl<T = unknown>(path: string): T[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
  return lines.flatMap((line) => {
    try {
      return line.trim() ? [JSON.parse(line) as T] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Asks `look` at once and then every 100 ms until it answers something (neither `undefined` nor
 * `false`) or `timeoutMs` has passed: with a timeout of 0 it asks once. Resolves to the answer, or
 * to `otherwise` when the time was up.
 */
export async function waitFor<T, const U = undefined>(look: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, otherwise?: U): Promise<T | U> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const answer = await look();
    if (answer !== undefined && answer !== false) return answer;
    if (Date.now() >= until) return otherwise as U;
    await sleep(Math.min(100, Math.max(0, until - Date.now())));
  }
}

/**
 * Opens the agent's pane for a stage (titled with the place, in its folder) and returns its handle:
 * the driver's key, the host's, the request's session, the place's folder, the time, what `open`
 * answered (`pane`, `pid`, its identity as `paneIdentity`), then the driver's own fields.
 */
export async function openAgent(
  host: PaneHost,
  request: StartRequest,
  agent: { driver: string; argv: string[]; env: Record<string, string> } & Pick<AgentHandle, 'transcriptPath' | 'version' | 'command' | 'data'>,
): Promise<AgentHandle> {
  const { driver, argv, env, ...own } = agent;
  const opened = await host.open({ title: request.place.id, cwd: request.place.path, argv, env });
  return {
    driver,
    host: host.key,
    sessionId: request.sessionId,
    cwd: request.place.path,
    startedAt: new Date().toISOString(),
    ...(opened.pane !== undefined ? { pane: opened.pane } : {}),
    ...(opened.pid !== undefined ? { pid: opened.pid } : {}),
    ...(opened.identity !== undefined ? { paneIdentity: opened.identity } : {}),
    ...own,
  };
}

/**
 * Types `text` into the handle's own pane as it is and presses Enter. Nothing is typed into a pane
 * that is not the handle's (AGENT_NOT_UP), nor on a host that cannot type.
 */
export async function submit(host: PaneHost, handle: AgentHandle, text: string): Promise<void> {
  await typable(host, handle);
  await host.type(handle.pane!, text);
  await host.keys(handle.pane!, ['Enter']);
}

/**
 * What a driver's `resend` does, given what the agent's input box holds now (`box`, as its screen
 * shows it): the text still there is submitted, an empty box gets the text typed and submitted, and
 * a box holding anything else is left alone (AGENT_BUSY): the text is never typed beside it.
 */
export async function resendInBox(host: PaneHost, handle: AgentHandle, box: string, text: string): Promise<void> {
  if (box === '') return submit(host, handle, text);
  if (box !== text) {
    throw flumeError('AGENT_BUSY', { sessionId: handle.sessionId }, {
      variant: 'session',
      details: { box, sessionId: handle.sessionId },
    });
  }
  await typable(host, handle);
  await host.keys(handle.pane!, ['Enter']);
}

/**
 * Ends the agent in the handle's pane: closes the pane when it is the handle's own (never another's),
 * then resolves once the handle's process is gone, at once when it is gone already. AGENT_DID_NOT_EXIT
 * when it still runs after `timeoutMs`.
 */
export async function closeAgent(host: PaneHost, handle: AgentHandle, timeoutMs = 5000): Promise<void> {
  if (await ownsPane(host, handle)) await host.close(handle.pane!);
  if (handle.pid === undefined || !sameProcess(handle.pid, handle.pidStart) || (await waitGone(handle.pid, timeoutMs))) return;
  throw flumeError('AGENT_DID_NOT_EXIT', { sessionId: handle.sessionId, pid: handle.pid }, {
    variant: 'afterPaneClosed',
    details: { pid: handle.pid, sessionId: handle.sessionId },
  });
}

/** The handle's pane, when flume may type into it: on a host that types, and the handle's own. */
async function typable(host: PaneHost, handle: AgentHandle): Promise<void> {
  if (canType(host) && handle.pane && (await ownsPane(host, handle))) return;
  throw flumeError('AGENT_NOT_UP', { sessionId: handle.sessionId, host: handle.host, pane: handle.pane }, {
    variant: handle.pane ? 'notTypablePane' : 'notTypable',
    details: { host: handle.host, pane: handle.pane ?? null, sessionId: handle.sessionId },
  });
}

/** How a terminal program shows its input box, for {@link typeWhole}. */
export interface InputBox {
  /** The text in the input box of a screen ('' when empty or showing its placeholder). */
  draft(screen: string): string;
  /** True when a draft on screen is `text` (screens wrap lines and fold long pastes). */
  same(draft: string, text: string): boolean;
  /** The longest wait for the typed text to show before Enter is pressed anyway. Default 1500 ms. */
  showMs?: number;
  /** Enter waits this long after the text showed. Default 250 ms. */
  enterAfterMs?: number;
  /** Type the text as one bracketed paste framed by the host, for a program that reads one (TypeOptions). */
  paste?: boolean;
}

/**
 * Types `text` into the handle's own pane, waits until its input box shows it (a program still taking
 * a paste reads an Enter pressed at once as a newline of it), then presses Enter. Nothing is typed
 * into a pane that is not the handle's (AGENT_NOT_UP).
 */
export async function typeWhole(host: PaneHost, handle: AgentHandle, text: string, box: InputBox): Promise<void> {
  await typable(host, handle);
  await host.type(handle.pane!, text, { paste: box.paste === true });
  const until = Date.now() + (box.showMs ?? 1500);
  for (;;) {
    const screen = await host.capture(handle.pane!);
    if (screen !== undefined && box.same(box.draft(screen), text)) break;
    if (Date.now() >= until) break;
    await sleep(50);
  }
  await sleep(box.enterAfterMs ?? 250);
  await typable(host, handle);
  await host.keys(handle.pane!, ['Enter']);
}

/**
 * Takes back `text` that was typed into the handle's own pane and not taken: when its input box holds
 * that text, one Ctrl-C (which clears a draft in every agent flume drives, and only quits from an
 * empty box), then a look until the box is empty. A box holding other text, or none, is left alone.
 * True when the box holds nothing afterwards.
 */
export async function withdrawText(host: PaneHost, handle: AgentHandle, text: string, box: Pick<InputBox, 'draft' | 'same'>): Promise<boolean> {
  if (!canType(host) || !handle.pane || !(await ownsPane(host, handle))) return true;
  const draftNow = async () => {
    const screen = await host.capture(handle.pane!);
    return screen === undefined ? '' : box.draft(screen);
  };
  const draft = await draftNow();
  if (draft === '') return true;
  if (!box.same(draft, text)) return false;
  await host.keys(handle.pane, ['C-c']);
  return waitFor(async () => (await draftNow()) === '', 2000);
}

/**
 * Ends a terminal program in the handle's own pane, truthfully: unless `hangUp`, Ctrl-C twice (a
 * running turn is interrupted, an idle program quits), twice over; then the pane is closed, and every
 * process of the agent found before (the pane's program and its descendants: an npm launcher and its
 * native child, a program that restarted itself) must be gone, else it is killed, else
 * AGENT_DID_NOT_EXIT. A pane that is not the handle's own is left alone (it is another agent's now).
 */
export async function quitAgent(host: PaneHost, handle: AgentHandle, options: { agent: string; hangUp?: boolean }): Promise<void> {
  if (!handle.pane || !(await ownsPane(host, handle))) return;
  // Each process is kept with its start, and signalled only while it is that process: a pid freed
  // meanwhile may be another program's by then (core/support/process.ts, processStart).
  const found: Array<{ pid: number; start?: string }> = [];
  const gather = () => {
    if (!handle.pid || !sameProcess(handle.pid, handle.pidStart)) return;
    for (const pid of [handle.pid, ...descendantsOf(handle.pid)]) {
      const start = processStart(pid);
      if (!found.some((one) => one.pid === pid) && (start !== undefined || processExists(pid))) found.push({ pid, start });
    }
  };
  gather();
  if (!options.hangUp && (await host.alive(handle.pane))) {
    for (const waitMs of [1500, 3000]) {
      await host.keys(handle.pane, ['C-c']).catch(() => undefined);
      await sleep(150);
      await host.keys(handle.pane, ['C-c']).catch(() => undefined);
      if (await waitFor(async () => !(await host.alive(handle.pane!)), waitMs)) break;
    }
  }
  // What it started meanwhile (a tool's shell command) goes with it, or is ended below.
  gather();
  await host.close(handle.pane);
  const running = () => found.filter((one) => sameProcess(one.pid, one.start)).map((one) => one.pid);
  if (await waitFor(() => running().length === 0, 3000)) return;
  for (const pid of running()) signalQuietly(pid, 'SIGKILL');
  const left = running();
  if (left.length && !(await waitFor(() => running().length === 0, 2000))) {
    throw flumeError('AGENT_DID_NOT_EXIT', { agent: options.agent, sessionId: handle.sessionId, pids: left.join(', '), pidList: left.join(',') }, {
      variant: 'driver',
      details: { pids: left, sessionId: handle.sessionId },
    });
  }
}
