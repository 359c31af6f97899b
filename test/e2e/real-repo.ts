/**
 * What the flume end-to-end suites share: a repository whose flume config points the claude-code
 * driver at the REAL Claude Code (the pinned binary, a seeded config dir of the test's own, the
 * scripted Messages API on 127.0.0.1), the flume CLI run against it with a state folder of the
 * test's own, and readers for what the real program wrote.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e'
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentRepo, type AgentRepo } from '../helpers/agent-repo.js';
import { makeClaudeEnv, type ClaudeEnv, type ClaudeEnvOptions, type TranscriptLine } from '../helpers/claude-env.js';
import { startMessagesApi, type MessagesApi, type Script } from '../helpers/messages-api.js';
import { FLUME_BIN } from '../helpers/repo.js';
import { tmuxHost } from '../../agents/panes/tmux.js';
import type { PaneHost } from '../../core/api/pane-host.js';
import { run } from '../../core/support/exec.js';
import { launchedRecord } from '../helpers/result-schema.js';
import { HANG_MS } from '../helpers/wait.js';

/** A repository run by flume with the real Claude Code as its agent. */
export interface RealRepo extends AgentRepo {
  api: MessagesApi;
  claude: ClaudeEnv;
  /** flume's own tmux server (`<state>/tmux/flume.sock`), for reading and pressing keys in a pane. */
  host: PaneHost;
  socket: string;
  /** `flume launch --no-watch --json`; throws unless it succeeds; returns the place. */
  launch(kind: string, name: string, brief: string, extra?: string[]): Promise<any>;
  /** The place as `status --repo --json` lists it; undefined once it is gone. */
  view(id: string): Promise<any | undefined>;
  /** Polls status until `probe` gives something truthy; every view is pushed onto `seen` when given. */
  until<T>(id: string, probe: (place: any | undefined) => T, what: string, options?: { timeoutMs?: number; seen?: any[]; intervalMs?: number }): Promise<NonNullable<T>>;
  /** Starts `flume watch` in the background with this repository's environment. */
  watch(args?: string[]): Watch;
  /** The place's event log. */
  events(key: string): Array<Record<string, any>>;
}

