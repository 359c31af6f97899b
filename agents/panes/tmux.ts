/**
 * The tmux pane host: each agent runs in a window of a tmux server of flume's own, on the socket the
 * caller names (flume uses `<state dir>/tmux.sock`), never the user's default server. The server is
 * started with no config file, so a user's tmux.conf changes nothing here.
 *
 * - The program runs as `env -i /bin/sh SCRIPT` (core/drivers/pane-env.ts): tmux's server environment (and
 *   the TMUX variables tmux adds to a pane) would leak into it otherwise, and the values travel in
 *   the script (mode 600, in the socket's folder, mode 700), never in an argv: the tmux server keeps
 *   the argv of the client that started it for its whole life, readable by every user in `ps`. The
 *   script deletes itself as the pane starts; `open` waits for that. tmux adds nothing, so the
 *   caller passes TERM.
 * - Every client runs with `-u` and a UTF-8 character type where the caller has none: in a C or
 *   POSIX locale tmux prints a format's TABs as `_`, and a pane would read as dead.
 * - `remain-on-exit` is on, so a crashed agent's last screen can still be captured; `alive` reads
 *   `#{pane_dead}` and the pane's pid, so such a pane is not alive.
 * - Each pane is marked at open with a pane option `@flume-pane <uuid>`, its identity: tmux numbers
 *   panes afresh in a new server, so after a restart another agent's pane can carry an old handle's
 *   id, but never its mark (core/api/pane-host.ts ownsPane).
 * - Text goes as literal keys (`send-keys -l`) in bursts of at most 200 characters, 100 ms apart,
 *   which an agent takes as typing. Text holding a newline or any other control character goes as
 *   one paste instead (`load-buffer` from stdin, `paste-buffer -p -d`, bracketed where the program
 *   asked for it): inside a paste a newline is text, where a typed one would submit. With `paste`
 *   (TypeOptions) every text goes as one bracketed paste whose markers flume writes itself (no `-p`).
 *   The paste markers are stripped from the text until none is left, so no marker hidden inside
 *   another can end the paste early. Pressing Enter is the caller's separate step.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  asPaste,
  definePaneHost,
  flumeError,
  paneEnvScript,
  privateDir,
  PRIVATE_FILE_MODE,
  processExists,
  processRunning,
  run,
  signalQuietly,
  splitBursts,
  waitGone,
  which,
  withoutPasteMarkers,
  type PaneHost,
  type PaneLook,
  type PaneState,
  type RunResult,
  utf8LocaleFor,
} from '../../core/index.js';

/** Where the host's tmux server lives. */
export interface TmuxHostOptions {
  /** The server's socket path (`tmux -S`); its folder is made when missing. */
  socket: string;
  /** The session that holds the agents' windows (default `flume`). */
  session?: string;
  /** How long `open` waits for a new pane to take its environment script (default 30 s). */
  startTimeoutMs?: number;
}

/** The most characters sent in one `send-keys -l`. */
export const TMUX_BURST_CHARS = 200;
/** The pause between two bursts, so the agent takes them as typing rather than a paste. */
export const TMUX_BURST_GAP_MS = 100;
/** The pause between two named keys, so each reaches the program in a read of its own. */
export const TMUX_KEY_GAP_MS = 40;
/** The pane option holding the identity flume gave the pane at open. */
const PANE_MARK = '@flume-pane';
/** An environment script older than this was left by a flume that died while opening a pane. */
const STALE_SCRIPT_MS = 60_000;

