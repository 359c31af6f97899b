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
import { which } from '../../../core/exec.js';
import type { Flume } from '../../../core/index.js';
import type { AgentHandle } from '../../../core/types.js';
import { fakeClaude, readRecords, waitFor } from '../../helpers/fake-claude/index.js';

describe.skipIf(!which('tmux'))('the claude-code driver waits for the agent to take keys', () => {
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
    rmSync(root, { recursive: true, force: true });
  });

  it('sends right after the box appears only once keys reach it: the first Enter is taken', async () => {
    const configDir = join(root, 'config');
    const cwd = join(root, 'repo');
    mkdirSync(cwd, { recursive: true });
    const fake = fakeClaude({ configDir, cwd, script: { footerReadyMs: 1500 } });
    // The driver reads only the pane host from flume.
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
    for (let seen = false; !seen; ) {
      seen = classifyScreen((await host.capture(opened.pane!)) ?? '') === 'input-ready';
      if (!seen) await sleep(5);
    }
    const since = new Date().toISOString();
    expect(await driver.waitForInput(handle, 10_000)).toBe('ready');
    await driver.send(handle, 'Mend the parser.');
    // Taken by the one Enter sent: recorded, and the box let go of the text.
    await waitFor(async () => (await driver.confirm({ handle, text: 'Mend the parser.', since })) === 'taken', 'the prompt taken', 3_000);
    expect(draftText((await host.capture(opened.pane!)) ?? '')).toBe('');
    expect(readRecords(fake.transcriptPath).filter((r) => r.type === 'user' && r.message?.content === 'Mend the parser.')).toHaveLength(1);
  });
});
