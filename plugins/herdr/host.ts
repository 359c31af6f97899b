/**
 * The herdr pane host, through herdr 0.8.0's documented CLI (README.md names the version). A
 * repository is one herdr workspace (a shell in the repository, labelled with its folder's name) and
 * each place's agent a tab in it, labelled with the place and stage. The program starts as
 * launch-script.ts says (`agent start` for a kind herdr knows, so herdr names and tracks it); the rest
 * maps onto `pane` commands:
 *
 * - `capture` is `pane read --source visible` (the rendered screen, ANSI stripped), which herdr reads
 *   without moving an agent's viewport; a pane gone reads as undefined.
 * - `type` sends literal bytes (`pane send-text`) in bursts of 200 characters, like typing. herdr's
 *   CLI has no paste that does not submit (`pane run` and `agent prompt` press Enter), so text
 *   holding a newline or other control character, and any text typed with `paste` (TypeOptions), is
 *   sent as one bracketed paste flume frames itself (`ESC[200~ … ESC[201~`).
 * - `alive` reads `pane process-info`: a program other than the pane's shell holds its foreground.
 * - `look` answers identity, alive and the screen from one `process-info` and one `pane read`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { asPaste, definePaneHost, flumeError, hostStateDir, privateDir, PRIVATE_FILE_MODE, processRunning, processStart, signalQuietly, splitBursts, waitGone, which, type PaneHost } from '../../core/index.js';
import { herdrBinary, herdrCli, herdrKey, pick, str, type Herdr, type HerdrReply } from './herdr.js';
import { agentName, herdrLaunch, launchLine, projectOf } from './launch-script.js';

/** How the host reaches herdr. */
export interface HerdrHostOptions {
  /** The herdr executable (default `$HERDR_BIN_PATH`, which herdr sets in its panes, else `herdr` on PATH). */
  binary?: string;
  /** Where launch scripts are written (default `<flume state>/herdr`). */
  stateDir?: string;
  /** How long `open` waits for the pane's shell to run the launch script (default 15 s). */
  startTimeoutMs?: number;
}

/** The most characters sent in one `pane send-text`. */
export const HERDR_BURST_CHARS = 200;
/** The pause between two bursts, so the agent takes them as typing rather than a paste. */
export const HERDR_BURST_GAP_MS = 100;
/** The pause between two named keys, so each reaches the program in a read of its own. */
export const HERDR_KEY_GAP_MS = 40;

/** herdr's error codes for a pane that is not there: the pane, or the server that held it. */
const PANE_GONE = ['pane_not_found', 'server_not_running'];

