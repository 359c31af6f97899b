/**
 * The Claude Code driver: starts `claude --session-id <uuid>` on a pane host, types prompts whole,
 * confirms them in the transcript, reads the agent's state from its transcript (and, for dialogs,
 * its screen and its own state file), and stops it only when its process is truly gone.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { agentBaseEnvironment, canType, defineDriver, flumeError, isRepositoryTrusted, lookAtPane, ownsPane, sameProcess, signalQuietly, waitForChange, type AgentDriver, type AgentHandle, type Flume, type PaneHost, type StartRequest, waitFor, withdrawText } from '../../core/index.js';
import { configDir as defaultConfigDir, findTranscript, transcriptPath } from './paths.js';
import { findPrompt, readState, sessionState } from './transcript.js';
import { isDraft, judgeAgent, readAgents, readTranscript, sameText } from './reading.js';
import { classifyScreen, draftText, footerReady, holdsPrompt } from './screen.js';
import { preseed } from './preseed.js';
import { handedCommand, printedCommand } from '../printed.js';
import { patternsFor, type ClaudeCodePatterns } from './patterns.js';
import { asRecorded, normalize, sameText as sameRecorded } from './records.js';
import { programVersion } from './version.js';
import { commandsRefused } from '../prompts.js';
import { claudeCodeChecks } from './checks.js';
import { agentEnvironment, CLAUDE_SESSION_VARIABLES, requireProgram, type ClaudeCodeOptions } from './environment.js';
import { readUsage } from './usage.js';

const POLL_MS = 100;
/** The longest wait for the footer's second render once the box is drawn (70–200 ms in 2.1.332, more on a loaded machine). */
const READY_FOOTER_WAIT_MS = 2000;
/** The longest wait between two looks for a starting agent's input box. */
const INPUT_LOOK_MAX_MS = 2000;
/**
 * For its first seconds, a starting agent is looked at this often at most: Claude Code draws its box
 * about a second after it starts, and a look that comes late is latency on every stage change
 * (bench/supervisor-real.bench.mjs). Past STARTING_FOR_MS, looks back off towards INPUT_LOOK_MAX_MS.
 */
const STARTING_LOOK_MS = 150;
const STARTING_FOR_MS = 4000;

