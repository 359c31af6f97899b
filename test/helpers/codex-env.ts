/**
 * The real Codex CLI (the pinned @openai/codex 0.171.0) against a scripted Responses API on
 * 127.0.0.1, in one call: `codexEnv({ script })` starts the API and answers the `agents.codex`
 * options that point flume's Codex driver at it (a driver test, the conformance kit or a flume
 * config uses those as they are). `startCodexPane` runs the program directly in a tmux pane of the
 * test's own, with the config flume's driver writes, for tests that pin what the program itself
 * shows and records.
 *
 * Run only inside a loopback-only network namespace (`sh scripts/test.sh` does that).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configToml } from '../../agents/codex/home.js';
import type { CodexOptions } from '../../agents/codex/options.js';
import { PROJECT, remove, tempDir } from './repo.js';
import { startResponsesApi, type ResponsesApi, type Script } from './responses-api.js';
import { HANG_MS } from './wait.js';

/** The pinned Codex CLI. */
export const CODEX_BIN = join(PROJECT, 'node_modules', '.bin', 'codex');
/** The version the suite runs. */
export const CODEX_VERSION = '0.171.0';
/** The model name the scripted API is asked for. */
export const CODEX_MODEL = 'gpt-test';

/** A scripted API and the options that point the Codex driver at it. */
export interface CodexEnv {
  api: ResponsesApi;
  /** The config's `agents.codex`: the pinned binary, the scripted provider, its key, no sandbox. */
  options: CodexOptions;
  /** A Codex home of the test's own that holds no login, so the user's is never linked. */
  userHome: string;
  /** Closes the API; fails when it saw what the test did not script. */
  cleanup(): Promise<void>;
}

/** Options for {@link codexEnv}. */
export interface CodexEnvOptions {
  script: Script;
  /** More arguments after flume's own. Default: the sandbox off (the namespace is the fence), approvals never asked. */
  args?: string[];
  log?: (line: string) => void;
}

/** Starts the scripted API; answers the driver's options for it. */
export async function codexEnv(options: CodexEnvOptions): Promise<CodexEnv> {
  const api = await startResponsesApi({ script: options.script, log: options.log });
  const userHome = tempDir('flume-codex-user-');
  return {
    api,
    userHome,
    options: {
      binary: CODEX_BIN,
      model: CODEX_MODEL,
      provider: { name: 'scripted', base_url: api.url, env_key: 'SCRIPTED_API_KEY' },
      env: { SCRIPTED_API_KEY: 'test-key' },
      configDir: userHome,
      args: options.args ?? ['--dangerously-bypass-approvals-and-sandbox'],
    },
    async cleanup() {
      await api.close();
      remove(userHome);
      const unexpected = api.unexpected();
      if (unexpected.length) throw new Error(`the scripted Responses API saw what no test scripted:\n  ${unexpected.join('\n  ')}`);
    },
  };
}

/** The real Codex in a pane of a tmux server of the test's own. */
export interface CodexPane {
  socket: string;
  home: string;
  cwd: string;
  capture(): string;
  type(text: string): void;
  keys(...keys: string[]): void;
  /** Waits until the screen matches; throws with the screen after `timeoutMs`. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The session's rollout file, once written. */
  rollout(): string | undefined;
  /** The rollout's lines, parsed ([] before it exists). */
  lines(): Array<{ timestamp: string; type: string; payload: any }>;
  /** The pid of the pane's program (the npm launcher). */
  pid(): number;
  stop(): Promise<void>;
}

/** Starts `codex` in `cwd` with a fresh home holding the config flume's driver writes (the folder trusted unless `trusted` is false). */
export async function startCodexPane(env: CodexEnv, cwd: string, options: { trusted?: boolean; args?: string[] } = {}): Promise<CodexPane> {
  const home = tempDir('flume-codex-home-');
  const socket = join(home, 'tmux.sock');
  writeFileSync(join(home, 'config.toml'), configToml(env.options, options.trusted === false ? [] : [cwd]));
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, TMUX: '' } });
  const vars = { ...env.options.env, CODEX_HOME: home, TERM: 'xterm-256color' };
  const command = ['env', ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), CODEX_BIN, ...(options.args ?? env.options.args ?? [])].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  tmux('new-session', '-d', '-x', '150', '-y', '40', '-s', 'codex', '-c', cwd, command);
  tmux('set-option', '-t', 'codex', 'remain-on-exit', 'on');
  const pane: CodexPane = {
    socket,
    home,
    cwd,
    capture: () => tmux('capture-pane', '-p', '-t', 'codex'),
    type: (text) => void tmux('send-keys', '-t', 'codex', '-l', text),
    keys: (...keys) => void tmux('send-keys', '-t', 'codex', ...keys),
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
    rollout() {
      const found: string[] = [];
      const walk = (dir: string) => {
        if (!existsSync(dir)) return;
        for (const entry of readdirSync(dir, { withFileTypes: true })) entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.jsonl') && found.push(join(dir, entry.name));
      };
      walk(join(home, 'sessions'));
      return found.sort().at(-1);
    },
    lines() {
      const path = pane.rollout();
      if (!path) return [];
      return readFileSync(path, 'utf8').split('\n').flatMap((line) => {
        try {
          return line ? [JSON.parse(line)] : [];
        } catch {
          return [];
        }
      });
    },
    pid: () => Number(tmux('display-message', '-p', '-t', 'codex', '#{pane_pid}').trim()),
    async stop() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      await sleep(200);
      remove(home);
    },
  };
  return pane;
}
