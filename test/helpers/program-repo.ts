/**
 * A repository run by flume with a REAL agent program as its agent (`agent.driver`), its options
 * pointing at a scripted API, flume's CLI run with a state folder of the test's own, and status polled
 * as an operator would read it. The Codex and Gemini CLI suites build theirs on it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processRunning } from '../../core/support/process.js';
import { run } from '../../core/support/exec.js';
import { agentRepo, type AgentRepo } from './agent-repo.js';
import { FLUME_BIN } from './repo.js';
import { launchedRecord } from './result-schema.js';
import { HANG_MS } from './wait.js';

/** A repository whose stages run a real agent program. */
export interface ProgramRepo extends AgentRepo {
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
  /** Starts `flume watch` (its slow poll 1 s unless `poll` names another). */
  watch(options?: { poll?: string }): void;
}

/**
 * A repository whose config runs `driver` with `options` (its `agents[driver]`), `config` over it;
 * `closeProgram` ends what the program's scripted API and folders need, after the agents are gone.
 */
export function programRepo(driver: string, options: object, config: Record<string, unknown> = {}, closeProgram: () => Promise<void> = async () => undefined): ProgramRepo {
  const { limits, ...rest } = config;
  const base = agentRepo({}, {
    agent: { host: 'tmux', driver },
    agents: { [driver]: options },
    // The real program on a loaded machine: up within 30 s, a prompt in its record within 8 s.
    limits: { promptTimeout: '8s', startTimeout: '30s', ...(limits as object | undefined) },
    ...rest,
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
    socket,
    async launch(kind, name, brief, extra = []) {
      const result = await base.flume(['launch', '--kind', kind, '--name', name, '--brief', brief, '--no-watch', '--json', ...extra]);
      if (result.code !== 0) throw new Error(`launch failed (${result.code}): ${result.stdout}${result.stderr}`);
      return launchedRecord(result.stdout);
    },
    view,
    async until(id, probe, what, timeoutMs = 30_000) {
      const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
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
    watch(options = {}) {
      const child = spawn(process.execPath, [FLUME_BIN, 'watch', '--poll', options.poll ?? '1s', '--linger', '0', '--quiet'], { cwd: base.repo, env: base.env, stdio: 'ignore' });
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
      await closeProgram();
    },
  };
}


async function panePids(socket: string): Promise<number[]> {
  const result = await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_pid}'], { timeoutMs: 5000 });
  return result.exitCode === 0 ? result.stdout.split('\n').map(Number).filter((pid) => pid > 0) : [];
}

/** True while the process runs (a zombie does not). */
const alive = processRunning;
