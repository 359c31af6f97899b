/**
 * The real Gemini CLI (the pinned @google/gemini-cli 0.61.0) against a scripted Gemini API on
 * 127.0.0.1, in one call: `geminiEnv({ script })` starts the API and answers the `agents.gemini`
 * options that point flume's Gemini driver at it, with a Gemini home of the test's own
 * (`GEMINI_CLI_HOME`: its settings choose an API key, its chats are kept there). `startGeminiPane`
 * runs the program directly in a tmux pane of the test's own, for tests that pin what the program
 * itself shows and records.
 *
 * Run only inside a loopback-only network namespace (`sh scripts/test.sh` does that).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findChat } from '../../agents/gemini/chat.js';
import { interactiveMarks } from '../../agents/gemini/environment.js';
import type { GeminiOptions } from '../../agents/gemini/options.js';
import { startGeminiApi, type GeminiApi, type Script } from './gemini-api.js';
import { PROJECT, remove, tempDir } from './repo.js';
import { descendantsOf, readJsonl, signalQuietly } from '../../core/index.js';
import { HANG_MS } from './wait.js';

/** The pinned Gemini CLI. */
export const GEMINI_BIN = join(PROJECT, 'node_modules', '.bin', 'gemini');
/** The version the suite runs. */
export const GEMINI_VERSION = '0.61.0';
/** The model name the scripted API is asked for. */
export const GEMINI_MODEL = 'gemini-2.5-flash';

/** A scripted API and the options that point the Gemini driver at it. */
export interface GeminiEnv {
  api: GeminiApi;
  /** The config's `agents.gemini`: the pinned binary, the model, the API's address and key, the test's home. */
  options: GeminiOptions;
  /** The test's Gemini home (`GEMINI_CLI_HOME`), whose `.gemini/` holds settings and chats. */
  home: string;
  /** Closes the API; fails when it saw what the test did not script. */
  cleanup(): Promise<void>;
}

/** Starts the scripted API and makes a Gemini home that signs in with an API key; answers the driver's options. */
export async function geminiEnv(options: { script: Script; args?: string[] }): Promise<GeminiEnv> {
  const api = await startGeminiApi({ script: options.script });
  const home = tempDir('flume-gemini-home-');
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  return {
    api,
    home,
    options: {
      binary: GEMINI_BIN,
      model: GEMINI_MODEL,
      env: { GEMINI_CLI_HOME: home, GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: api.url },
      ...(options.args ? { args: options.args } : {}),
    },
    async cleanup() {
      await api.close();
      remove(home);
      const unexpected = api.unexpected();
      if (unexpected.length) throw new Error(`the scripted Gemini API saw what no test scripted:\n  ${unexpected.join('\n  ')}`);
    },
  };
}

/** The real Gemini CLI in a pane of a tmux server of the test's own. */
export interface GeminiPane {
  socket: string;
  sessionId: string;
  cwd: string;
  capture(): string;
  type(text: string): void;
  /** Pastes `text` as a terminal does (bracketed), as flume's tmux host types text with newlines. */
  paste(text: string): void;
  keys(...keys: string[]): void;
  /** Waits until the screen matches; throws with the screen after `timeoutMs`. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The session's chat file, once written. */
  chat(): Promise<string | undefined>;
  /** The chat's lines, parsed ([] before it exists). */
  lines(): Promise<Array<Record<string, any>>>;
  /** The pid of the pane's program (the npm launcher). */
  pid(): number;
  /** True while the pane's program runs. */
  alive(): boolean;
  /** The exit status of the pane's program, once it ended by exiting (not by a signal). */
  exitStatus(): number | undefined;
  /** The screen with up to `lines` lines of its history above. */
  history(lines: number): string;
  stop(): Promise<void>;
}

/** Starts `gemini` in `cwd` as flume's driver does (a session id, the test's home), with `args` after. */
export async function startGeminiPane(env: GeminiEnv, cwd: string, args: string[] = []): Promise<GeminiPane> {
  const folder = tempDir('flume-gemini-pane-');
  const socket = join(folder, 'tmux.sock');
  const sessionId = randomUUID();
  const tmux = (...words: string[]) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...words], { encoding: 'utf8', env: { ...process.env, TMUX: '' } });
  // As the driver starts it: on a CI machine (`CI=true`, which the pane inherits) it would run headless.
  const vars = { ...env.options.env, ...interactiveMarks(process.env), TERM: 'xterm-256color' };
  const argv = [GEMINI_BIN, '--session-id', sessionId, '--model', GEMINI_MODEL, ...args];
  const command = ['env', ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), ...argv].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  tmux('new-session', '-d', '-x', '150', '-y', '40', '-s', 'gemini', '-c', cwd, command);
  tmux('set-option', '-t', 'gemini', 'remain-on-exit', 'on');
  const pane: GeminiPane = {
    socket,
    sessionId,
    cwd,
    capture: () => tmux('capture-pane', '-p', '-t', 'gemini'),
    history: (lines) => tmux('capture-pane', '-p', '-S', `-${lines}`, '-t', 'gemini'),
    type: (text) => void tmux('send-keys', '-t', 'gemini', '-l', text),
    keys: (...keys) => void tmux('send-keys', '-t', 'gemini', ...keys),
    paste(text) {
      execFileSync('tmux', ['-S', socket, 'load-buffer', '-b', 'paste', '-'], { input: text, env: { ...process.env, TMUX: '' } });
      tmux('paste-buffer', '-p', '-d', '-b', 'paste', '-t', 'gemini');
    },
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
    chat: () => findChat(env.home, sessionId),
    async lines() {
      const path = await pane.chat();
      return path ? readJsonl<Record<string, any>>(path) : [];
    },
    pid: () => Number(tmux('display-message', '-p', '-t', 'gemini', '#{pane_pid}').trim()),
    alive: () => tmux('display-message', '-p', '-t', 'gemini', '#{pane_dead}').trim() !== '1',
    exitStatus() {
      const status = tmux('display-message', '-p', '-t', 'gemini', '#{pane_dead_status}').trim();
      return status === '' ? undefined : Number(status);
    },
    async stop() {
      // Gemini outlives its terminal's closing (at its folder-trust question, seen here): its processes go first.
      try {
        const pid = pane.pid();
        for (const each of [pid, ...descendantsOf(pid)]) signalQuietly(each, 'SIGKILL');
      } catch {
        // the pane is gone already
      }
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      await sleep(200);
      remove(folder);
    },
  };
  return pane;
}
