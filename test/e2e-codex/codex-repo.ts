/**
 * A repository run by flume with the REAL Codex CLI as its agent (`agent.driver: 'codex'`), its
 * `agents.codex` pointing at the scripted Responses API (test/helpers/codex-env.ts), flume's CLI run
 * with a state folder of the test's own, and status polled as an operator would read it.
 */
import { processRunning } from '../../core/support/process.js';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentRepo, type AgentRepo } from '../helpers/agent-repo.js';
import { FLUME_BIN } from '../helpers/repo.js';
import { codexEnv, type CodexEnv } from '../helpers/codex-env.js';
import type { Script } from '../helpers/responses-api.js';
import { run } from '../../core/support/exec.js';
import { launchedRecord } from '../helpers/result-schema.js';

/** A repository whose stages run the real Codex. */
export interface CodexRepo extends AgentRepo {
  codex: CodexEnv;
  socket: string;
  /** `flume launch --no-watch --json`; throws unless it succeeds; returns the place. */
  launch(kind: string, name: string, brief: string, extra?: string[]): Promise<any>;
  /** The place as `status --repo --json` lists it; undefined once it is gone. */
  view(id: string): Promise<any | undefined>;
  /** Polls status until `probe` gives something truthy. */
  until<T>(id: string, probe: (place: any | undefined) => T, what: string, timeoutMs?: number): Promise<NonNullable<T>>;
  /** The place's event log. */
  events(key: string): Array<Record<string, any>>;
  /** The place's live record (`.git/flume/places/<key>.json`). */
  record(key: string): any;
  /** Starts `flume watch` (the supervisor) in the background; cleanup ends it. */
  watch(): void;
}

/**
 * Codex's own default sandbox (`workspace-write`, no `-s` given) with the temporary folders taken out
 * of what it lets a command write: the test's repository lives under /tmp, which the sandbox would
 * otherwise leave writable, so this makes it as a repository in a home folder is.
 */
export const DEFAULT_SANDBOX = ['-c', 'sandbox_workspace_write.exclude_slash_tmp=true', '-c', 'sandbox_workspace_write.exclude_tmpdir_env_var=true'];

/** Makes the scripted API and a repository whose config runs the real Codex (`args`: after flume's own; default the sandbox off). */
export async function codexRepo(options: { script: Script; config?: Record<string, unknown>; args?: string[] }): Promise<CodexRepo> {
  const codex = await codexEnv({ script: options.script, args: options.args });
  const { limits, ...config } = options.config ?? {};
  const base = agentRepo({}, {
    agent: { host: 'tmux', driver: 'codex' },
    agents: { codex: codex.options },
    // The real program on a loaded machine: up within 30 s, a prompt in its rollout within 8 s.
    limits: { promptTimeout: '8s', startTimeout: '30s', ...(limits as object | undefined) },
    ...config,
  });
  const socket = join(base.state, 'tmux', 'flume.sock');
  const watches: Array<import('node:child_process').ChildProcess> = [];
  const view = async (id: string) => {
    const result = await base.flume(['status', '--repo', base.repo, '--json']);
    if (result.code !== 0) throw new Error(`status failed: ${result.stdout}${result.stderr}`);
    return (JSON.parse(result.stdout).places as any[]).find((place) => place.id === id);
  };
  return {
    ...base,
    codex,
    socket,
    async launch(kind, name, brief, extra = []) {
      const result = await base.flume(['launch', '--kind', kind, '--name', name, '--brief', brief, '--no-watch', '--json', ...extra]);
      if (result.code !== 0) throw new Error(`launch failed (${result.code}): ${result.stdout}${result.stderr}`);
      return launchedRecord(result.stdout);
    },
    view,
    async until(id, probe, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const last = await view(id);
        const value = probe(last);
        if (value) return value as NonNullable<typeof value>;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(last?.stage ?? last)}`);
        await sleep(250);
      }
    },
    events(key) {
      const file = join(base.repo, '.git', 'flume', 'places', `${key}.events.jsonl`);
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    },
    record(key) {
      return JSON.parse(readFileSync(join(base.repo, '.git', 'flume', 'places', `${key}.json`), 'utf8'));
    },
    watch() {
      const child = spawn(process.execPath, [FLUME_BIN, 'watch', '--poll', '1s', '--linger', '0', '--quiet'], { cwd: base.repo, env: base.env, stdio: 'ignore' });
      watches.push(child);
    },
    async cleanup() {
      for (const child of watches) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        if (!(await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]))) child.kill('SIGKILL');
      }
      const pids = await panePids(socket);
      await base.cleanup();
      const deadline = Date.now() + 5000;
      while (pids.some(alive) && Date.now() < deadline) await sleep(50);
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
      await codex.cleanup();
    },
  };
}

/** The Codex rollout of an agent flume started (its private home under the state folder). */
export function rolloutOf(state: string, sessionId: string): string | undefined {
  const found: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.jsonl') && found.push(join(dir, entry.name));
  };
  walk(join(state, 'codex', sessionId, 'sessions'));
  return found.sort().at(-1);
}

/** A rollout's lines, parsed. */
export function rolloutLines(path: string): Array<{ timestamp: string; type: string; payload: any }> {
  // Only whole lines: the last may be being written.
  const text = readFileSync(path, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** The prompts a user gave, as the rollout records them (`item_completed` UserMessage). */
export function userPrompts(path: string): string[] {
  return rolloutLines(path)
    .filter((l) => l.type === 'event_msg' && l.payload?.type === 'item_completed' && l.payload.item?.type === 'UserMessage')
    .map((l) => (l.payload.item.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n'));
}

/**
 * The prompts a user gave once the rollout holds `count` of them (at most `timeoutMs`): flume counts a
 * prompt taken from the first line that records it, and Codex writes the `item_completed` line these
 * are read from a little after the others, which on a loaded machine can be after flume has answered.
 */
export async function userPromptsWritten(path: string, count: number, timeoutMs = 10_000): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const prompts = userPrompts(path);
    if (prompts.length >= count || Date.now() > until) return prompts;
    await sleep(100);
  }
}

async function panePids(socket: string): Promise<number[]> {
  const result = await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_pid}'], { timeoutMs: 5000 });
  return result.exitCode === 0 ? result.stdout.split('\n').map(Number).filter((pid) => pid > 0) : [];
}

/** True while the process runs (a zombie does not). */
const alive = processRunning;
