/**
 * flume's tmux server exits with its last window. A stage's agent hung up (its pane closed) as the
 * next stage opens its pane: the open must find the server gone, or its session going, and start
 * them again, never fail the start ("no server running", "no current target"). Each round closes
 * the only pane while a new one opens, on a server of the test's own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { which } from '../../../core/support/exec.js';

const dir = mkdtempSync(join(tmpdir(), 'flume-tmux-open-'));
const socket = join(dir, 'tmux.sock');
afterAll(async () => {
  await killTmuxServer(socket);
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(which('tmux') === undefined)("a pane opened as flume's tmux server's last pane closes", () => {
  it('opens every time, starting the server again where it went', async () => {
    const host = tmuxHost({ socket });
    const spec = (n: number) => ({ title: `p${n}`, cwd: dir, argv: ['sleep', '300'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    let { pane } = await host.open(spec(0));
    const failures: string[] = [];
    for (let round = 1; round <= 40; round++) {
      const [, opened] = await Promise.allSettled([host.close(pane!), host.open(spec(round))]);
      if (opened.status === 'fulfilled') pane = opened.value.pane;
      else {
        failures.push(`round ${round}: ${(opened.reason as Error).message}`);
        ({ pane } = await host.open(spec(round)));
      }
    }
    expect(failures).toEqual([]);
  });
});