/** The Claude Code driver, under `key` (`claude-code`; `printed` forces the printed host). */
export function claudeCodeDriver(flume: Flume, options: ClaudeCodeOptions = {}, key = 'claude-code'): AgentDriver {
  const hostOf = (handle: AgentHandle): PaneHost | undefined => flume.hosts.get(handle.host);
  const configOf = (handle: AgentHandle) => handle.data?.configDir ?? options.configDir ?? defaultConfigDir();
  const transcriptOf = async (handle: AgentHandle) => {
    const fast = handle.transcriptPath ?? transcriptPath(configOf(handle), handle.cwd, handle.sessionId);
    return existsSync(fast) ? fast : findTranscript(configOf(handle), handle.sessionId);
  };

  /** The agent's environment, program and config folder; refuses a program that cannot start on a pane. */
  const prepare = async (request: StartRequest, host: PaneHost) => {
    const env = agentEnvironment(options, request.env);
    // A pane whose program cannot start dies at once, and the dead pane keeps its host alive: find
    // the program first (the printed host's command runs in the operator's own shell).
    if (canType(host)) await requireProgram(options.binary ?? 'claude', env, host);
    const configDir = options.configDir ?? env.CLAUDE_CONFIG_DIR ?? defaultConfigDir(env);
    return { env, binary: options.binary ?? 'claude', configDir };
  };
  const argvFor = (request: StartRequest, host: PaneHost, binary: string, version: string | undefined): string[] => {
    const { stage, sessionId } = request;
    return [
      binary,
      '--session-id',
      sessionId,
      ...(stage.model ? ['--model', stage.model] : []),
      ...(stage.permissionMode ? ['--permission-mode', stage.permissionMode] : []),
      ...(stage.appendSystemPrompt ? ['--append-system-prompt', stage.appendSystemPrompt] : []),
      ...(options.args ?? []),
      // On a host that cannot type (the printed host) the command carries the prompt: `claude "<prompt>"` submits it at start.
      ...(!canType(host) ? [asRecorded(request.prompt, patternsFor(version))] : []),
    ];
  };

  const driver: AgentDriver = {
    key,
    sessionVariables: CLAUDE_SESSION_VARIABLES,
    inContainers: true,
    checks: () => claudeCodeChecks(options),
    // Its commands are read past any space before them, pasted or typed (` /init …` ran `/init`).
    refuse: commandsRefused('Claude Code'),
    // The Messages API: where ANTHROPIC_BASE_URL points, else Anthropic's.
    egress: (env) => [endpointOf(env.ANTHROPIC_BASE_URL) ?? 'api.anthropic.com:443'],
    async start(request, host) {
      const { env, binary, configDir } = await prepare(request, host);
      // Claude Code's folder trust follows the user's own decision (`flume trust`): never taken for them.
      const trusted = await isRepositoryTrusted(request.place.repo);
      // The version picks the patterns every later reading of this agent uses; asked once per program.
      const [version] = await Promise.all([
        programVersion(binary, env, host),
        preseed(configDir, { trust: trusted ? [request.place.repo, request.place.path] : [], root: request.place.repo, apiKey: env.ANTHROPIC_API_KEY, explicit: Boolean(env.CLAUDE_CONFIG_DIR), home: env.HOME, untrusted: Boolean(request.place.container) }),
      ]);
      const argv = argvFor(request, host, binary, version);
      const { sessionId, stage } = request;
      const opened = await host.open({ title: `${request.place.id}:${stage.name}`, cwd: request.place.path, argv, env });
      return {
        driver: key,
        sessionId,
        host: host.key,
        ...(version ? { version } : {}),
        ...(opened.pane ? { pane: opened.pane } : {}),
        ...(opened.pid ? { pid: opened.pid } : {}),
        ...(opened.identity ? { paneIdentity: opened.identity } : {}),
        transcriptPath: transcriptPath(configDir, request.place.path, sessionId),
        command: handedCommand(host, env, argv),
        cwd: request.place.path,
        startedAt: new Date().toISOString(),
        data: { configDir },
      };
    },

    async plan(request, host) {
      // What start does but its writes (the config folder's pre-seed) and the pane: the same checks,
      // the same argv, so what a dry run shows cannot drift from what a launch runs.
      const { env, binary } = await prepare(request, host);
      const version = await programVersion(binary, env, host);
      const argv = argvFor(request, host, binary, version);
      return { command: printedCommand(env, argv), cwd: request.place.path, host: host.key, ...(version ? { version } : {}) };
    },

    async waitForInput(handle, timeoutMs) {
      const host = hostOf(handle);
      if (!host || !handle.pane) return 'slow';
      const patterns = patternsFor(handle.version);
      const deadline = Date.now() + timeoutMs;
      const begun = Date.now();
      let polls: number | undefined;
      for (;;) {
        const { alive, screen } = await lookAtPane(host, handle);
        if (!alive) return 'exited';
        // Its folder-trust question holds it until the user answers: waiting longer changes nothing.
        if (screen !== undefined && classifyScreen(screen, patterns) === 'trust') return 'slow';
        if (screen !== undefined && classifyScreen(screen, patterns) === 'input-ready') {
          if (timeoutMs === 0) return 'ready';
          // The box is drawn a moment before keys reach it: an Enter sent before the footer's second
          // render is lost. Wait for that render; where it does not come (a draft in the box hides
          // it), look again once the box has settled.
          if (await waitForFooter(host, handle.pane, patterns, Math.min(deadline, Date.now() + READY_FOOTER_WAIT_MS))) return 'ready';
          await sleep(patterns.screen.readySettleMs);
          const again = await host.capture(handle.pane);
          if (again !== undefined && classifyScreen(again, patterns) === 'input-ready') return 'ready';
        }
        if (Date.now() >= deadline) return 'slow';
        // Looked at less often as the wait grows (100 ms up to 2 s): each look is a process, and many
        // slow starts at once would otherwise fill the supervisor with them (a spawn holds its event
        // loop for tens of ms on a loaded host). Its state file appearing (Claude Code writes it as it
        // comes up) or its transcript starting cuts a wait short.
        polls = (polls ?? 0) + 1;
        const interval = Date.now() - begun < STARTING_FOR_MS ? Math.min(STARTING_LOOK_MS, POLL_MS * 1.3 ** polls) : Math.min(INPUT_LOOK_MAX_MS, POLL_MS * 1.3 ** polls);
        await waitForChange(driver.watchPaths(handle), Math.min(interval, Math.max(0, deadline - Date.now())));
      }
    },

    async send(handle, raw) {
      const host = await requireHost(hostOf(handle), handle);
      // A TAB typed is a key to Claude Code and a TAB pasted becomes spaces: send those spaces, so
      // what the transcript holds is what was sent (findPrompt looks for the same).
      const patterns = patternsFor(handle.version);
      const text = asRecorded(raw, patterns);
      // One bracketed paste whatever it asked its terminal for: typed key by key, a TAB is a key to it.
      await host.type(handle.pane!, text, { paste: true });
      // Let the TUI take the text in before Enter submits it: Enter once the box shows it (the
      // lines, or the placeholder of a long paste), looked at every 30 ms, and at most 1 s for a
      // paste (500 ms for a short line) where it never shows. On a loaded machine 2.1.332 echoed a
      // short line more than 80 ms after it was typed, and an Enter sent before the echo was lost
      // now and then (the conformance kit's resend check, test/e2e/conformance.test.ts).
      const until = Date.now() + (text.includes('\n') || text.length > 200 ? 1000 : 500);
      for (;;) {
        const screen = await host.capture(handle.pane!);
        if (screen !== undefined && sameText(draftText(screen, patterns), text, patterns)) break;
        if (Date.now() >= until) break;
        await sleep(30);
      }
      await requireHost(host, handle);
      await host.keys(handle.pane!, ['Enter']);
    },

    async resend(handle, text) {
      const host = await requireHost(hostOf(handle), handle);
      const patterns = patternsFor(handle.version);
      const screen = await host.capture(handle.pane!);
      const draft = screen === undefined ? '' : draftText(screen, patterns);
      if (draft === '') return driver.send(handle, text);
      if (sameText(draft, asRecorded(text, patterns), patterns)) return (await requireHost(host, handle)).keys(handle.pane!, ['Enter']);
      throw flumeError('AGENT_BUSY', {}, {
        variant: 'driver',
      });
    },

    async confirm({ handle, text, since }) {
      const path = await transcriptOf(handle);
      const patterns = patternsFor(handle.version);
      const state = path ? await findPrompt(path, text, since, patterns) : 'unknown';
      // Sent and echoed, but held before the transcript has it (a slow UserPromptSubmit hook, or
      // queued behind a turn): typed again, it would go twice.
      if (state !== 'taken') return (await heldOnScreen(hostOf(handle), handle, text, patterns)) ? 'held' : state;
      // The last prompt, answered by nothing yet, is taken, or was cancelled with Esc and put back
      // in the input box (2.1.332): the transcript holds both alike, the box tells them apart.
      if (!path) return state;
      const open = (await readState(path, { patterns })).openPrompt;
      if (open === undefined || !sameRecorded(open, normalize(asRecorded(text, patterns)), patterns)) return state;
      return (await cancelledPrompt(hostOf(handle), handle, open, patterns)) ? 'not-yet' : state;
    },

    async read(handle) {
      const host = hostOf(handle);
      const session = await sessionState(configOf(handle), handle.sessionId);
      const transcript = await readTranscript(handle, await transcriptOf(handle));
      // One look at the pane, after the transcript (the screen is the newer reading, as judgeAgent
      // assumes): its identity first, so a pane id tmux gave a later agent never reads as this one alive.
      const pane = host && handle.pane ? await lookAtPane(host, handle) : undefined;
      const own = pane?.own ?? false;
      const alive = pane ? pane.alive : Boolean(session && sameProcess(session.pid, session.procStart));
      return judgeAgent(handle, { session, own, alive, transcript, screen: pane?.screen, paneless: !canType(host) });
    },

    async readMany(handles) {
      return readAgents(handles, { host: (key) => flume.hosts.get(key), configOf, transcriptOf });
    },

    async hasDraft(handle) {
      const host = hostOf(handle);
      const screen = host && (await ownsPane(host, handle)) ? await host.capture(handle.pane!) : undefined;
      return screen !== undefined && draftText(screen, patternsFor(handle.version)) !== '';
    },

    async withdraw(handle, text) {
      const host = hostOf(handle);
      const patterns = patternsFor(handle.version);
      return host ? withdrawText(host, handle, asRecorded(text, patterns), { draft: (screen) => draftText(screen, patterns), same: (draft, sent) => sameText(draft, sent, patterns) }) : true;
    },

    async stop(handle, stopOptions = {}) {
      const host = hostOf(handle);
      // A pane that is not this agent's belongs to another agent (or to nobody): leave it be.
      if (host && handle.pane && !(await ownsPane(host, handle))) return;
      if (host && handle.pane) {
        // hangUp: the stage delivered, nothing of the agent's turn is wanted; closing the pane ends it.
        if (!stopOptions.hangUp && (await host.alive(handle.pane))) {
          // Two Ctrl-C in a row is Claude Code's own way out of an idle session. A working one (2.1.332)
          // takes the first pair as "cancel the turn" and "clear the prompt it put back in the box",
          // so a second pair follows. The pane is closed after, whatever happened.
          for (const waitMs of [1500, 5000]) {
            await host.keys(handle.pane, ['C-c']).catch(() => undefined);
            await sleep(150);
            await host.keys(handle.pane, ['C-c']).catch(() => undefined);
            if (await waitFor(async () => !(await host.alive(handle.pane!)), waitMs)) break;
          }
        }
        await host.close(handle.pane);
      } else {
        // The session's file names its process; one killed outright leaves it, naming a pid that may
        // be another program's by now: only the process that started at its procStart is signalled.
        const session = await sessionState(configOf(handle), handle.sessionId);
        const its = () => session !== undefined && sameProcess(session.pid, session.procStart);
        if (its()) signalQuietly(session!.pid, 'SIGTERM');
        if (its() && !(await waitFor(async () => !its(), 5000)) && its()) signalQuietly(session!.pid, 'SIGKILL');
      }
      const session = handle.pid === undefined ? await sessionState(configOf(handle), handle.sessionId) : undefined;
      const pid = handle.pid ?? session?.pid;
      const start = handle.pid !== undefined ? handle.pidStart : session?.procStart;
      if (pid && sameProcess(pid, start) && !(await waitFor(async () => !sameProcess(pid, start), 3000))) {
        throw flumeError('AGENT_DID_NOT_EXIT', { sessionId: handle.sessionId, pid }, {
          variant: 'session',
          details: { pid, sessionId: handle.sessionId },
        });
      }
    },

    async usage(handle, cursor) {
      const path = await transcriptOf(handle);
      const read = path ? await readUsage(path, cursor) : undefined;
      return read ? { usage: read.usage, cursor: read.cursor } : undefined;
    },

    watchPaths(handle) {
      const path = handle.transcriptPath ?? transcriptPath(configOf(handle), handle.cwd, handle.sessionId);
      const sessions = join(configOf(handle), 'sessions');
      // Its own state file too, by name: rewritten in place, it changes no folder's time.
      return [dirname(path), sessions, ...(handle.pid ? [join(sessions, `${handle.pid}.json`)] : [])];
    },
  };
  return defineDriver(driver);
}

