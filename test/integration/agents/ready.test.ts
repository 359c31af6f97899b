/**
 * The claude-code driver types only once the agent takes keys. Claude Code 2.1.332 draws its input
 * box 70–200 ms before the footer's second render (`← for agents`), and an Enter sent in between is
 * lost, the prompt left in the box (test/fixtures/claude-2.1.332/README.md, "a lost Enter"). The
 * fake does the same (`footerReadyMs`); here its footer comes 1.5 s after its box, as on a very
 * loaded machine, and the test sees the box within a few milliseconds of its drawing, so what the
 * driver does next starts from the box's first frame: a driver that only waits a fixed time after
 * the box (or not at all) sends its Enter into the gap.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeDriver } from '../../../agents/claude-code/driver.js';
import { classifyScreen, draftText } from '../../../agents/claude-code/screen.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { which } from '../../../core/support/exec.js';
import type { Flume } from '../../../core/index.js';
import type { AgentHandle } from '../../../core/api/agent.js';
import { fakeClaude, readRecords, waitFor, type FakeScript } from '../../helpers/fake-claude/index.js';

describe.skipIf(!which('tmux'))('the claude-code driver types as 2.1.332 takes keys', () => {
  let root: string;
  let socket: string;
  let host: ReturnType<typeof tmuxHost>;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flume-ready-'));
    socket = join(root, 'tmux.sock');
    host = tmuxHost({ socket });
  });

  afterAll(async () => {
    await killTmuxServer(socket);
    // The fake agent of the killed server may still write its files a moment: retried until it has let go.
    rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  });

  let cases = 0;
  /** A fake in a pane, its handle as the driver made it, and the driver (which reads only the pane host from flume). */
  async function start(script: FakeScript) {
    const dir = join(root, `case-${++cases}`);
    const configDir = join(dir, 'config');
    const cwd = join(dir, 'repo');
    mkdirSync(cwd, { recursive: true });
    const fake = fakeClaude({ configDir, cwd, script });
    const driver = claudeCodeDriver({ hosts: { get: () => host } } as unknown as Flume, { configDir });
    const opened = await host.open(fake.spec);
    const handle: AgentHandle = {
      driver: 'claude-code',
      sessionId: fake.sessionId,
      host: 'tmux',
      version: '2.1.332',
      pane: opened.pane!,
      paneIdentity: opened.identity,
      pid: opened.pid,
      transcriptPath: fake.transcriptPath,
      cwd,
      startedAt: new Date().toISOString(),
      data: { configDir },
    };
    return { fake, driver, opened, handle };
  }

  it('sends right after the box appears only once keys reach it: the first Enter is taken', async () => {
    const { fake, driver, opened, handle } = await start({ footerReadyMs: 1500 });
    for (let seen = false; !seen; ) {
      seen = classifyScreen((await host.capture(opened.pane!)) ?? '') === 'input-ready';
      if (!seen) await sleep(5);
    }
    const since = new Date().toISOString();
    expect(await driver.waitForInput(handle, 10_000)).toBe('ready');
    await driver.send(handle, 'Mend the parser.');
    // Taken by the one Enter sent: recorded, and the box let go of the text.
    await waitFor(async () => (await driver.confirm({ handle, text: 'Mend the parser.', since })) === 'taken', 'the prompt taken');
    expect(draftText((await host.capture(opened.pane!)) ?? '')).toBe('');
    expect(readRecords(fake.transcriptPath).filter((r) => r.type === 'user' && r.message?.content === 'Mend the parser.')).toHaveLength(1);
  });

  it('confirms a prompt of four short lines, which 2.1.332 takes as a paste and records in pasted_content tags', async () => {
    const { fake, driver, opened, handle } = await start({});
    const since = new Date().toISOString();
    const prompt = 'Fix the parser:\n- keep the old test\n- add one for the bug\n- commit';
    expect(await driver.waitForInput(handle, 10_000)).toBe('ready');
    await driver.send(handle, prompt);
    await waitFor(async () => (await driver.confirm({ handle, text: prompt, since })) === 'taken', 'the pasted prompt taken');
    const recorded = readRecords(fake.transcriptPath).filter((r) => r.type === 'user' && typeof r.message?.content === 'string');
    expect(recorded.map((r) => r.message.content)).toEqual([expect.stringMatching(/^\n\n<pasted_content id="[0-9a-f]{4}">\nFix the parser:\n[^]*\n- commit\n<\/pasted_content id="[0-9a-f]{4}">\n$/)]);
    expect(draftText((await host.capture(opened.pane!)) ?? '')).toBe('');
  });

  // As 2.1.332 on a loaded host: typed text shows a while after it comes, and an Enter before it
  // shows is lost. Each is shown late, yet sooner than the driver's longest wait for it (500 ms for a
  // short line, 1 s for a long one or a paste), and later than a bare Enter after typing arrives.
  it.each([
    ['a short line', 'Mend the parser.', 400],
    ['a long line', `Mend the parser ${'and keep every old test passing '.repeat(12)}.`, 600],
    ['four short lines, pasted', 'Fix the parser:\n- keep the old test\n- add one for the bug\n- commit', 600],
  ])('presses Enter only once the box shows the text: %s is taken by the one Enter', async (_, prompt, echoMs) => {
    const { driver, opened, handle } = await start({ echoMs });
    const since = new Date().toISOString();
    expect(await driver.waitForInput(handle, 10_000)).toBe('ready');
    await driver.send(handle, prompt);
    await waitFor(async () => (await driver.confirm({ handle, text: prompt, since })) === 'taken', 'the prompt taken');
    expect(draftText((await host.capture(opened.pane!)) ?? '')).toBe('');
  });

  it('reads the queued placeholder as an empty box: a prompt waiting in the queue is no one else’s draft', async () => {
    const { fake, driver, opened, handle } = await start({ onPrompt: [{ match: 'slow', actions: [{ sleepMs: 30_000 }] }] });
    expect(await driver.waitForInput(handle, 10_000)).toBe('ready');
    await driver.send(handle, 'A slow one.');
    await waitFor(async () => classifyScreen((await host.capture(opened.pane!)) ?? '') === 'working', 'work');
    await driver.send(handle, 'Queued while busy.');
    await waitFor(() => readRecords(fake.transcriptPath).some((r) => r.type === 'queue-operation' && r.operation === 'enqueue'), 'the enqueue');
    await waitFor(async () => ((await host.capture(opened.pane!)) ?? '').includes('\u00a0Press up to edit queued messages'), 'the placeholder');
    expect(await driver.hasDraft(handle)).toBe(false);
    await host.type(opened.pane!, 'half typed');
    await waitFor(async () => ((await host.capture(opened.pane!)) ?? '').includes('\u00a0half typed'), 'the draft');
    expect(await driver.hasDraft(handle)).toBe(true);
  });
});
