/**
 * The real OpenCode (the pinned opencode-ai 1.18.33) against a scripted Chat Completions API on
 * 127.0.0.1, in one call: `opencodeEnv({ script })` starts the API and answers the
 * `agents.opencode` options that point flume's OpenCode driver at it (a driver test, the conformance
 * kit or a flume config uses those as they are). `startOpencodePane` runs the program directly in a
 * tmux pane of the test's own, with the folder and config flume's driver writes, for tests that pin
 * what the program itself shows and records.
 *
 * Run only inside a loopback-only network namespace (`sh scripts/test.sh` does that).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../agents/opencode/driver.js';
import { agentConfig, homeEnvironment, prepareHome } from '../../agents/opencode/home.js';
import type { OpencodeOptions } from '../../agents/opencode/options.js';
import { get, readRecord, type Message, type RecordState, type Server } from '../../agents/opencode/record.js';
import { PROJECT, remove, tempDir } from './repo.js';
import { startChatApi, type ChatApi, type Script } from './chat-api.js';
import { HANG_MS } from './wait.js';

/** The pinned OpenCode. */
export const OPENCODE_BIN = join(PROJECT, 'node_modules', '.bin', 'opencode');
/** The version the suite runs. */
export const OPENCODE_VERSION = '1.18.33';
/** The model, as OpenCode names it, and the name the scripted API is asked for. */
export const OPENCODE_MODEL = 'scripted/test-model';

/** A scripted API and the options that point the OpenCode driver at it. */
export interface OpencodeEnv {
  api: ChatApi;
  /** The config's `agents.opencode`: the pinned binary, the scripted provider, no models fetch. */
  options: OpencodeOptions;
  /** A user config and data folder of the test's own (no login, no config of the machine's user). */
  userHome: string;
  /** Closes the API; fails when it saw what the test did not script. */
  cleanup(): Promise<void>;
}

/** Options for {@link opencodeEnv}. */
export interface OpencodeEnvOptions {
  script: Script;
  /** More arguments after flume's own. */
  args?: string[];
  log?: (line: string) => void;
}

/** Starts the scripted API; answers the driver's options for it. */
export async function opencodeEnv(options: OpencodeEnvOptions): Promise<OpencodeEnv> {
  const api = await startChatApi({ script: options.script, log: options.log });
  const userHome = tempDir('flume-opencode-user-');
  return {
    api,
    userHome,
    options: {
      binary: OPENCODE_BIN,
      model: OPENCODE_MODEL,
      config: {
        provider: {
          scripted: { npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: { baseURL: api.url, apiKey: 'test-key' }, models: { 'test-model': { name: 'Test Model' } } },
        },
        share: 'disabled',
      },
      env: { OPENCODE_DISABLE_MODELS_FETCH: '1', XDG_CONFIG_HOME: join(userHome, 'config') },
      dataDir: join(userHome, 'data'),
      ...(options.args ? { args: options.args } : {}),
    },
    async cleanup() {
      await api.close();
      remove(userHome);
      const unexpected = api.unexpected();
      if (unexpected.length) throw new Error(`the scripted Chat Completions API saw what no test scripted:\n  ${unexpected.join('\n  ')}`);
    },
  };
}

/** The real OpenCode in a pane of a tmux server of the test's own. */
export interface OpencodePane {
  socket: string;
  home: string;
  cwd: string;
  server: Server;
  capture(): string;
  type(text: string): void;
  /** Types `text` as one bracketed paste (a newline in it is text). */
  paste(text: string): void;
  keys(...keys: string[]): void;
  /** Waits until the screen matches; throws with the screen after `timeoutMs`. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The session's record as the driver reads it (undefined before the first prompt). */
  record(): Promise<RecordState | undefined>;
  /** GETs a path of the TUI's server. */
  get<T>(path: string): Promise<T | undefined>;
  /** The pid of the pane's program. */
  pid(): number;
  dead(): boolean;
  stop(): Promise<void>;
}

/** Starts `opencode` in `cwd` with a fresh folder holding what flume's driver writes (`bypass`: every permission allowed). */
export async function startOpencodePane(env: OpencodeEnv, cwd: string, options: { bypass?: boolean; args?: string[]; password?: boolean } = {}): Promise<OpencodePane> {
  const home = tempDir('flume-opencode-home-');
  const socket = join(home, 'tmux.sock');
  const password = await prepareHome(home, agentConfig(env.options, env.options.model, options.bypass ?? false), env.options.dataDir!);
  const port = await freePort();
  const startedAt = new Date().toISOString();
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, TMUX: '' }, input: '' });
  const vars: Record<string, string> = { ...env.options.env, ...homeEnvironment(home), OPENCODE_DISABLE_AUTOUPDATE: '1', TERM: 'xterm-256color', ...(options.password === false ? {} : { OPENCODE_SERVER_PASSWORD: password }) };
  const command = ['env', ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), OPENCODE_BIN, '--port', String(port), ...(options.args ?? env.options.args ?? [])].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  tmux('new-session', '-d', '-x', '150', '-y', '40', '-s', 'oc', '-c', cwd, command);
  tmux('set-option', '-t', 'oc', 'remain-on-exit', 'on');
  const server: Server = { port, password };
  const pane: OpencodePane = {
    socket,
    home,
    cwd,
    server,
    capture: () => tmux('capture-pane', '-p', '-t', 'oc'),
    type: (text) => void tmux('send-keys', '-t', 'oc', '-l', text),
    paste(text) {
      execFileSync('tmux', ['-S', socket, 'load-buffer', '-b', 'p', '-'], { input: text, env: { ...process.env, TMUX: '' } });
      tmux('paste-buffer', '-p', '-d', '-b', 'p', '-t', 'oc');
    },
    keys: (...keys) => void tmux('send-keys', '-t', 'oc', ...keys),
    async waitForScreen(pattern, timeoutMs = HANG_MS) {
      // A hang guard, not an assertion (test/helpers/wait.ts).
      timeoutMs = Math.max(timeoutMs, HANG_MS);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = pane.capture();
        if (pattern.test(screen)) return screen;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern} on the screen:\n${screen}`);
        await sleep(100);
      }
    },
    record: () => readRecord(server, cwd, startedAt),
    get: (path) => get(server, path),
    pid: () => Number(tmux('display-message', '-p', '-t', 'oc', '#{pane_pid}').trim()),
    dead: () => tmux('display-message', '-p', '-t', 'oc', '#{pane_dead}').trim() === '1',
    async stop() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      await sleep(300);
      remove(home);
    },
  };
  return pane;
}

/** The messages of a record, for a test that looks at the parts themselves. */
export type { Message };
