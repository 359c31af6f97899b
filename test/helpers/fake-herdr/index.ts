/**
 * A fake herdr server for a test: its folder (whose `running` file says the server runs), the
 * environment that puts the fake `herdr` first on PATH, and the calls it recorded.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAKE_CLAUDE } from '../fake-claude/index.js';
import { PROJECT, tempDir } from '../repo.js';

/** The folder holding the fake `herdr` executable. */
export const FAKE_HERDR_DIR = fileURLToPath(new URL('.', import.meta.url));

/** The built herdr plugin, for a repository's config to name (the default preset may lack it). */
export const HERDR_PLUGIN_JS = join(PROJECT, 'dist', 'plugins', 'herdr', 'index.js');

/** One call the fake recorded. */
export interface HerdrCall {
  argv: string[];
  cwd: string;
  stdin: string;
}

/** A fake herdr server of a test's own. */
export interface FakeHerdr {
  state: string;
  /**
   * The fake agent under the name `claude` (a link to fake-claude.mjs): a program herdr knows as the
   * kind `claude`, so flume starts it with `agent start`.
   */
  claude: string;
  /** PATH with the fake first, and where it keeps its server and log. */
  env: Record<string, string>;
  calls(): HerdrCall[];
  /** Calls whose argv starts with these words. */
  callsOf(...words: string[]): HerdrCall[];
  clearLog(): void;
  /** Starts or stops the server (the `running` file); panes stay. */
  setRunning(running: boolean): void;
  /** The tokens reported on a pane (of herdr's saved machine `machine`, when named), as `pane get` shows them. */
  tokens(pane: string, machine?: string): Record<string, string>;
  /** Puts `env` into this process (for the host used in-process); returns the undo. */
  install(): () => void;
  cleanup(): void;
}

/** Makes a fake herdr server, running unless told otherwise. */
export function fakeHerdr(options: { running?: boolean } = {}): FakeHerdr {
  const state = tempDir('flume-herdr-');
  const log = join(state, 'calls.jsonl');
  const bin = FAKE_HERDR_DIR.replace(/\/$/, '');
  // HERDR_BIN_PATH too: inside a real herdr pane it would name the real herdr.
  const env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HERDR_BIN_PATH: join(bin, 'herdr'), FAKE_HERDR_STATE: state, FAKE_HERDR_LOG: log };
  mkdirSync(join(state, 'bin'));
  symlinkSync(FAKE_CLAUDE, join(state, 'bin', 'claude'));
  // One process answers every call of the test (server.mjs); a call made before it listens runs the fake itself.
  // FAKE_HERDR_SERVER=0: none, a node start per call (bench/test-suite.bench.mjs compares the two).
  const server = process.env.FAKE_HERDR_SERVER === '0' ? undefined : spawn(process.execPath, [join(FAKE_HERDR_DIR, 'server.mjs')], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  server?.unref();
  server?.channel?.unref();
  const fake: FakeHerdr = {
    state,
    claude: join(state, 'bin', 'claude'),
    env,
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as HerdrCall) : []),
    callsOf: (...words) => fake.calls().filter((call) => words.every((word, i) => call.argv[i] === word)),
    clearLog: () => rmSync(log, { force: true }),
    setRunning(running) {
      if (running) writeFileSync(join(state, 'running'), '');
      else rmSync(join(state, 'running'), { force: true });
    },
    tokens(pane, machine) {
      const file = join(state, ...(machine === undefined ? [] : ['machines', machine.replace(/[^A-Za-z0-9._-]/g, '_')]), 'metadata', `${pane.replace(/[^A-Za-z0-9]/g, '_')}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).tokens as Record<string, string>) : {};
    },
    install() {
      const before = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
      Object.assign(process.env, env);
      return () => {
        for (const [key, value] of Object.entries(before)) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
      };
    },
    cleanup() {
      server?.kill('SIGKILL');
      try {
        execFileSync('tmux', ['-S', join(state, 'tmux.sock'), 'kill-server'], { stdio: 'ignore' });
      } catch {
        // No server was started.
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
  fake.setRunning(options.running ?? true);
  return fake;
}
