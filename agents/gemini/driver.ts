/**
 * The Gemini CLI driver (key `gemini`): runs the interactive `gemini` in a pane with the session id
 * flume gives it (`--session-id`), types prompts whole, confirms them in its chat file (chat.ts),
 * reads its state from the chat and its screen (screen.ts), and stops it only when every process of
 * it is gone. Written against flume's public entry alone, as a third party's driver would be.
 */
import { join } from 'node:path';
import { canType, identityVariables, isRepositoryTrusted, type AgentDriver, type AgentHandle, type AgentReading, type Flume, type PaneHost, type StartRequest } from '../../core/index.js';
import { judgeTui, openTui, plannedCommand, tuiDriver, type TuiReads } from '../tui.js';
import { commandsRefused } from '../prompts.js';
import { chatFolderOf, findChat, promptState, readChat, readUsage, type ChatState } from './chat.js';
import { geminiChecks } from './checks.js';
import { programVersion, requireProgram } from '../program.js';
import { GEMINI, GEMINI_SESSION_VARIABLES, geminiEnvironment, geminiHome } from './environment.js';
import { GEMINI_OPTIONS_SCHEMA, type GeminiOptions } from './options.js';
import { askedFor, classifyScreen, draftText, isQueued, questionOf, sameDraft } from './screen.js';

/** A stage's permission mode as Gemini's `--approval-mode` (the default mode asks before each tool that writes or runs). */
const APPROVAL_MODES: Record<string, string> = { bypassPermissions: 'yolo', acceptEdits: 'auto_edit', plan: 'plan' };

/** How the Gemini CLI's agent reads: its chat, its screen, and its dialogs. */
const READS: TuiReads<ChatState> = {
  agent: 'Gemini CLI',
  classify: classifyScreen,
  dialog(view, screen, chat) {
    if (view === 'permission') {
      // The chat holds the reply that calls the tool with no calls yet: the screen names what is asked.
      const asked = screen ? askedFor(screen) : undefined;
      const what = asked ? (asked.what ? `\`${asked.what}\`` : asked.tool) : chat?.pendingCall?.name;
      return { dialog: 'permission', needs: `approval to run ${what ?? 'a tool'}` };
    }
    if (view === 'question') {
      // Its `ask_user` tool: text typed now would answer the question, so it is the operator's.
      const question = screen ? questionOf(screen) : '';
      return { dialog: 'question', needs: question ? `an answer: ${question}` : 'an answer to its question' };
    }
    return undefined;
  },
  prompted: (chat) => chat.prompts.length > 0,
  cut: 'its turn was cancelled',
};

/** The Gemini CLI driver, configured from the config's `agents.gemini`. */
export function geminiDriver(flume: Flume, options: GeminiOptions = {}, key = 'gemini'): AgentDriver {
  const homeOf = (handle: AgentHandle): string => handle.data?.geminiHome ?? geminiHome(geminiEnvironment(options));
  const chatPath = async (handle: AgentHandle): Promise<string | undefined> => handle.transcriptPath ?? (await findChat(homeOf(handle), handle.sessionId));

  const prepare = async (request: StartRequest, host: PaneHost) => {
    const env = geminiEnvironment(options, request.env);
    // Its shell tool runs git with no global config (GIT_CONFIG_GLOBAL=/dev/null): the identity the
    // user's git would commit with in the place is handed over in git's own variables.
    Object.assign(env, await identityVariables(request.place.path, env));
    const binary = options.binary ?? 'gemini';
    // The program is found first where a pane runs it; a host that cannot type hands the command to
    // the operator's own shell.
    if (canType(host)) requireProgram(GEMINI, binary, env);
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

  return tuiDriver(flume, {
    key,
    reads: READS,
    screen: { classify: classifyScreen, draft: draftText, same: sameDraft },
    // `/init …` sent its own template to the model, `/` alone picked `/clear`, `/quit` quit it.
    refuse: commandsRefused('the Gemini CLI'),
    optionsSchema: GEMINI_OPTIONS_SCHEMA,
    sessionVariables: GEMINI_SESSION_VARIABLES,
    checks: () => geminiChecks(options),

    async start(request, host) {
      const { env, binary, argv } = await prepare(request, host);
      const version = await programVersion(binary, env, GEMINI.npm);
      return openTui(key, request, host, { env, argv, version, data: { geminiHome: geminiHome(env) } });
    },

    async plan(request, host) {
      const { env, binary, argv } = await prepare(request, host);
      const version = await programVersion(binary, env, GEMINI.npm);
      return plannedCommand(request, host, env, argv, version);
    },

    async record(handle) {
      const path = await chatPath(handle);
      return path ? readChat(path) : undefined;
    },
    promptState,
    // Submitted while it starts or a turn runs, Gemini shows the text queued and submits it later.
    held: isQueued,

    async usage(handle, cursor) {
      const path = await chatPath(handle);
      return path ? readUsage(path, cursor) : undefined;
    },

    watchPaths(handle) {
      // A folder's watch sees only its own entries: the chat grows in its project's chats folder.
      const home = homeOf(handle);
      return [join(home, '.gemini', 'tmp'), chatFolderOf(home, handle.cwd)];
    },
  });
}

/**
 * The reading of an agent from its chat (undefined: none yet) and one look at its pane; `paneless`
 * when its host cannot type (its command went to the operator, who may not have run it yet).
 */
export function judge(handle: AgentHandle, chat: ChatState | undefined, pane: { own: boolean; alive: boolean; screen?: string } | undefined, paneless = false): AgentReading {
  return judgeTui(READS, handle, chat, pane, paneless);
}
