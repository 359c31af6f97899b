/**
 * The driver of a program with a terminal UI in a pane (Codex, the Gemini CLI, OpenCode), as one
 * skeleton, `tuiDriver`: waiting for its input box, typing a prompt whole, resending by what the box
 * holds, reading a draft, taking back what was given up on, stopping it truthfully, confirming a
 * prompt in its record, and judging its state from its record and one look at its pane (`judgeTui`:
 * what "exited", "asking", "working" and "idle" mean, once for all). Each driver fills in what is its
 * own: how its screen reads (`TuiScreen`), where its record lives and what it says (`TuiRecord`), how
 * it shows a dialog, and how it starts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  canType,
  defineDriver,
  flumeError,
  lookAtPane,
  ownsPane,
  quitAgent,
  typeWhole,
  withdrawText,
  type AgentDriver,
  type AgentHandle,
  type AgentPlan,
  type AgentReading,
  type DoctorCheck,
  type Flume,
  type PaneHost,
  type PromptState,
  type StartRequest,
} from '../core/index.js';
import { handedCommand, printedCommand } from './printed.js';
import { awayFromMenus } from './prompts.js';

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
  /** The text as it is typed: a space before a first character that is a key there, one after a last word that opens a menu. */
  const typed = (text: string) => awayFromMenus(tui.keyStart?.test(text) ? ` ${text}` : text);
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
      await typeWhole(host, handle, typed(text), { draft: reads.draft, same: reads.same, paste: true, ...(tui.showMs ? { showMs: tui.showMs } : {}), ...(tui.enterAfterMs ? { enterAfterMs: tui.enterAfterMs } : {}) });
    },

    async resend(handle, text) {
      const host = await ownHost(tui, handle);
      const screen = await host.capture(handle.pane!);
      const draft = screen === undefined ? '' : reads.draft(screen);
      if (draft === '') return methods.send(handle, text);
      if (reads.same(draft, typed(text))) return (await ownHost(tui, handle)).keys(handle.pane!, ['Enter']);
      throw flumeError('AGENT_BUSY', {}, { variant: 'driver' });
    },

    async hasDraft(handle) {
      const host = tui.hostOf(handle);
      const screen = host && (await ownsPane(host, handle)) ? await host.capture(handle.pane!) : undefined;
      return screen !== undefined && reads.draft(screen) !== '';
    },

    async withdraw(handle, text) {
      const host = tui.hostOf(handle);
      return host ? withdrawText(host, handle, typed(text), reads) : true;
    },

    async stop(handle, options = {}) {
      const host = tui.hostOf(handle);
      // Ctrl-C clears a draft or interrupts a turn, and a second one quits; every process of it goes.
      if (host) await quitAgent(host, handle, { agent: tui.agent, ...options });
    },
  };
  return methods;
}

/** What a program's own record says of its agent, as the shared reading needs it. */
export interface TuiRecord {
  /** A turn runs. */
  working: boolean;
  /** The last turn ended (the agent's turn is over, or it was cut short). */
  turnEnded: boolean;
  /** The last turn was cut short by the user (Esc, Ctrl-C). */
  aborted: boolean;
  /** What the agent said last. */
  lastText?: string;
  lastActivity?: string;
}

/** How a driver reads its agent, past what every program with a terminal UI shares. */
export interface TuiReads<R extends TuiRecord> {
  /** Its name in messages (`Codex`). */
  agent: string;
  /** What its screen shows (`trust`, `working`, `input-ready`, or a view of its own). */
  classify(screen: string): string;
  /** The dialog open on it, from the screen's view, the screen and the record: a permission or a question, with what it needs. */
  dialog(view: string, screen: string | undefined, record: R | undefined): { dialog: 'permission' | 'question'; needs: string } | undefined;
  /** True once the record holds a prompt (before that the agent is starting, or idle at its box); default: once there is a record. */
  prompted?(record: R): boolean;
  /** What a turn the user cut short needs (`its turn was interrupted`). */
  cut: string;
}

/**
 * The reading of an agent from its record (undefined: none yet) and one look at its pane; `paneless`
 * when its host cannot type (its command went to the operator, who may not have run it yet).
 */