/** A running `flume watch`. */
export interface Watch {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Options for {@link realRepo}. */
export interface RealRepoOptions extends Partial<Omit<ClaudeEnvOptions, 'baseUrl'>> {
  /** The scripted API's replies. */
  script: Script;
  /** Arguments after flume's own on claude's command line (`--plugin-dir …`). */
  args?: string[];
  /** More variables for the agent. */
  env?: Record<string, string>;
  /** Merged into the generated flume config (plain JSON values). */
  config?: Record<string, unknown>;
  /** Lines about each Messages API request go here. */
  log?: (line: string) => void;
}

/** Makes the scripted API, a seeded Claude config dir and a repository whose config runs the real claude. */
export async function realRepo(options: RealRepoOptions): Promise<RealRepo> {
  const api = await startMessagesApi({ script: options.script, log: options.log });
  const claude = makeClaudeEnv({ baseUrl: api.url, permissionMode: options.permissionMode, settings: options.settings, trusted: options.trusted });
  const { limits, ...config } = options.config ?? {};
  const base = agentRepo({}, {
    agents: { 'claude-code': { binary: claude.binary, configDir: claude.configDir, args: options.args ?? [], env: { ...claude.vars, ...options.env } } },
    // The real program on a loaded machine: start within 40 s, a prompt in its transcript within 8 s.
    limits: { promptTimeout: '8s', startTimeout: '40s', ...(limits as object | undefined) },
    ...config,
  });
  const socket = join(base.state, 'tmux', 'flume.sock');
  const watches: Watch[] = [];
  const view = async (id: string) => {
    const result = await base.flume(['status', '--repo', base.repo, '--json']);
    if (result.code !== 0) throw new Error(`status failed: ${result.stdout}${result.stderr}`);
    return (JSON.parse(result.stdout).places as any[]).find((place) => place.id === id);
  };
  const real: RealRepo = {
    ...base,
    api,
    claude,
    host: tmuxHost({ socket }),
    socket,
    async launch(kind, name, brief, extra = []) {
      const result = await base.flume(['launch', '--kind', kind, '--name', name, '--brief', brief, '--no-watch', '--json', ...extra]);
      if (result.code !== 0) throw new Error(`launch failed (${result.code}): ${result.stdout}${result.stderr}`);
      return launchedRecord(result.stdout);
    },
    view,
    async until(id, probe, what, { timeoutMs = 30_000, seen, intervalMs = 200 } = {}) {
      const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
      let last: any;
      for (;;) {
        last = await view(id);
        seen?.push(last);
        const value = probe(last);
        if (value) return value as NonNullable<typeof value>;
        if (Date.now() > deadline) {
          const logs = watches.map((w) => w.output()).join('\n---\n');
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(last?.stage ?? last)}${logs ? `\nwatch said:\n${logs}` : ''}`);
        }
        await sleep(intervalMs);
      }
    },
    watch(args = ['--poll', '1s', '--linger', '0']) {
      const child = spawn(process.execPath, [FLUME_BIN, 'watch', ...args], { cwd: base.repo, env: base.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const exited = new Promise<void>((done) => child.on('exit', () => done()));
      const watch: Watch = {
        child,
        output: () => output,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          if (!(await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]))) {
            child.kill('SIGKILL');
            await exited;
          }
        },
      };
      watches.push(watch);
      return watch;
    },
    events(key) {
      const file = join(base.repo, '.git', 'flume', 'places', `${key}.events.jsonl`);
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    },
    /** Ends everything, then fails the test if the scripted API saw a turn it had no reply for, or traffic it does not know. */
    async cleanup() {
      for (const watch of watches) await watch.stop();
      // The real program writes to its config dir as it exits: wait for every agent to be gone first.
      const pids = await panePids(socket);
      await base.cleanup();
      await waitGone(pids, 5000);
      await api.close();
      for (let tries = 0; ; tries++) {
        try {
          claude.cleanup();
          break;
        } catch (error) {
          if (tries >= 5) throw error;
          await sleep(200);
        }
      }
      // Checked last, once the agents are gone, so a turn asked while they exited counts too.
      const unexpected = api.unexpected();
      if (unexpected.length > 0) throw new Error(`the scripted Messages API saw what no test scripted:\n  ${unexpected.join('\n  ')}`);
    },
  };
  return real;
}

/** The pids of the programs in every pane of a tmux server ([] when none runs). */
async function panePids(socket: string): Promise<number[]> {
  const result = await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_pid}'], { timeoutMs: 5000 });
  return result.exitCode === 0 ? result.stdout.split('\n').map(Number).filter((pid) => pid > 0) : [];
}

/** Waits for the processes to end; kills what is left after `timeoutMs`. */
async function waitGone(pids: number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(alive)) {
    if (Date.now() > deadline) {
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
      return;
    }
    await sleep(50);
  }
}

/** A transcript's lines, parsed (a half-written last line is dropped); [] while it does not exist. */
export function transcript(path: string): TranscriptLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').flatMap((line) => {
    try {
      return line ? [JSON.parse(line) as TranscriptLine] : [];
    } catch {
      return [];
    }
  });
}

/** The prompts a person gave (main-chain `user` lines whose content is text, not tool results). */
export function prompts(path: string): string[] {
  return transcript(path)
    .filter((l) => l.type === 'user' && !l.isMeta && l.isSidechain !== true)
    .flatMap((l) => {
      const content = l.message?.content;
      if (typeof content === 'string') return [content];
      const texts = (content ?? []).filter((b) => b.type === 'text').map((b) => String(b.text));
      return texts.length ? [texts.join('\n')] : [];
    });
}

/** The `tool_use` blocks of the assistant lines, in order. */
export function toolUses(path: string): Array<{ id: string; name: string; input: any }> {
  return transcript(path).flatMap((l) =>
    l.type === 'assistant' && Array.isArray(l.message?.content) ? (l.message!.content.filter((b) => b.type === 'tool_use') as any[]) : [],
  );
}

/** The `tool_result` blocks of the user lines, in order. */
export function toolResultsIn(path: string): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  return transcript(path).flatMap((l) =>
    l.type === 'user' && Array.isArray(l.message?.content) ? (l.message!.content.filter((b) => b.type === 'tool_result') as any[]) : [],
  );
}

/** True while the process runs (a zombie counts as gone). */
export function alive(pid: number): boolean {
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

/** The suite's one wait (test/helpers/wait.ts): its time limit is a hang guard, never the assertion. */
export { waitFor } from '../helpers/wait.js';

/** The code of a `--json` error. */
export function errorCode(stdout: string): string | undefined {
  try {
    return JSON.parse(stdout).error?.code;
  } catch {
    return undefined;
  }
}
