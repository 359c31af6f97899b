/**
 * `flume/testing`, the package's entry for a driver's author: the conformance kit (core/testing/),
 * and the pane host its checks run on, flume's own tmux host (`tmuxHost`), on a tmux server of the
 * test's own (`testHost`). The kit lives in core, which names no built-in host; this entry joins it
 * to the one the kit's authors are told to use.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaneHost } from '../core/index.js';
import { killTmuxServer, tmuxHost } from './panes/tmux.js';

export * from '../core/testing/index.js';
export { tmuxHost, type TmuxHostOptions } from './panes/tmux.js';

/** A pane host of a test's own: flume's tmux host on a server nothing else uses. */
export interface TestHost extends PaneHost {
  /** The tmux server's socket (`tmux -S <socket> attach` shows its panes). */
  socket: string;
  /** Ends the tmux server, with every pane on it, and removes its folder; the conformance suite calls it as it closes. */
  end(): Promise<void>;
}

/**
 * flume's tmux host on a tmux server of its own, in a temp folder: what the conformance kit's checks
 * type into and read. Handed to the kit as the harness's `host`, it is ended with the suite.
 */
export function testHost(): TestHost {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), 'flume-test-host-')));
  const socket = join(folder, 'tmux.sock');
  return Object.assign(tmuxHost({ socket }), {
    socket,
    async end() {
      await killTmuxServer(socket);
      rmSync(folder, { recursive: true, force: true });
    },
  });
}
