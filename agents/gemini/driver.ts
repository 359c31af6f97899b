/**
 * The Gemini CLI driver (key `gemini`): runs the interactive `gemini` in a pane with the session id
 * flume gives it (`--session-id`), types prompts whole, confirms them in its chat file (chat.ts),
 * reads its state from the chat and its screen (screen.ts), and stops it only when every process of
 * it is gone. Written against flume's public entry alone, as a third party's driver would be.
 */
import { join } from 'node:path';
import {
  identityVariables,
  canType,
  defineDriver,
  isRepositoryTrusted,
  lookAtPane,
  type AgentDriver,
  type AgentHandle,
  type AgentReading,
  type Flume,
  type PaneHost,
  type StartRequest,
} from '../../core/index.js';
import { printedCommand } from '../printed.js';
import { startedHandle, tuiMethods } from '../tui.js';
import { chatFolderOf, findChat, promptState, readChat, readUsage, type ChatState } from './chat.js';
import { geminiChecks } from './checks.js';
import { programVersion } from '../program.js';
import { GEMINI_SESSION_VARIABLES, geminiEnvironment, geminiHome, requireProgram } from './environment.js';
import { GEMINI_OPTIONS_SCHEMA, type GeminiOptions } from './options.js';
import { askedFor, classifyScreen, draftText, isQueued, questionOf, sameDraft } from './screen.js';

/** A stage's permission mode as Gemini's `--approval-mode` (the default mode asks before each tool that writes or runs). */
const APPROVAL_MODES: Record<string, string> = { bypassPermissions: 'yolo', acceptEdits: 'auto_edit', plan: 'plan' };

/** The Gemini CLI driver, configured from the config's `agents.gemini`. */
export function geminiDriver(flume: Flume, options: GeminiOptions = {}, key = 'gemini'): AgentDriver {
  const hostOf = (handle: AgentHandle): PaneHost | undefined => flume.hosts.get(handle.host);
  const homeOf = (handle: AgentHandle): string => handle.data?.geminiHome ?? geminiHome(geminiEnvironment(options));
  const chatOf = async (handle: AgentHandle): Promise<ChatState | undefined> => {
    const path = handle.transcriptPath ?? (await findChat(homeOf(handle), handle.sessionId));
    return path ? readChat(path) : undefined;
  };

  const prepare = async (request: StartRequest, host: PaneHost) => {
    const env = geminiEnvironment(options, request.env);
    // Its shell tool runs git with no global config (GIT_CONFIG_GLOBAL=/dev/null): the identity the
    // user's git would commit with in the place is handed over in git's own variables.
    Object.assign(env, await identityVariables(request.place.path, env));
    const binary = options.binary ?? 'gemini';
    // The program is found first where a pane runs it; a host that cannot type hands the command to
    // the operator's own shell.
    if (canType(host)) requireProgram(binary, env);
    const { stage } = request;
    const mode = stage.permissionMode ? APPROVAL_MODES[stage.permissionMode] : undefined;
    // Folder trust follows the user's own decision (`flume trust`), as for Claude Code: trusted for
    // this session only (nothing written to Gemini's own list); otherwise Gemini asks, and status says so.
    const trusted = await isRepositoryTrusted(request.place.repo);
    const model = stage.model ?? options.model;
    const argv = [
      binary,
      '--session-id',
      request.sessionId,
      ...(model ? ['--model', model] : []),
      ...(mode ? ['--approval-mode', mode] : []),
      ...(trusted ? ['--skip-trust'] : []),
      ...(options.args ?? []),
      // On a host that cannot type (the printed host) the command carries the prompt: `-i` submits it at start.
      ...(!canType(host) ? ['--prompt-interactive', request.prompt] : []),
    ];
    return { env, binary, argv };
  };

  const driver: AgentDriver = {
    key,
    ...tuiMethods({ agent: 'Gemini CLI', screen: { classify: classifyScreen, draft: draftText, same: sameDraft }, hostOf }),
    optionsSchema: GEMINI_OPTIONS_SCHEMA,
    sessionVariables: GEMINI_SESSION_VARIABLES,
    checks: () => geminiChecks(options),

    async start(request, host) {
      const { env, binary, argv } = await prepare(request, host);
      const version = await programVersion(binary, env, '@google/gemini-cli');
      const opened = await host.open({ title: `${request.place.id}:${request.stage.name}`, cwd: request.place.path, argv, env });
      return startedHandle(key, request, host, opened, { env, argv, version, data: { geminiHome: geminiHome(env) } });
    },

    async plan(request, host) {
      const { env, binary, argv } = await prepare(request, host);
      const version = await programVersion(binary, env, '@google/gemini-cli');
      return { command: printedCommand(env, argv), cwd: request.place.path, host: host.key, ...(version ? { version } : {}) };
    },

    async confirm({ handle, text, since }) {
      const state = promptState(await chatOf(handle), text, since);
      if (state === 'taken') return state;
      // Submitted while its start or a turn runs, Gemini holds the text queued (on its screen only)
      // and submits it by itself later: held, never to be typed again.
      const host = hostOf(handle);
      const pane = host && handle.pane ? await lookAtPane(host, handle) : undefined;
      return pane?.alive && pane.screen !== undefined && isQueued(pane.screen, text) ? 'held' : state;
    },

    async read(handle) {
      const host = hostOf(handle);
      const chat = await chatOf(handle);
      // The screen after the chat: it is the newer reading.
      const pane = host && handle.pane ? await lookAtPane(host, handle) : undefined;
      return judge(handle, chat, pane, !canType(host));
    },

    async usage(handle, cursor) {
      const path = handle.transcriptPath ?? (await findChat(homeOf(handle), handle.sessionId));
      return path ? readUsage(path, cursor) : undefined;
    },

    watchPaths(handle) {
      // A folder's watch sees only its own entries: the chat grows in its project's chats folder.
      const home = homeOf(handle);
      return [join(home, '.gemini', 'tmp'), chatFolderOf(home, handle.cwd)];
    },
  };
  return defineDriver(driver);
}