/** A pane host on a tmux server of flume's own; key `tmux`. */
export function tmuxHost(options: TmuxHostOptions): PaneHost {
  const session = options.session ?? 'flume';
  const tmux = (commands: string[][], input?: string) => tmuxRun(options.socket, commands, input);

  async function paneInfo(pane: string): Promise<{ dead: boolean; pid: number; server: number } | undefined> {
    const result = await tmux([['display-message', '-p', '-t', pane, INFO_FORMAT]]);
    return result.exitCode === 0 ? parseInfo(result.stdout.split('\n')[0]) : undefined;
  }

  // tmux built with libutempter can miss a pane's SIGCHLD (tmux/tmux#311): its program stays a
  // zombie and the pane has no exit status. Signalling the server makes it reap.
  function nudge(dead: string, pid: string, server: string, status: string | undefined): void {
    if (dead === '1' ? !status : !processRunning(Number(pid))) signalQuietly(Number(server), 'SIGCHLD');
  }

  /**
   * One client for what identity, alive and capture ask: a pane waited on is looked at often. No pane
   * there (or no server) is undefined; a server that could not be asked is an error, never "no pane".
   */
  async function lookAt(pane: string): Promise<PaneLook | undefined> {
    const result = await tmux([['display-message', '-p', '-t', pane, `${INFO_FORMAT}\t#{${PANE_MARK}}`], ['capture-pane', '-p', '-J', '-t', pane]]);
    if (result.exitCode === 0) return lookFrom(result.stdout);
    if (noPane(result.stderr)) return undefined;
    throw unanswered(result, `look at pane ${pane}`);
  }

  function unanswered(result: RunResult, what: string) {
    return flumeError('IO_FAILED', { what, message: firstLine(result) }, {
      variant: 'tmux',
      details: { socket: options.socket, stderr: result.stderr.trim() },
    });
  }

  async function capture(pane: string, captureOptions: { history?: boolean } = {}): Promise<string | undefined> {
    // With history: what scrolled off too, as a dead pane's notice pushes its program's last words up.
    const result = await tmux([['capture-pane', '-p', '-J', ...(captureOptions.history ? ['-S', '-'] : []), '-t', pane]]);
    return result.exitCode === 0 ? result.stdout : undefined;
  }

  async function livePane(pane: string): Promise<void> {
    const info = await paneInfo(pane);
    if (!info || info.dead) {
      throw flumeError('AGENT_NOT_UP', { pane }, {
        variant: 'paneEmpty',
        details: { pane, socket: options.socket },
      });
    }
  }

  async function check(result: RunResult, what: string, pane?: string): Promise<void> {
    if (result.exitCode === 0) return;
    if (pane) await livePane(pane);
    throw flumeError(pane ? 'IO_FAILED' : 'AGENT_START_FAILED', { what, message: firstLine(result) }, {
      variant: 'tmux',
      details: { socket: options.socket, stderr: result.stderr.trim() },
    });
  }

  return definePaneHost({
    key: 'tmux',
    priority: 20,
    chosen: "herdr is not running here and tmux is found, so the agent runs in flume's own tmux",
    async available() {
      return which('tmux') !== undefined;
    },
    async checks() {
      // Pane options (the `@flume-pane` identity mark) came with tmux 3.0.
      const fix = 'Install tmux (3.0 or newer) so flume can run agents in panes of its own; without it, agents start as printed commands.';
      if (which('tmux') === undefined) return [{ name: 'tmux', ok: false, needed: true, detail: 'not found on PATH', fix }];
      const out = await run('tmux', ['-V'], { timeoutMs: 5000 });
      const found = /(\d+)\.(\d+)/.exec(out.stdout);
      const ok = Boolean(found && Number(found[1]) >= 3);
      const version = /^tmux (\S+)/.exec(out.stdout.trim())?.[1];
      return [{ name: 'tmux', ok, needed: true, detail: out.stdout.trim() || 'its version could not be read', ...(version ? { version } : {}), ...(ok ? {} : { fix }) }];
    },
    async open(spec) {
      // The script is written before anything else is made, so a refused spec leaves nothing behind.
      const text = paneEnvScript(spec);
      const dir = dirname(options.socket);
      await privateDir(dir);
      await sweepScripts(dir);
      const script = join(dir, `env-${randomUUID()}.sh`);
      await writeFile(script, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
      const command = [which('env') ?? 'env', '-i', '/bin/sh', script];
      const common = ['-d', '-P', '-F', '#{pane_id} #{pane_pid}', '-n', formatLiteral(spec.title), '-c', formatLiteral(spec.cwd)];
      // Set before the pane exists: a program that dies at once still leaves its screen to read.
      const setup = ['set-option', '-g', 'remain-on-exit', 'on'];
      const window = () => tmux([setup, ['new-window', ...common, '-t', `=${session}:`, '--', ...command]]);
      const fresh = () => tmux([setup, ['new-session', ...common, '-s', session, '-x', '200', '-y', '50', '--', ...command]]);
      let result: RunResult;
      try {
        // A window in flume's session; where there is none, the session. The server exits with its
        // last window, and another flume may make the session at any moment: between a look and the
        // window opened after it either may have changed (an agent hung up as the next stage opened
        // its pane: "no server running"). So each answer decides the next try, three at most.
        result = await window();
        for (let tries = 0; tries < 3 && result.exitCode !== 0; tries++) {
          // A server whose last session is going answers "no current target".
          if (noPane(result.stderr) || /no current target/.test(result.stderr)) result = await fresh();
          else if (/duplicate session/.test(result.stderr)) result = await window();
          else break;
        }
        await check(result, `open a pane in ${spec.cwd}`);
      } catch (error) {
        await rm(script, { force: true });
        throw error;
      }
      const [pane, pid] = result.stdout.trim().split(' ');
      const identity = randomUUID();
      const marked = await tmux([['set-option', '-p', '-t', pane, PANE_MARK, identity]]);
      if (marked.exitCode !== 0) {
        await tmux([['kill-pane', '-t', pane]]);
        await rm(script, { force: true });
        await check(marked, `mark pane ${pane}`);
      }
      // The script deletes itself as the pane's shell starts: once it is gone, no copy of the
      // environment is left on disk. A pane whose program died first leaves its screen to read, as
      // any dead pane; one that never gets that far is closed.
      const until = Date.now() + (options.startTimeoutMs ?? 30_000);
      for (let polls = 1; existsSync(script); polls++) {
        const dead = polls % 25 === 0 && (await paneInfo(pane))?.dead !== false;
        if (dead || Date.now() >= until) await rm(script, { force: true });
        if (dead) break;
        if (Date.now() >= until) {
          await tmux([['kill-pane', '-t', pane]]);
          throw flumeError('AGENT_START_FAILED', { pane, cwd: spec.cwd }, {
            variant: 'tmuxPane',
            details: { pane, socket: options.socket },
          });
        }
        await sleep(20);
      }
      return { pane, pid: Number(pid), identity };
    },
    async identity(pane) {
      const result = await tmux([['display-message', '-p', '-t', pane, `#{${PANE_MARK}}`]]);
      return (result.exitCode === 0 && result.stdout.trim()) || undefined;
    },
    capture,
    attach(pane) {
      // A client of flume's own server on the caller's terminal, on the pane's window; inside another
      // tmux this nests (TMUX unset, as tmux asks), and that tmux's prefix is then pressed twice.
      return { file: 'tmux', args: ['-S', options.socket, '-f', '/dev/null', 'attach-session', '-t', pane], env: { TMUX: undefined, TMUX_PANE: undefined }, leave: 'C-b d leaves it' };
    },
    async type(pane, text, options = {}) {
      if (text === '') return;
      await livePane(pane);
      if (options.paste || /[\u0000-\u001f\u007f]/.test(text)) {
        // Framed by flume (asPaste; no `-p`), or by tmux where the program asked for bracketed paste (`-p`).
        const buffer = `flume-${process.pid}-${++pastes}`;
        const framed = options.paste ? asPaste(text) : withoutPasteMarkers(text);
        const result = await tmux([['load-buffer', '-b', buffer, '-'], ['paste-buffer', ...(options.paste ? [] : ['-p']), '-d', '-b', buffer, '-t', pane]], framed);
        return check(result, `paste into ${pane}`, pane);
      }
      const bursts = splitBursts(text, TMUX_BURST_CHARS);
      for (const [index, burst] of bursts.entries()) {
        if (index > 0) await sleep(TMUX_BURST_GAP_MS);
        await check(await tmux([['send-keys', '-t', pane, '-l', '--', burst]]), `type into ${pane}`, pane);
      }
    },
    async keys(pane, keys) {
      await livePane(pane);
      for (const [index, key] of keys.entries()) {
        if (index > 0) await sleep(TMUX_KEY_GAP_MS);
        await check(await tmux([['send-keys', '-t', pane, '--', key]]), `press ${key} in ${pane}`, pane);
      }
    },
    async alive(pane) {
      const info = await paneInfo(pane);
      return info !== undefined && !info.dead && processRunning(info.pid);
    },
    async panes() {
      // One client for every pane: what identity and alive would read, pane by pane. The mark goes
      // last, as a user's mark may hold spaces; no server running means no panes.
      const format = `#{pane_id} #{pane_dead} #{pane_pid} #{pid} #{pane_dead_status}#{pane_dead_signal} #{${PANE_MARK}}`;
      const result = await tmux([['list-panes', '-a', '-F', format]]);
      const found = new Map<string, PaneState>();
      if (result.exitCode !== 0) {
        if (noServer(result.stderr)) return found;
        throw unanswered(result, 'list its panes');
      }
      for (const line of result.stdout.split('\n')) {
        const [pane, dead, pid, server, status, ...mark] = line.split(' ');
        if (!pane || !pid) continue;
        nudge(dead, pid, server, status);
        const identity = mark.join(' ').trim();
        found.set(pane, { ...(identity ? { identity } : {}), alive: dead !== '1' && processRunning(Number(pid)) });
      }
      return found;
    },
    async captureMany(panes) {
      // One client for many screens, each after a line of its own that no screen holds. tmux stops a
      // command list at the first command that fails (a pane gone meanwhile): the screens after it
      // are read one by one.
      const screens = new Map<string, string>();
      let rest = [...new Set(panes)];
      while (rest.length > 0) {
        const fence = `flume-screen-${randomUUID()}`;
        const result = await tmux(rest.flatMap((pane) => [['display-message', '-p', fence], ['capture-pane', '-p', '-J', '-t', pane]]));
        const parts = result.stdout.split(`${fence}\n`).slice(1);
        // A part is whole when the next fence follows it, or it is the last and the list ran to its end.
        const whole = result.exitCode === 0 ? parts.length : parts.length - 1;
        for (let i = 0; i < whole && i < rest.length; i++) screens.set(rest[i], parts[i]);
        const failed = rest[Math.max(0, whole)];
        rest = rest.slice(Math.max(0, whole) + 1);
        if (failed !== undefined) {
          const screen = await capture(failed);
          if (screen !== undefined) screens.set(failed, screen);
        }
      }
      return screens;
    },
    async lookMany(panes) {
      // One client for every pane's look (what `look` asks), each after a line of its own that no
      // screen holds. tmux stops a command list at the first command that fails (a pane gone
      // meanwhile): that pane is looked at alone, and the list goes on after it.
      const looks = new Map<string, PaneLook>();
      let rest = [...new Set(panes)];
      while (rest.length > 0) {
        const fence = `flume-look-${randomUUID()}`;
        const result = await tmux(rest.flatMap((pane) => [['display-message', '-p', fence], ['display-message', '-p', '-t', pane, `${INFO_FORMAT}\t#{${PANE_MARK}}`], ['capture-pane', '-p', '-J', '-t', pane]]));
        const parts = result.stdout.split(`${fence}\n`).slice(1);
        // A part is whole when the next fence follows it, or it is the last and the list ran to its end.
        const whole = result.exitCode === 0 ? parts.length : parts.length - 1;
        for (let i = 0; i < whole && i < rest.length; i++) {
          const look = lookFrom(parts[i]);
          if (look) looks.set(rest[i], look);
        }
        const failed = rest[Math.max(0, whole)];
        rest = rest.slice(Math.max(0, whole) + 1);
        if (failed !== undefined) {
          const look = await lookAt(failed);
          if (look) looks.set(failed, look);
        }
      }
      return looks;
    },
    look: lookAt,
    async close(pane) {
      const info = await paneInfo(pane);
      if (!info) return;
      await tmux([['kill-pane', '-t', pane]]);
      if (info.dead) return;
      // kill-pane hangs up the terminal; a program that ignores SIGHUP is ended by signal.
      for (const [signal, waitMs] of [[undefined, 2000], ['SIGTERM', 2000], ['SIGKILL', 2000]] as const) {
        if (signal) signalQuietly(info.pid, signal);
        if (await waitGone(info.pid, waitMs)) return reap(info.server, info.pid);
      }
      throw flumeError('AGENT_DID_NOT_EXIT', { pane, pid: info.pid }, {
        variant: 'pane',
        details: { pane, pid: info.pid },
      });
    },
  });
}

/** What `paneInfo` asks tmux of a pane: dead, its program's pid, the server's pid, how it ended. */
const INFO_FORMAT = '#{pane_dead}\t#{pane_pid}\t#{pid}\t#{pane_dead_status}#{pane_dead_signal}';

/** A look from what `display-message` with INFO_FORMAT and the mark, then `capture-pane`, printed. */
function lookFrom(text: string): PaneLook | undefined {
  const end = text.indexOf('\n');
  const line = end < 0 ? text : text.slice(0, end);
  const info = parseInfo(line);
  if (!info) return undefined;
  const alive = !info.dead && info.running;
  const identity = line.split('\t')[4] || undefined;
  return { ...(identity ? { identity } : {}), alive, ...(alive && end >= 0 ? { screen: text.slice(end + 1) } : {}) };
}

/** Reads a line printed with INFO_FORMAT; undefined when it names no pane. */
function parseInfo(line: string): { dead: boolean; pid: number; server: number; running: boolean } | undefined {
  const [dead, pid, server, status] = line.trim().split('\t');
  if (!pid) return undefined;
  // Whether its program still runs (not a zombie), read once: a look at many panes reads it of each.
  const running = dead !== '1' && processRunning(Number(pid));
  // tmux built with libutempter can miss a pane's SIGCHLD (tmux/tmux#311): its program stays a
  // zombie and the pane has no exit status. Signalling the server makes it reap.
  if (dead === '1' ? !status : !running) signalQuietly(Number(server), 'SIGCHLD');
  return { dead: dead === '1', pid: Number(pid), server: Number(server), running };
}

/** Ends a tmux server of flume's own and every pane in it; resolves when none was running. */
export async function killTmuxServer(socket: string): Promise<void> {
  await tmuxRun(socket, [['kill-server']]);
}

let pastes = 0;

/** Runs tmux commands on the socket, in order, in one client; ';' separates them. */
function tmuxRun(socket: string, commands: string[][], input?: string): Promise<RunResult> {
  // tmux reads an argument ending in ';' as a separator; `\;` at its end is a literal ';'.
  const escape = (arg: string) => (arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg);
  const args = commands.flatMap((command, index) => [...(index > 0 ? [';'] : []), ...command.map(escape)]);
  // `-u` and a UTF-8 character type where the caller has none: in a non-UTF-8 locale a client prints
  // a format's TABs (and any other control or non-ASCII character) as `_`, and a server started by
  // such a client gives its panes the same. What flume reads of a pane must not hang on the caller's locale.
  return run('tmux', ['-u', '-S', socket, '-f', '/dev/null', ...args], {
    env: { TMUX: undefined, TMUX_PANE: undefined, ...utf8LocaleFor(process.env) },
    input,
    timeoutMs: 15_000,
  });
}

/** Removes environment scripts a flume that died while opening a pane left behind. */
async function sweepScripts(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => /^env-[0-9a-f-]{36}\.sh$/.test(n))) {
    const file = join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_SCRIPT_MS) await rm(file, { force: true });
  }
}

/** tmux expands formats in window names and start folders: a literal '#' is written '##'. */
function formatLiteral(value: string): string {
  return value.replaceAll('#', '##');
}

function firstLine(result: RunResult): string {
  return (result.failedToStart ?? result.stderr).trim().split('\n')[0] || `exit code ${result.exitCode}`;
}

/** Has the server reap a pane's exited program, so its pid is gone rather than a zombie. */
async function reap(server: number, pid: number): Promise<void> {
  for (let tries = 0; tries < 20 && processExists(pid); tries++) {
    signalQuietly(server, 'SIGCHLD');
    await sleep(25);
  }
}


/**
 * tmux's words for a server that is not there: none listening on the socket, no socket at all, or
 * one that died while it answered.
 * Any other failure to connect (a server that does not answer in time, a socket it cannot take more
 * on) is a server there that could not be asked.
 */
function noServer(stderr: string): boolean {
  return /no server running|server exited unexpectedly|lost server|error connecting to .*\((No such file or directory|Connection refused)\)/i.test(stderr);
}

/** tmux's words for a pane that is not there (or no server to hold it). */
function noPane(stderr: string): boolean {
  return noServer(stderr) || /can't find (pane|window|session)/i.test(stderr);
}