/** A pane host on the running herdr server; key `herdr`. */
export function herdrHost(options: HerdrHostOptions = {}): PaneHost {
  const binary = options.binary ?? herdrBinary();
  const herdr: Herdr = herdrCli(binary);

  /**
   * The pane's program: the first process of its foreground that is not its shell; null when the pane
   * is gone. `strict`: herdr failing for any other reason (not answering, an error of its own) is an
   * error, not a pane gone: a look must never read a running agent as gone because herdr did not answer.
   */
  async function program(pane: string, strict = false): Promise<{ pid: number } | undefined | null> {
    const reply = await herdr(['pane', 'process-info', '--pane', pane]);
    if (!reply.ok && strict && !PANE_GONE.includes(reply.code ?? '')) {
      throw flumeError('IO_FAILED', { what: `look at pane ${pane}`, message: reply.message ?? reply.code ?? 'no answer' }, { variant: 'herdr', details: { pane, code: reply.code ?? null } });
    }
    if (!reply.ok) return null;
    const foreground = pick(reply.result, 'process_info', 'foreground_processes');
    const pids = (Array.isArray(foreground) ? foreground : [])
      .filter((process) => !isShell(str(process, 'name')))
      .map((process) => pick(process, 'pid'))
      .filter((pid): pid is number => typeof pid === 'number');
    const pid = programOf(pids, pick(reply.result, 'process_info', 'foreground_process_group_id'));
    return pid === undefined ? undefined : { pid };
  }

  async function alive(pane: string): Promise<boolean> {
    return Boolean(await program(pane));
  }

  async function livePane(pane: string): Promise<void> {
    if (await alive(pane)) return;
    throw flumeError('AGENT_NOT_UP', { pane }, {
      variant: 'herdrPaneEmpty',
      details: { pane },
    });
  }

  async function check(reply: HerdrReply, what: string, pane: string): Promise<void> {
    if (reply.ok) return;
    await livePane(pane);
    throw flumeError('IO_FAILED', { what, message: reply.message }, {
      variant: 'herdr',
      details: { pane, code: reply.code },
    });
  }

  /**
   * The herdr workspace of a project (a repository): the one flume made for it before while herdr
   * still has it (`workspaces.json` in the host's state), else a new one, a shell in the repository.
   * undefined when herdr makes none: the tab then goes to herdr's active workspace.
   */
  async function projectWorkspace(dir: string, project: string): Promise<string | undefined> {
    const file = join(dir, 'workspaces.json');
    const known = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, string>;
    const id = known[project];
    if (id && (await herdr(['workspace', 'get', id])).ok) return id;
    const made = await herdr(['workspace', 'create', '--cwd', project, '--label', basename(project), '--no-focus']);
    const created = str(made.result, 'workspace', 'workspace_id');
    if (!made.ok || !created) return undefined;
    known[project] = created;
    await writeFile(file, JSON.stringify(known), { mode: PRIVATE_FILE_MODE });
    return created;
  }

  return definePaneHost({
    key: 'herdr',
    // Where herdr runs, its panes are where the operator already looks: first with `auto`.
    priority: 30,
    chosen: 'herdr is running here, so the agent runs in a herdr pane',
    async available() {
      if (which(binary) === undefined) return false;
      const reply = await herdr(['status', 'server', '--json']);
      return reply.ok && pick(reply.result, 'running') === true;
    },
    async open(spec) {
      const dir = options.stateDir ?? join(hostStateDir(), 'herdr');
      const script = join(dir, `launch-${randomUUID()}.sh`);
      // Both refusals (a bad spec, an unsayable path) come before anything is made.
      const plan = herdrLaunch(spec, script);
      const line = plan.script ? launchLine(script, plan.kind ? 'source' : 'exec') : undefined;
      await privateDir(dir);
      // The script holds secrets: a private file in a private folder, deleted by the shell that reads it.
      if (plan.script) await writeFile(script, plan.script, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
      const workspace = await projectWorkspace(dir, projectOf(spec.cwd));
      const made = await herdr(['tab', 'create', ...(workspace ? ['--workspace', workspace] : []), '--cwd', spec.cwd, '--label', spec.title, ...plan.env.flatMap((pair) => ['--env', pair]), '--no-focus']);
      const pane = str(made.result, 'root_pane', 'pane_id');
      const fail = async (why: string, code?: string): Promise<never> => {
        await rm(script, { force: true });
        if (pane) await herdr(['pane', 'close', pane]);
        throw flumeError('AGENT_START_FAILED', { cwd: spec.cwd, message: why }, {
          variant: 'herdr',
          details: { pane, code, title: spec.title },
        });
      };
      if (!made.ok || !pane) return fail(made.message ?? 'no pane in its answer', made.code);
      if (line) {
        const ran = await herdr(['pane', 'run', pane, line]);
        if (!ran.ok) return fail(ran.message ?? 'pane run failed', ran.code);
        // The script deletes itself first: until then nothing is known to have reached the shell.
        const until = Date.now() + (options.startTimeoutMs ?? 15_000);
        while (existsSync(script)) {
          if (Date.now() >= until) return fail(`the shell of pane ${pane} did not run flume's launch line`);
          await sleep(25);
        }
      }
      if (plan.kind) {
        let started: HerdrReply | undefined;
        for (let attempt = 0; attempt < 5 && !started?.ok; attempt += 1) {
          started = await herdr(['agent', 'start', agentName(spec.title, attempt), '--kind', plan.kind, '--pane', pane, '--', ...plan.args]);
          if (started.code !== 'agent_name_taken') break;
        }
        if (!started?.ok) return fail(started?.message ?? 'agent start failed', started?.code);
      }
      const found = await program(pane);
      return { pane, ...(found ? { pid: found.pid, identity: identityOf(found.pid) } : {}) };
    },
    async identity(pane) {
      // herdr keeps no mark of flume's on a pane: the pane's program (the agent) is its identity.
      const found = await program(pane);
      return found ? identityOf(found.pid) : undefined;
    },
    async capture(pane) {
      const reply = await herdr(['pane', 'read', pane, '--source', 'visible']);
      return reply.ok ? reply.text : undefined;
    },
    async look(pane) {
      // One `process-info` answers both identity and alive; the screen is read only while the program runs.
      const found = await program(pane, true);
      if (found === null) return undefined;
      if (found === undefined) return { alive: false };
      const reply = await herdr(['pane', 'read', pane, '--source', 'visible']);
      return { identity: identityOf(found.pid), alive: true, ...(reply.ok ? { screen: reply.text } : {}) };
    },
    async type(pane, text, options = {}) {
      if (text === '') return;
      await livePane(pane);
      if (options.paste || /[\u0000-\u001f\u007f]/.test(text)) {
        return check(await herdr(['pane', 'send-text', pane, asPaste(text)]), `paste into ${pane}`, pane);
      }
      for (const [index, burst] of splitBursts(text, HERDR_BURST_CHARS).entries()) {
        if (index > 0) await sleep(HERDR_BURST_GAP_MS);
        await check(await herdr(['pane', 'send-text', pane, burst]), `type into ${pane}`, pane);
      }
    },
    async keys(pane, keys) {
      await livePane(pane);
      for (const [index, key] of keys.entries()) {
        if (index > 0) await sleep(HERDR_KEY_GAP_MS);
        await check(await herdr(['pane', 'send-keys', pane, herdrKey(key)]), `press ${key} in ${pane}`, pane);
      }
    },
    alive,
    async close(pane) {
      const found = await program(pane);
      if (found === null) return;
      await herdr(['pane', 'close', pane]);
      if (found === undefined) return;
      const pid = found.pid;
      // Closing the pane hangs up its terminal; a program that ignores SIGHUP is ended by signal.
      for (const [signal, waitMs] of [[undefined, 2000], ['SIGTERM', 2000], ['SIGKILL', 2000]] as const) {
        if (signal) signalQuietly(pid, signal);
        if (await waitGone(pid, waitMs)) return;
      }
      throw flumeError('AGENT_DID_NOT_EXIT', { pane, pid }, {
        variant: 'herdrPane',
        details: { pane, pid },
      });
    },
  });
}

/**
 * Which of a pane's foreground processes (its shell left out) is the program started there: the
 * leader of the foreground process group, whose id is its pid (a shell with job control makes a
 * job's first process its group's leader; a program the shell `exec`s keeps the shell's pid and
 * group). Without a leader among them, the one started first by its start time in /proc, else the
 * lowest pid. Never simply the lowest pid: pids wrap around (at 32768 by default), so a command the
 * agent runs can hold a lower pid than the agent, and taking it would read the agent as gone.
 */
function programOf(pids: number[], group: unknown): number | undefined {
  if (typeof group === 'number' && pids.includes(group)) return group;
  const started = (pid: number) => Number(processStart(pid) ?? Number.MAX_SAFE_INTEGER);
  return [...pids].sort((a, b) => started(a) - started(b) || a - b)[0];
}

/** True for a process name that is a pane's interactive shell, not a program started in it. */
function isShell(name: string | undefined): boolean {
  return ['sh', 'bash', 'dash', 'zsh', 'fish', 'ksh', 'mksh', 'nu', 'tcsh', 'csh'].includes((name ?? '').replace(/^-/, '').split('/').pop() ?? '');
}

/** A herdr pane's identity: its root pid and that process's start time, so a reused pid is not taken for it. */
function identityOf(pid: number): string {
  const started = processStart(pid);
  return started === undefined ? String(pid) : `${pid}@${started}`;
}
