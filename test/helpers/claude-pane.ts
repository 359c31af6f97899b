/**
 * The real Claude Code in a tmux pane, on a tmux server of the test's own (`-S <socket>`; the
 * default server is never touched). Types the way flume does: `send-keys -l` in bursts of at most
 * 200 characters about 100 ms apart, then a separate Enter.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ClaudeEnv } from './claude-env.js';
import { HANG_MS, waitFor } from './wait.js';

const execFileAsync = promisify(execFile);

/** A tmux server on a socket of the test's own. */
export interface TestTmux {
  socket: string;
  /** Runs `tmux -S <socket> ...args` and returns its stdout. */
  tmux(...args: string[]): Promise<string>;
  /** The visible screen of a pane, as plain text. */
  capture(target?: string): Promise<string>;
  /** Types text literally, in bursts of `burst` characters `gapMs` apart (no Enter). */
  type(text: string, options?: { target?: string; burst?: number; gapMs?: number }): Promise<void>;
  /** Sends key names (`Enter`, `Escape`, `C-c`, `Down`, `1`...), one `send-keys` each. */
  keys(...keys: string[]): Promise<void>;
  /** Pastes text as a bracketed paste (`load-buffer` + `paste-buffer -p`). */
  paste(text: string, target?: string): Promise<void>;
  /** Polls the screen until `test` holds; returns the screen, or throws with the last one. */
  waitForScreen(test: RegExp | ((screen: string) => boolean), timeoutMs?: number, target?: string): Promise<string>;
  /** Kills the server; safe to call twice. */
  kill(): Promise<void>;
}

/** Claude Code started in a pane. */
export interface ClaudePane {
  tmux: TestTmux;
  /** The pane's target (`%0`). */
  target: string;
  /** The pid of claude itself (`env` execs it, so it is the pane's pid). */
  pid: number;
  sessionId: string;
  cwd: string;
}

/** Starts a tmux server whose socket lives in `dir`. */
export function startTmux(dir: string): TestTmux {
  const socket = join(dir, 'tmux.sock');
  const tmux = async (...args: string[]): Promise<string> => (await execFileAsync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' })).stdout;
  const t: TestTmux = {
    socket,
    tmux,
    capture: (target = '%0') => tmux('capture-pane', '-p', '-t', target),
    async type(text, { target = '%0', burst = 200, gapMs = 100 } = {}) {
      const chars = Array.from(text);
      for (let i = 0; i < chars.length; i += burst) {
        if (i > 0) await sleep(gapMs);
        await tmux('send-keys', '-t', target, '-l', chars.slice(i, i + burst).join(''));
      }
    },
    async keys(...keys) {
      for (const key of keys) await tmux('send-keys', '-t', '%0', key);
    },
    async paste(text, target = '%0') {
      const name = `flume-test-${randomUUID()}`;
      await new Promise<void>((resolve, reject) => {
        const child = execFile('tmux', ['-S', socket, 'load-buffer', '-b', name, '-'], (error) => (error ? reject(error) : resolve()));
        child.stdin?.end(text);
      });
      await tmux('paste-buffer', '-p', '-d', '-b', name, '-t', target);
    },
    async waitForScreen(test, timeoutMs = 15_000, target = '%0') {
      const holds = typeof test === 'function' ? test : (s: string) => test.test(s);
      const deadline = Date.now() + timeoutMs;
      let screen = '';
      for (;;) {
        screen = await t.capture(target).catch(() => screen);
        if (holds(screen)) return screen;
        if (Date.now() > deadline) throw new Error(`claude-pane: screen did not match ${String(test)} in ${timeoutMs} ms; last screen:\n${screen}`);
        await sleep(150);
      }
    },
    kill: () => tmux('kill-server').then(() => undefined, () => undefined),
  };
  return t;
}

/** Starts claude with `--session-id` in a new tmux server in `env.root`, 200×50, in `cwd`. */
export async function startClaudePane(env: ClaudeEnv, cwd: string, options: { args?: string[]; sessionId?: string; width?: number; height?: number } = {}): Promise<ClaudePane> {
  const tmux = startTmux(env.root);
  const sessionId = options.sessionId ?? randomUUID();
  const command = env.command(['--session-id', sessionId, ...(options.args ?? [])]);
  await tmux.tmux('new-session', '-d', '-x', String(options.width ?? 200), '-y', String(options.height ?? 50), '-c', cwd, ...command);
  const pid = Number((await tmux.tmux('display-message', '-p', '-t', '%0', '#{pane_pid}')).trim());
  return { tmux, target: '%0', pid, sessionId, cwd };
}

/** Ends claude (the tmux server goes, claude gets SIGHUP) and waits for its process to be gone. */
export async function stopClaudePane(pane: ClaudePane, timeoutMs = 5_000): Promise<void> {
  await pane.tmux.kill();
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pane.pid)) {
    if (Date.now() > deadline) {
      process.kill(pane.pid, 'SIGKILL');
      break;
    }
    await sleep(50);
  }
}