/**
 * The reading of an agent from its chat (undefined: none yet) and one look at its pane; `paneless`
 * when its host cannot type (its command went to the operator, who may not have run it yet).
 */
export function judge(handle: AgentHandle, chat: ChatState | undefined, pane: { own: boolean; alive: boolean; screen?: string } | undefined, paneless = false): AgentReading {
  const activity = chat?.lastActivity ? { lastActivity: chat.lastActivity } : {};
  if (!pane?.alive) {
    if (!chat && paneless) return { state: 'not-up' };
    return { state: 'exited', ...(handle.pane && !pane?.own ? { paneGone: true } : {}), ...(chat?.lastText ? { needs: chat.lastText } : {}), ...activity };
  }
  const view = pane.screen === undefined ? 'unknown' : classifyScreen(pane.screen);
  if (view === 'trust') {
    return { state: 'asking', dialog: 'trust', needs: `Gemini CLI asks whether to trust the folder ${handle.cwd}: answer it with \`flume trust --repo ${handle.cwd}\` (after reading the repository's flume config, if it has one), then \`flume retry\` the place` };
  }
  if (view === 'permission') {
    // The chat holds the reply that calls the tool with no calls yet: the screen names what is asked.
    const asked = pane.screen ? askedFor(pane.screen) : undefined;
    const what = asked ? (asked.what ? `\`${asked.what}\`` : asked.tool) : chat?.pendingCall?.name;
    return { state: 'asking', dialog: 'permission', needs: `approval to run ${what ?? 'a tool'}`, ...activity };
  }
  if (view === 'question') {
    // Its `ask_user` tool: text typed now would answer the question, so it is the operator's.
    const question = pane.screen ? questionOf(pane.screen) : '';
    return { state: 'asking', dialog: 'question', needs: question ? `an answer: ${question}` : 'an answer to its question', ...activity };
  }
  if (!chat?.prompts.length) return { state: view === 'input-ready' ? 'idle' : 'starting', ...activity };
  if (chat.working || view === 'working') return { state: 'working', ...activity };
  if (chat.turnEnded) {
    const needs = chat.aborted ? 'its turn was cancelled' : chat.lastText;
    return { state: 'idle', turnEnded: true, ...(needs ? { needs } : {}), ...activity };
  }
  return { state: 'idle', ...activity };
}
