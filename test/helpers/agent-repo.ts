/**
 * A repository whose flume config points the claude-code driver at the fake agent (or any binary),
 * with a state folder, a Claude config folder and a tmux socket of the test's own.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume, flumeEnv, makeRepo, remove, tempDir, trustMade, type CliResult } from './repo.js';
import { FAKE_CLAUDE, type FakeScript } from './fake-claude/index.js';
import { killTmuxServer } from '../../agents/panes/tmux.js';
import { lockHolder } from '../../core/state/lock.js';
import { processStart, sameProcess, signalQuietly, waitGone } from '../../core/support/process.js';

/** What a test works with. */
export interface AgentRepo {
  repo: string;
  state: string;
  configDir: string;
  env: Record<string, string>;
  /** Writes a new script for the fake agents started from now on. */
  script(script: FakeScript): void;
  /** runFlume in the repository with its environment; `process` for a test about the process. */
  flume(args: string[], options?: { process?: boolean }): Promise<CliResult>;
  /** `flume status --json` for one place. */
  place(id: string): Promise<any>;
  cleanup(): Promise<void>;
}

/** Makes the repository; `config` is merged into the generated flume config (plain JSON values). */
export function agentRepo(script: FakeScript = {}, config: Record<string, unknown> = {}, options: { binary?: string; args?: string[]; env?: Record<string, string> } = {}): AgentRepo {
  const state = tempDir('flume-state-');
  const configDir = tempDir('flume-claude-');
  const scriptPath = join(configDir, 'script.json');
  writeFileSync(scriptPath, JSON.stringify(script));
  const full = {
    agent: { host: 'tmux' },
    agents: { 'claude-code': { binary: options.binary ?? FAKE_CLAUDE, configDir, args: options.args ?? [], env: { FAKE_CLAUDE_SCRIPT: scriptPath, ...options.env } } },
    limits: { promptTimeout: '3s', startTimeout: '15s' },
    ...config,
  };
  // Data alone, as JSON: no probe process and no compiler for the many repositories the suite makes.
  // (A TypeScript config is what the config, trust, plugin and end-to-end tests load.)
  const repo = makeRepo({ config: `${JSON.stringify(full, null, 2)}\n`, configFile: '.flumerc.json' });
  const env = flumeEnv(state);
  // Trusted in its own state folder now, for what runs flume in-process or spawns it directly.
  const trusted = trustMade(state);
  // Its failure is the first flume run's (which awaits it), never an unhandled rejection of its own.
  trusted.catch(() => undefined);
  const run = async (args: string[], options: { process?: boolean } = {}) => (await trusted, flume(args, { env, cwd: repo, ...options }));
  return {
    repo,
    state,
    configDir,
    env,
    script: (next) => writeFileSync(scriptPath, JSON.stringify(next)),
    flume: run,
    async place(id) {
      const result = await run(['status', id, '--repo', repo, '--json']);
      if (result.code !== 0) throw new Error(result.stdout + result.stderr);
      return JSON.parse(result.stdout).places[0];
    },
    async cleanup() {
      // A test that never ran flume may end before the trust is written: its state is removed only after.
      await trusted.catch(() => undefined);
      await stopSupervisor(state);
      await killTmuxServer(join(state, 'tmux', 'flume.sock'));
      remove(repo);
      remove(state);
      remove(configDir);
    },
  };
}

/**
 * Ends a supervisor a test's launch (or tell) started in the background (its pid is in its lock),
 * and waits for it to be gone: one still writing its state while the folders are removed made
 * `rmdir` fail with ENOTEMPTY. SIGKILL after 5 s. A lock left by a supervisor killed earlier names a
 * pid that may be another program's by now (another test's): only a live holder is signalled. A
 * supervisor started so late that it holds no lock yet (a launch run by an agent's tool, just ended)
 * is found by the state folder in its environment, and ended too.
 */
export async function stopSupervisor(state: string): Promise<void> {
  const holder = await lockHolder(join(state, 'watch.lock'));
  const found = holder?.pid && holder.alive ? [{ pid: holder.pid, start: processStart(holder.pid) }] : [];
  for (const pid of flumeProcessesOf(state)) if (!found.some((one) => one.pid === pid)) found.push({ pid, start: processStart(pid) });
  for (const { pid } of found) signalQuietly(pid, 'SIGTERM');
  for (const { pid, start } of found) if (!(await waitGone(pid, 5000)) && sameProcess(pid, start)) signalQuietly(pid, 'SIGKILL');
}

/** The flume processes (a `flume.js` on their command line) other than this one whose environment names `state` as their state folder. */
function flumeProcessesOf(state: string): number[] {
  const wanted = `FLUME_STATE_DIR=${state}`;
  const found: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  for (const name of entries) {
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('flume.js')) continue;
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(wanted)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