/** Whether a process is still running (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Types a prompt the way flume does, presses Enter on its own, and checks the box let go of the
 * text (emptied, turned into the queued placeholder, or gave way to a dialog). An Enter sent while
 * claude is still starting can be lost, leaving the prompt as a draft; then Enter is pressed again,
 * at most `retries` times. Returns how many Enters it took.
 */
export async function submitPrompt(pane: ClaudePane, text: string, { retries = 2 } = {}): Promise<number> {
  await pane.tmux.type(text, { target: pane.target });
  await sleep(150);
  for (let enters = 1; ; enters++) {
    await pane.tmux.keys('Enter');
    const letGo = (screen: string) => !hasInputBox(screen) || inputBoxText(screen) === '' || inputBoxText(screen) === QUEUED_PLACEHOLDER;
    let taken = await pane.tmux.waitForScreen(letGo, 1_500).then(() => true, () => false);
    // A box redrawn as Enter arrives (2.1.250/2.1.300 re-render the footer when their tmux hint
    // appears) can look empty for a moment and then hold the text again: look once more.
    if (taken) {
      await sleep(400);
      const box = inputBoxText(await pane.tmux.capture(pane.target));
      taken = box === '' || box === QUEUED_PLACEHOLDER || !text.startsWith(box.slice(0, 20));
    }
    if (taken || enters > retries) return enters;
  }
}

/** What the input box shows, dimmed, while a prompt waits in the queue (2.1.332). */
export const QUEUED_PLACEHOLDER = 'Press up to edit queued messages';

/**
 * Whether claude is ready for keys: the input box is drawn and the footer has had its second render
 * (`← for agents` appears 70–200 ms after the box; an Enter sent before it was lost in 1 of 25 starts).
 */
export function isReady(screen: string): boolean {
  return hasInputBox(screen) && /← for agents/.test(screen);
}

/**
 * Whether the screen shows the input box: a `❯` line right under a rule of `─`. (In 2.1.332 the
 * box's `❯` is followed by a no-break space, the echo of a sent prompt by a plain one.)
 */
export function hasInputBox(screen: string): boolean {
  const lines = screen.split('\n');
  return lines.some((line, i) => line.startsWith('❯') && i > 0 && /^─{20,}/.test(lines[i - 1] ?? ''));
}

/** The text in the input box (its first line), '' when empty or when there is no box. */
export function inputBoxText(screen: string): string {
  const lines = screen.split('\n');
  const i = lines.findIndex((line, j) => line.startsWith('❯') && j > 0 && /^─{20,}/.test(lines[j - 1] ?? ''));
  return i < 0 ? '' : (lines[i] ?? '').slice(1).trim();
}

/** Polls `get` until it returns something other than undefined/false (test/helpers/wait.ts: `timeoutMs` is a hang guard). */
export async function waitUntil<T>(get: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = HANG_MS, what = 'a condition'): Promise<T> {
  return (await waitFor(async () => {
    const value = await get();
    return value === undefined || value === false ? undefined : { value };
  }, `claude-pane: ${what}`, timeoutMs)).value;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
