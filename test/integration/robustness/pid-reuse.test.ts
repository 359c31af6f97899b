/**
 * A pid names a process only while it runs: once it ends, the kernel gives its pid to a later process
 * when its count wraps (at 32768 here, minutes on a busy machine). Whatever flume keeps a pid of (an
 * agent's pane program, the process a Claude Code session file names, a lock's holder) it keeps with
 * that process's start, and never signals, waits on or reads alive a later process given the pid.
 * Each case stands a live program of another's (a `sleep`) at the pid flume kept, with another start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeCodeDriver } from '../../../agents/claude-code/driver.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import type { AgentHandle } from '../../../core/api/agent.js';
import { ownsPane } from '../../../core/api/pane-host.js';
import type { Flume } from '../../../core/api/plugin.js';
import { quitAgent } from '../../../core/drivers/driving.js';
import { acquireLock, lockHolder } from '../../../core/state/lock.js';
import { processExists, processStart, sameProcess } from '../../../core/support/process.js';
import { remove, tempDir } from '../../helpers/repo.js';

const dir = tempDir('flume-pid-reuse-');
const others: ChildProcess[] = [];
afterAll(async () => {
  for (const child of others) child.kill('SIGKILL');
  await killTmuxServer(join(dir, 'tmux.sock'));
  remove(dir);
});

/** Another's program, running: what the kernel may have put at a pid flume kept. */
function another(): number {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  others.push(child);
  return child.pid!;
}

/** A start that is not the process's own: the one flume noted of the process the pid named before. */
const earlier = (pid: number) => String(Number(processStart(pid)) - 1);

describe('a pid given to another process since flume kept it', () => {
  it('is told apart by its start', () => {
    const pid = another();
    expect(processStart(pid)).toMatch(/^\d+$/);
    expect(sameProcess(pid, processStart(pid))).toBe(true);
    expect(sameProcess(pid, undefined)).toBe(true);
    expect(sameProcess(pid, earlier(pid))).toBe(false);
  });

  it("holds no lock: a lock whose holder's pid is another's now is stale and taken at once; the holder's own start holds it", async () => {
    const path = join(dir, 'held.lock');
    writeFileSync(path, `${process.pid} ${hostname()} ${randomUUID()} ${earlier(process.pid)}`);
    expect(await lockHolder(path)).toMatchObject({ alive: false });
    const lock = await acquireLock(path, { timeoutMs: 1000 });
    await lock.release();
    writeFileSync(path, `${process.pid} ${hostname()} ${randomUUID()} ${processStart(process.pid)}`);
    expect(await lockHolder(path)).toMatchObject({ alive: true });
    await expect(acquireLock(path, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'PLACE_BUSY' });
  });

  it('holds no lock once it has ended, though its parent has not reaped it yet (a zombie)', async () => {
    // A child whose parent never waits: `sleep 0.1` ends, and stays a zombie while `sleep 600` runs.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'ignore'] });
    others.push(parent);
    const pid = Number(await new Promise<string>((done) => parent.stdout!.once('data', (d) => done(String(d)))));
    const start = processStart(pid)!;
    const path = join(dir, 'zombie.lock');
    writeFileSync(path, `${pid} ${hostname()} ${randomUUID()} ${start}`);
    expect(await lockHolder(path)).toMatchObject({ alive: true });
    for (let i = 0; i < 100 && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); i++) await sleep(20);
    expect(processExists(pid)).toBe(true);
    expect(sameProcess(pid, start)).toBe(false);
    expect(await lockHolder(path)).toMatchObject({ alive: false });
    const lock = await acquireLock(path, { timeoutMs: 0 });
    await lock.release();
  });

  it("is not a Claude Code agent the session file of a killed one names: stop signals nothing, and the agent reads exited", async () => {
    const configDir = join(dir, 'claude');
    mkdirSync(join(configDir, 'sessions'), { recursive: true });
    const pid = another();
    const sessionId = randomUUID();
    // What Claude Code killed outright leaves: its file, naming its pid and its start.
    writeFileSync(join(configDir, 'sessions', `${pid}.json`), JSON.stringify({ pid, sessionId, cwd: dir, procStart: earlier(pid), status: 'idle' }));
    const driver = claudeCodeDriver({ hosts: new Map() } as unknown as Flume, { configDir });
    const handle: AgentHandle = { driver: 'claude-code', sessionId, host: 'printed', cwd: dir, startedAt: new Date().toISOString() };
    expect((await driver.read(handle)).state).toBe('exited');
    await driver.stop(handle);
    await sleep(200);
    expect(processExists(pid)).toBe(true);
  });

  it("is not an agent's pane program: its pane is not taken for the agent's by pid, and stopping the agent closes its pane and ends nothing else", async () => {
    const host = tmuxHost({ socket: join(dir, 'tmux.sock') });
    const opened = await host.open({ title: 'agent', cwd: dir, argv: ['sleep', '600'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const pid = another();
    const handle: AgentHandle = { driver: 'codex', sessionId: randomUUID(), host: host.key, cwd: dir, startedAt: new Date().toISOString(), pane: opened.pane, pid, pidStart: earlier(pid) };
    expect(await ownsPane(host, handle)).toBe(false);
    // With the pane's own identity, the pane is the agent's; the pid kept beside it is another's now.
    await quitAgent(host, { ...handle, paneIdentity: opened.identity }, { agent: 'codex', hangUp: true });
    expect(await host.alive(opened.pane!)).toBe(false);
    expect(processExists(pid)).toBe(true);
  });
});