export function judgeTui<R extends TuiRecord>(reads: TuiReads<R>, handle: AgentHandle, record: R | undefined, pane: { own: boolean; alive: boolean; screen?: string } | undefined, paneless = false): AgentReading {
  const activity = record?.lastActivity ? { lastActivity: record.lastActivity } : {};
  if (!pane?.alive) {
    if (!record && paneless) return { state: 'not-up' };
    return { state: 'exited', ...(handle.pane && !pane?.own ? { paneGone: true } : {}), ...(record?.lastText ? { needs: record.lastText } : {}), ...activity };
  }
  const view = pane.screen === undefined ? 'unknown' : reads.classify(pane.screen);
  if (view === 'trust') {
    return { state: 'asking', dialog: 'trust', needs: `${reads.agent} asks whether to trust the folder ${handle.cwd}: answer it with \`flume trust --repo ${handle.cwd}\` (after reading the repository's flume config, if it has one), then \`flume retry\` the place` };
  }
  const open = reads.dialog(view, pane.screen, record);
  if (open) return { state: 'asking', ...open, ...activity };
  if (!record || !(reads.prompted?.(record) ?? true)) return { state: view === 'input-ready' ? 'idle' : 'starting', ...activity };
  if (record.working || view === 'working') return { state: 'working', ...activity };
  if (record.turnEnded) {
    const needs = record.aborted ? reads.cut : record.lastText;
    return { state: 'idle', turnEnded: true, ...(needs ? { needs } : {}), ...activity };
  }
  return { state: 'idle', ...activity };
}

/** A driver of a program with a terminal UI: what is its own, which `tuiDriver` fills the skeleton with. */
export interface TuiDriverSpec<R extends TuiRecord> extends Omit<Tui, 'hostOf' | 'agent'> {
  key: string;
  reads: TuiReads<R>;
  optionsSchema?: Record<string, unknown>;
  sessionVariables: readonly string[];
  checks(): Promise<DoctorCheck[]>;
  refuse?: AgentDriver['refuse'];
  start: AgentDriver['start'];
  plan: NonNullable<AgentDriver['plan']>;
  /** Its agent's own record, undefined while there is none. */
  record(handle: AgentHandle): Promise<R | undefined>;
  /** Was `text` taken as a prompt, as the record says: `taken`, `not-yet`, or `unknown` (no record). */
  promptState(record: R | undefined, text: string, since?: string): PromptState;
  /** True while its screen shows it holds `text` queued, to submit by itself later (the Gemini CLI). */
  held?(screen: string, text: string): boolean;
  usage: NonNullable<AgentDriver['usage']>;
  watchPaths: AgentDriver['watchPaths'];
  /** Its own stop, given the shared one (OpenCode keeps its usage first). */
  stop?(handle: AgentHandle, options: { hangUp?: boolean } | undefined, stop: AgentDriver['stop']): Promise<void>;
}

/** The driver: the shared skeleton filled with what `spec` says is the program's own. */
export function tuiDriver<R extends TuiRecord>(flume: Flume, spec: TuiDriverSpec<R>): AgentDriver {
  const hostOf = (handle: AgentHandle): PaneHost | undefined => flume.hosts.get(handle.host);
  const pane = tuiMethods({ ...spec, agent: spec.reads.agent, hostOf });
  const driver: AgentDriver = {
    key: spec.key,
    ...pane,
    ...(spec.optionsSchema ? { optionsSchema: spec.optionsSchema } : {}),
    sessionVariables: spec.sessionVariables,
    checks: spec.checks,
    ...(spec.refuse ? { refuse: spec.refuse } : {}),
    start: spec.start,
    plan: spec.plan,

    async confirm({ handle, text, since }) {
      const state = spec.promptState(await spec.record(handle), text, since);
      if (state === 'taken' || !spec.held) return state;
      // Submitted while its start or a turn runs, a program may hold the text queued (on its screen
      // only) and submit it by itself later: held, never to be typed again.
      const host = hostOf(handle);
      const look = host && handle.pane ? await lookAtPane(host, handle) : undefined;
      return look?.alive && look.screen !== undefined && spec.held(look.screen, text) ? 'held' : state;
    },

    async read(handle) {
      const host = hostOf(handle);
      const record = await spec.record(handle);
      // The screen after the record: it is the newer reading.
      const look = host && handle.pane ? await lookAtPane(host, handle) : undefined;
      return judgeTui(spec.reads, handle, record, look, !canType(host));
    },

    usage: spec.usage,
    watchPaths: spec.watchPaths,
    stop: spec.stop ? (handle, options) => spec.stop!(handle, options, pane.stop) : pane.stop,
  };
  return defineDriver(driver);
}

/**
 * Opens the agent's pane on `host` (titled `<place>:<stage>`, in the place's folder) running `argv`
 * with `env`, and answers the handle: the request's, the host's answer, and the driver's own fields.
 */
export async function openTui(key: string, request: StartRequest, host: PaneHost, started: { env: Record<string, string>; argv: string[]; version?: string; data?: Record<string, string> }): Promise<AgentHandle> {
  const opened = await host.open({ title: `${request.place.id}:${request.stage.name}`, cwd: request.place.path, argv: started.argv, env: started.env });
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

/** What `start` would run (a driver's `plan`): the command as the operator's shell would run it, with the program's version. */
export function plannedCommand(request: StartRequest, host: PaneHost, env: Record<string, string>, argv: string[], version: string | undefined): AgentPlan {
  return { command: printedCommand(env, argv), cwd: request.place.path, host: host.key, ...(version ? { version } : {}) };
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
