/**
 * The Codex driver itself, on the real tmux host with the real Codex CLI, through its contract alone
 * (as the conformance kit drives a driver): a prompt never sent reads `unknown` then `not-yet`; a
 * draft is seen; `resend` submits the same text left in the box, refuses other text with nothing
 * typed, and types the text when the box is empty; `stop` returns once every process is gone.
 */
import { processRunning } from '../../core/support/process.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codexDriver } from '../../agents/codex/driver.js';
import { draftText, sameDraft } from '../../agents/codex/screen.js';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { trustRepository } from '../../core/config/trust.js';
import { codexEnv, type CodexEnv } from '../helpers/codex-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { makeRepo, remove, tempDir } from '../helpers/repo.js';
import { message } from '../helpers/responses-api.js';
import { HANG_MS } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** True while the process runs (a zombie does not). */
const alive = processRunning;

function children(pid: number): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(n)] : [];
    } catch {
      return [];
    }
  });
}

describe('the Codex driver on the real tmux host', () => {
  it('confirms only what the rollout shows, resends truthfully, and stops only once its processes are gone', async () => {
    const env: CodexEnv = await codexEnv({ script: [message('One.'), message('Two.')] });
    const state = tempDir('flume-codex-state-');
    const repo = makeRepo();
    const before = process.env.FLUME_STATE_DIR;
    process.env.FLUME_STATE_DIR = state;
    const socket = join(state, 'tmux', 'flume.sock');
    cleanups.push(() => env.cleanup(), () => remove(repo), () => remove(state), () => killTmuxServer(socket), () => {
      if (before === undefined) delete process.env.FLUME_STATE_DIR;
      else process.env.FLUME_STATE_DIR = before;
    });
    await trustRepository(repo, state);
    const host = tmuxHost({ socket });
    const driver = codexDriver({ hosts: { get: (key: string) => (key === 'tmux' ? host : undefined) } } as never, env.options);
    const request = { place: { id: 'fix/x', repo, path: repo }, stage: { name: 'code', prompt: '', deliverable: 'commit' }, sessionId: 'b7c1e0a4-0000-4000-8000-000000000001', prompt: 'First prompt.', host: 'tmux' } as never;
    const handle = await driver.start(request, host);
    expect(handle).toMatchObject({ driver: 'codex', host: 'tmux', version: '0.171.0', data: { codexHome: join(state, 'codex', 'b7c1e0a4-0000-4000-8000-000000000001') } });

    expect(await driver.waitForInput(handle, 30_000)).toBe('ready');
    expect(await driver.hasDraft(handle)).toBe(false);
    // No rollout before the first prompt: nothing can be said yet.
    expect(await driver.confirm({ handle, text: 'First prompt.' })).toBe('unknown');

    // The text left in the box (a lost Enter): resend submits it, typing nothing more.
    await host.type(handle.pane!, 'First prompt.');
    // The whole text, not the first keys of it: resend rightly refuses a box holding other text.
    await until(async () => sameDraft(draftText((await host.capture(handle.pane!)) ?? ''), 'First prompt.'));
    await driver.resend(handle, 'First prompt.');
    await until(async () => (await driver.confirm({ handle, text: 'First prompt.' })) === 'taken');
    expect(await driver.confirm({ handle, text: 'Second prompt.' })).toBe('not-yet');
    await until(async () => (await driver.read(handle)).turnEnded);
    expect(await driver.read(handle)).toMatchObject({ state: 'idle', turnEnded: true, needs: 'One.' });

    // Other text in the box: refused, the box left as it was.
    await host.type(handle.pane!, 'someone else typing');
    await until(async () => sameDraft(draftText((await host.capture(handle.pane!)) ?? ''), 'someone else typing'));
    await expect(driver.resend(handle, 'Second prompt.')).rejects.toMatchObject({ code: 'AGENT_BUSY' });
    expect(await host.capture(handle.pane!)).toMatch(/› someone else typing\s*$/m);
    await host.keys(handle.pane!, ['C-u']);
    await until(async () => !(await driver.hasDraft(handle)));
    // An empty box: resend types the text and submits it.
    await driver.resend(handle, 'Second prompt.');
    await until(async () => (await driver.confirm({ handle, text: 'Second prompt.' })) === 'taken');

    // stop: resolves only when the launcher and its native child are both gone.
    const processes = [handle.pid!, ...children(handle.pid!).flatMap((c) => [c, ...children(c)])];
    expect(processes.length).toBeGreaterThanOrEqual(2);
    await driver.stop(handle);
    expect(processes.filter(alive)).toEqual([]);
    expect((await driver.read(handle)).state).toBe('exited');
  });
});

async function until(check: () => Promise<unknown>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
