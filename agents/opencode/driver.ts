/**
 * The OpenCode driver (key `opencode`): runs the interactive `opencode` TUI in a pane with a data
 * folder of the agent's own (home.ts) and its HTTP server on a port flume picks, types prompts whole,
 * confirms them in its record, read from that server (record.ts), reads its state from the record
 * and its screen (screen.ts), and stops it only when every process of it is gone. Written against
 * flume's public entry alone, as a third party's driver would be.
 */
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { canType, type AgentDriver, type AgentHandle, type AgentReading, type Flume, type PaneHost, type StartRequest } from '../../core/index.js';
import { agentConfig, agentHome, dataFolder, homeEnvironment, keepUsage, keptUsage, prepareHome, serverPassword, userDataDir } from './home.js';
import { promptState, readRecord, sameUsage, steps, usageOf, type RecordState, type Server } from './record.js';
import { classifyScreen, draftText, sameDraft } from './screen.js';
import { opencodeChecks } from './checks.js';
import { programVersion, requireProgram } from '../program.js';
import { OPENCODE, OPENCODE_SESSION_VARIABLES, opencodeEnvironment } from './environment.js';
import { OPENCODE_OPTIONS, type OpencodeOptions } from './options.js';
import { judgeTui, openTui, plannedCommand, tuiDriver, type TuiReads } from '../tui.js';

/** Enter waits this long after the draft shows (the TUI redraws a long draft up to a second late). */
const ENTER_AFTER_DRAFT_MS = 250;
/** The longest wait for a typed draft to show before Enter is pressed anyway. */
const DRAFT_SHOW_MS = 2500;

/** The longest wait, when an agent is hung up, for the model step it is in to close and write its tokens. */
const STEP_CLOSE_MS = 10_000;
/** How often the record is read meanwhile. */
const STEP_POLL_MS = 200;

/**
 * What a prompt must not start with (tui.ts `keyStart`): pasted, `/` is still its command (`/init`
 * sent its own template, `/exit` quit it, `/` alone opened its agent list).
 */
const KEY_START = /^\//;

/** How OpenCode's agent reads: its record, its screen, and its dialogs (the record names them). */
const READS: TuiReads<RecordState> = {
  agent: 'OpenCode',
  classify: classifyScreen,
  dialog(view, _screen, record) {
    if (record?.question) return { dialog: 'question', needs: record.question };
    if (view === 'permission' || record?.permission) return { dialog: 'permission', needs: `approval for ${record?.permission ?? 'a tool call'}` };
    return undefined;
  },
  cut: 'its turn was interrupted',
};

/** The OpenCode driver, configured from the config's `agents.opencode`. */
export function opencodeDriver(flume: Flume, options: OpencodeOptions = {}, key = 'opencode'): AgentDriver {
  const homeOf = (handle: AgentHandle): string => handle.data?.opencodeHome ?? agentHome(handle.sessionId);
  const serverOf = async (handle: AgentHandle): Promise<Server | undefined> => {
    const port = Number(handle.data?.port);
    if (!port) return undefined;
    return { port, password: await serverPassword(homeOf(handle)) };
  };
  const recordOf = async (handle: AgentHandle): Promise<RecordState | undefined> => {
    const server = await serverOf(handle);
    return server ? readRecord(server, handle.cwd, handle.startedAt) : undefined;
  };

  /** The record once the step open now has closed (or `STEP_CLOSE_MS` passed, or none was open). */
  const stepClosed = async (handle: AgentHandle): Promise<RecordState | undefined> => {
    const first = await recordOf(handle);
    if (!first || !steps(first).open) return first;
    const { closed } = steps(first);
    let last = first;
    for (const deadline = Date.now() + STEP_CLOSE_MS; Date.now() < deadline; ) {
      await sleep(STEP_POLL_MS);
      const now = await recordOf(handle);
      if (!now) break;
      last = now;
      if (steps(now).closed > closed || !steps(now).open) break;
    }
    return last;
  };

  const prepare = async (request: StartRequest, host: PaneHost) => {
    const env = opencodeEnvironment(options, request.env);
    const binary = options.binary ?? 'opencode';
    // The program is found first where a pane runs it; a host that cannot type hands the command to
    // the operator's own shell.
    if (canType(host)) requireProgram(OPENCODE, binary, env);
    const home = agentHome(request.sessionId);
    Object.assign(env, homeEnvironment(home));
    const port = await freePort();
    const argv = [
      binary,
      '--port',
      String(port),
      ...(options.args ?? []),
      // On a host that cannot type (the printed host) the command carries the prompt.
      ...(!canType(host) ? ['--prompt', request.prompt] : []),
    ];
    const config = agentConfig(options, request.stage.model ?? options.model, request.stage.permissionMode === 'bypassPermissions');
    return { env, binary, home, port, argv, config };
  };

  return tuiDriver(flume, {
    key,
    reads: READS,
    screen: { classify: classifyScreen, draft: draftText, same: sameDraft },
    showMs: DRAFT_SHOW_MS,
    enterAfterMs: ENTER_AFTER_DRAFT_MS,
    keyStart: KEY_START,
    optionsSchema: OPENCODE_OPTIONS,
    sessionVariables: OPENCODE_SESSION_VARIABLES,
    checks: () => opencodeChecks(options),

    async start(request, host) {
      const { env, binary, home, port, argv, config } = await prepare(request, host);
      const [version, password] = await Promise.all([programVersion(binary, env, OPENCODE.npm), prepareHome(home, config, userDataDir(options, opencodeEnvironment(options, request.env)))]);
      env.OPENCODE_SERVER_PASSWORD = password;
      return openTui(key, request, host, { env, argv, version, data: { opencodeHome: home, port: String(port) } });
    },

    async plan(request, host) {
      const { env, binary, argv } = await prepare(request, host);
      const version = await programVersion(binary, env, OPENCODE.npm);
      return plannedCommand(request, host, { ...env, OPENCODE_SERVER_PASSWORD: '' }, argv, version);
    },

    record: recordOf,
    promptState,

    async usage(handle, cursor) {
      const record = await recordOf(handle);
      if (record) return usageOf(record, cursor);
      // Its server is gone with the program: what its record said when it was stopped.
      const kept = await keptUsage(homeOf(handle));
      return kept ? sameUsage(kept.sessionId, kept.usage, cursor) : undefined;
    },

    async stop(handle, stopOptions, stop) {
      // Hung up as its stage delivered: the step that made the deliverable (a commit in a tool call)
      // writes its tokens only as it closes, a moment after; its usage is read once it has.
      const record = stopOptions?.hangUp ? await stepClosed(handle) : await recordOf(handle);
      if (record) await keepUsage(homeOf(handle), { sessionId: record.sessionId, usage: usageOf(record).usage });
      return stop(handle, stopOptions);
    },

    watchPaths(handle) {
      // The database's write-ahead log grows with every message; a folder's watch sees its entries.
      return [dataFolder(homeOf(handle))];
    },
  });
}

/**
 * The reading of an agent from its record (undefined: none yet, or its server gone) and one look at
 * its pane; `paneless` when its host cannot type (its command went to the operator).
 */
export function judge(handle: AgentHandle, record: RecordState | undefined, pane: { own: boolean; alive: boolean; screen?: string } | undefined, paneless = false): AgentReading {
  return judgeTui(READS, handle, record, pane, paneless);
}

/** A TCP port free on 127.0.0.1 now, for the TUI's server. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
