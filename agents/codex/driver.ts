/**
 * The Codex CLI driver (key `codex`): runs the interactive `codex` TUI in a pane with a `CODEX_HOME`
 * of the agent's own (home.ts), types prompts whole, confirms them in its rollout (rollout.ts), reads
 * its state from the rollout and its screen (screen.ts), and stops it only when every process of it
 * is gone. Written against flume's public entry alone, as a third party's driver would be.
 */
import { join } from 'node:path';
import { canType, isRepositoryTrusted, type AgentDriver, type AgentHandle, type AgentReading, type Flume, type PaneHost, type StartRequest } from '../../core/index.js';
import { agentHome, prepareHome } from './home.js';
import { commitFolders } from './sandbox.js';
import { findRollout, promptState, readRollout, readUsage, type RolloutState } from './rollout.js';
import { classifyScreen, draftText, sameDraft } from './screen.js';
import { codexChecks, codexVersion } from './checks.js';
import { CODEX, CODEX_SESSION_VARIABLES, codexEnvironment } from './environment.js';
import { requireProgram } from '../program.js';
import type { CodexOptions } from './options.js';
import { judgeTui, openTui, plannedCommand, tuiDriver, type TuiReads } from '../tui.js';

/**
 * Enter waits this long after the draft shows. A margin, not a measured need: Codex's TUI has a
 * paste-burst rule (fast keys read as a paste, an Enter inside one as a newline), but on this machine
 * an Enter pressed at once after the draft showed was taken too (the e2e suite passed with 0 here).
 */
const ENTER_AFTER_DRAFT_MS = 250;
/**
 * What a prompt must not start with (tui.ts `keyStart`): 0.171.0 ran a pasted `!touch x` as a shell
 * command and held a pasted `/touch …` in its command menu, and a tell `@` became `$imagegen` from its
 * menu; each with a space before it was taken as sent, trimmed (the conformance kit's `characters`
 * check).
 */
const KEY_START = /^[!/@$]/;
/** The longest wait for a typed draft to show before Enter is pressed anyway. */
const DRAFT_SHOW_MS = 1500;

/** How Codex's agent reads: its rollout, its screen, and its dialogs. */
const READS: TuiReads<RolloutState> = {
  agent: 'Codex',
  classify: classifyScreen,
  dialog(view, _screen, rollout) {
    if (view !== 'permission') return undefined;
    const call = rollout?.pendingCall;
    const what = call ? commandOf(call) : undefined;
    return { dialog: 'permission', needs: `approval to run ${what ? `\`${what}\`` : 'a command'}` };
  },
  cut: 'its turn was interrupted',
};

/** The Codex driver, configured from the config's `agents.codex`. */
export function codexDriver(flume: Flume, options: CodexOptions = {}, key = 'codex'): AgentDriver {
  const homeOf = (handle: AgentHandle): string => handle.data?.codexHome ?? agentHome(handle.sessionId);
  const rolloutOf = async (handle: AgentHandle): Promise<string | undefined> => handle.transcriptPath ?? findRollout(homeOf(handle), handle.cwd, handle.startedAt);

  const prepare = (request: StartRequest, host: PaneHost) => {
    const env = codexEnvironment(options, request.env);
    const binary = options.binary ?? 'codex';
    // The program is found first where a pane runs it; a host that cannot type hands the command to
    // the operator's own shell.
    if (canType(host)) requireProgram(CODEX, binary, env);
    const home = agentHome(request.sessionId);
    env.CODEX_HOME = home;
    const { stage } = request;
    const argv = [
      binary,
      ...(stage.model ? ['--model', stage.model] : []),
      ...(stage.permissionMode === 'bypassPermissions' ? ['--dangerously-bypass-approvals-and-sandbox'] : []),
      ...(options.args ?? []),
      // On a host that cannot type (the printed host) the command carries the prompt: `codex "<prompt>"` submits it at start.
      ...(!canType(host) ? [request.prompt] : []),
    ];
    return { env, binary, home, argv };
  };

  return tuiDriver(flume, {
    key,
    reads: READS,
    screen: { classify: classifyScreen, draft: draftText, same: sameDraft },
    showMs: DRAFT_SHOW_MS,
    enterAfterMs: ENTER_AFTER_DRAFT_MS,
    keyStart: KEY_START,
    sessionVariables: CODEX_SESSION_VARIABLES,
    checks: () => codexChecks(options),

    async start(request, host) {
      const { env, binary, home, argv } = prepare(request, host);
      // Folder trust follows the user's own decision (`flume trust`), as for Claude Code.
      const trusted = await isRepositoryTrusted(request.place.repo);
      // Under Codex's sandbox the agent may also write what a commit on its branch needs (sandbox.ts).
      const writable = request.stage.permissionMode === 'bypassPermissions' ? [] : await commitFolders(request.place.path, request.place.branch);
      const [version] = await Promise.all([codexVersion(binary, env), prepareHome(home, options, env, trusted ? [request.place.path] : [], writable)]);
      return openTui(key, request, host, { env, argv, version, data: { codexHome: home } });
    },

    async plan(request, host) {
      const { env, binary, argv } = prepare(request, host);
      const version = await codexVersion(binary, env);
      return plannedCommand(request, host, env, argv, version);
    },

    async record(handle) {
      const path = await rolloutOf(handle);
      return path ? readRollout(path) : undefined;
    },
    promptState,

    async usage(handle, cursor) {
      const path = await rolloutOf(handle);
      return path ? readUsage(path, cursor) : undefined;
    },

    watchPaths(handle) {
      // A folder's watch sees only its own entries: the rollout's day folder (named by the TUI's
      // start in local time; the next minute's too, for a start at midnight) is where it grows.
      const sessions = join(homeOf(handle), 'sessions');
      const start = Date.parse(handle.startedAt);
      const days = [start, start + 60_000].map((at) => join(sessions, ...localDay(new Date(at))));
      return [...new Set([sessions, ...days])];
    },
  });
}

/**
 * The reading of an agent from its rollout (undefined: none yet) and one look at its pane;
 * `paneless` when its host cannot type (its command went to the operator, who may not have run it yet).
 */
export function judge(handle: AgentHandle, rollout: RolloutState | undefined, pane: { own: boolean; alive: boolean; screen?: string } | undefined, paneless = false): AgentReading {
  return judgeTui(READS, handle, rollout, pane, paneless);
}

/** A date's `YYYY`, `MM`, `DD` in local time, as Codex names its rollout folders. */
function localDay(date: Date): string[] {
  return [String(date.getFullYear()), String(date.getMonth() + 1).padStart(2, '0'), String(date.getDate()).padStart(2, '0')];
}

/** The shell command of an `exec_command` call, else the tool's name. */
function commandOf(call: { name: string; arguments: string }): string {
  try {
    const args = JSON.parse(call.arguments) as { cmd?: unknown };
    if (typeof args.cmd === 'string') return args.cmd;
  } catch {
    // not JSON: name the tool
  }
  return call.name;
}
