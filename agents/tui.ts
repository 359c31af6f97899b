/**
 * What the drivers of a program with a terminal UI in a pane share (Codex, the Gemini CLI,
 * OpenCode): waiting for its input box, typing a prompt whole, resending by what the box holds,
 * reading a draft, stopping it truthfully, and the handle a start returns. Each driver brings how its
 * screen reads (`TuiScreen`); what its record says stays its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { flumeError, lookAtPane, ownsPane, quitAgent, typeWhole, withdrawText, type AgentDriver, type AgentHandle, type PaneHost, type StartRequest } from '../core/index.js';
import { handedCommand } from './printed.js';

/** After the input box first shows, keys typed at once can be lost while the program finishes starting. */
const READY_SETTLE_MS = 300;

/** How a program's screen reads. */
export interface TuiScreen {
  /** What the screen shows: its input box (`input-ready`), its folder-trust question (`trust`), or anything else. */
  classify(screen: string): string;
  /** The text in its input box ('' when empty or showing its placeholder). */
  draft(screen: string): string;
  /** True when a draft on screen is `text`, as the program shows it. */
  same(draft: string, text: string): boolean;
}

/** A program with a terminal UI, as the shared methods need it. */
export interface Tui {
  /** Its name in messages (`Codex`). */
  agent: string;
  screen: TuiScreen;
  /** The host a handle's agent runs on. */
  hostOf(handle: AgentHandle): PaneHost | undefined;
  /** The longest wait for a typed prompt to show before Enter is pressed anyway. */
  showMs?: number;
  /** Enter waits this long after the prompt showed. */
  enterAfterMs?: number;
  /**
   * What a prompt must not start with: at the start of its input box these make the text something
   * else than a prompt however it arrives (Codex: `!` a shell command it runs, `/` its command menu).
   * Such a text is sent with one space before it, which the program trims as it takes the prompt.
   */
  keyStart?: RegExp;
}

/** The driver methods that only look at and type into the agent's pane. */
export function tuiMethods(tui: Tui): Pick<AgentDriver, 'waitForInput' | 'send' | 'resend' | 'hasDraft' | 'withdraw' | 'stop'> {
  const { screen: reads } = tui;
  const methods: ReturnType<typeof tuiMethods> = {
    async waitForInput(handle, timeoutMs) {
      const host = tui.hostOf(handle);
      if (!host || !handle.pane) return 'slow';
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { alive, screen } = await lookAtPane(host, handle);
        if (!alive) return 'exited';
        const view = screen === undefined ? 'unknown' : reads.classify(screen);
        // Its folder-trust question holds it until the user answers: waiting longer changes nothing.
        if (view === 'trust') return 'slow';
        if (view === 'input-ready') {
          if (timeoutMs === 0) return 'ready';
          await sleep(READY_SETTLE_MS);
          const again = await host.capture(handle.pane);
          if (again !== undefined && reads.classify(again) === 'input-ready') return 'ready';
        }
        if (Date.now() >= deadline) return 'slow';
        await sleep(Math.min(150, Math.max(0, deadline - Date.now())));
      }
    },

    async send(handle, text) {
      const host = await ownHost(tui, handle);
      await typeWhole(host, handle, tui.keyStart?.test(text) ? ` ${text}` : text, { draft: reads.draft, same: reads.same, ...(tui.showMs ? { showMs: tui.showMs } : {}), ...(tui.enterAfterMs ? { enterAfterMs: tui.enterAfterMs } : {}) });
    },

    async resend(handle, text) {
      const host = await ownHost(tui, handle);
      const screen = await host.capture(handle.pane!);
      const draft = screen === undefined ? '' : reads.draft(screen);
      if (draft === '') return methods.send(handle, text);
      if (reads.same(draft, text)) return (await ownHost(tui, handle)).keys(handle.pane!, ['Enter']);
      throw flumeError('AGENT_BUSY', {}, { variant: 'driver' });
    },

    async hasDraft(handle) {
      const host = tui.hostOf(handle);
      const screen = host && (await ownsPane(host, handle)) ? await host.capture(handle.pane!) : undefined;
      return screen !== undefined && reads.draft(screen) !== '';
    },

    async withdraw(handle, text) {
      const host = tui.hostOf(handle);
      return host ? withdrawText(host, handle, text, reads) : true;
    },

    async stop(handle, options = {}) {
      const host = tui.hostOf(handle);
      // Ctrl-C clears a draft or interrupts a turn, and a second one quits; every process of it goes.
      if (host) await quitAgent(host, handle, { agent: tui.agent, ...options });
    },
  };
  return methods;
}

/** The handle a start returns once the host opened the agent's pane: the request's, the host's answer, and the driver's own fields. */
export function startedHandle(
  key: string,
  request: StartRequest,
  host: PaneHost,
  opened: { pane?: string; pid?: number; identity?: string },
  started: { env: Record<string, string>; argv: string[]; version?: string; data?: Record<string, string> },
): AgentHandle {
  return {
    driver: key,
    sessionId: request.sessionId,
    host: host.key,
    ...(started.version ? { version: started.version } : {}),
    ...(opened.pane ? { pane: opened.pane } : {}),
    ...(opened.pid ? { pid: opened.pid } : {}),
    ...(opened.identity ? { paneIdentity: opened.identity } : {}),
    command: handedCommand(host, started.env, started.argv),
    cwd: request.place.path,
    startedAt: new Date().toISOString(),
    ...(started.data ? { data: started.data } : {}),
  };
}

/** The handle's host, once its pane is known to be the handle's own; else AGENT_NOT_UP, nothing typed. */
async function ownHost(tui: Tui, handle: AgentHandle): Promise<PaneHost> {
  const host = tui.hostOf(handle);
  if (host && handle.pane && (await ownsPane(host, handle))) return host;
  throw flumeError('AGENT_NOT_UP', { agent: tui.agent, sessionId: handle.sessionId }, {
    variant: 'driverNoPane',
    details: { pane: handle.pane, host: handle.host, sessionId: handle.sessionId },
  });
}