/** Polls the pane until its footer has had its second render (true), or until `until` (false). */
async function waitForFooter(host: PaneHost, pane: string, patterns: ClaudeCodePatterns, until: number): Promise<boolean> {
  if (!patterns.screen.readyFooter) return false;
  for (;;) {
    const screen = await host.capture(pane);
    if (screen !== undefined && footerReady(screen, patterns)) return true;
    if (Date.now() >= until) return false;
    await sleep(50);
  }
}

/** True when the agent's input box holds `text`, put back there by a cancel (Esc before any reply). */
async function cancelledPrompt(host: PaneHost | undefined, handle: AgentHandle, text: string, patterns: ClaudeCodePatterns): Promise<boolean> {
  if (!host || !handle.pane || !(await ownsPane(host, handle))) return false;
  const screen = await host.capture(handle.pane);
  return screen !== undefined && isDraft(screen, text, patterns);
}

/** True when the handle's own pane shows `text` sent and held before the transcript has it (holdsPrompt). */
async function heldOnScreen(host: PaneHost | undefined, handle: AgentHandle, text: string, patterns: ClaudeCodePatterns): Promise<boolean> {
  if (!host || !handle.pane) return false;
  const { own, screen } = await lookAtPane(host, handle);
  return own && screen !== undefined && holdsPrompt(screen, asRecorded(text, patterns), patterns);
}

/** The handle's host, once its pane is known to be the handle's own; else AGENT_NOT_UP, nothing typed. */
async function requireHost(host: PaneHost | undefined, handle: AgentHandle): Promise<PaneHost> {
  if (host && handle.pane) {
    if (await ownsPane(host, handle)) return host;
    throw flumeError('AGENT_NOT_UP', { pane: handle.pane, sessionId: handle.sessionId }, {
      variant: 'paneGone',
      details: { pane: handle.pane, host: handle.host, sessionId: handle.sessionId },
    });
  }
  throw flumeError('AGENT_NOT_UP', { sessionId: handle.sessionId, host: handle.host }, {
    variant: 'elsewhere',
  });
}

/** The `host:port` an endpoint URL names (its scheme's port where it names none); undefined for none or a bad one. */
function endpointOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'http:' ? '80' : '443');
    return `${parsed.hostname}:${port}`;
  } catch {
    return undefined;
  }
}
