import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, remove, tempDir } from '../../helpers/repo.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';

let current: AgentRepo | undefined;
let viewSocket: string | undefined;
afterEach(async () => {
  if (viewSocket) {
    await killTmuxServer(viewSocket);
    remove(dirname(viewSocket));
    viewSocket = undefined;
  }
  await current?.cleanup();
  current = undefined;
});

describe('flume status --watch', () => {
  it('redraws in a real terminal when a stage changes', async () => {
    // The agent commits only once the test has seen the first view (a gate file), so a slow start of
    // the view on a loaded machine cannot miss the code stage.
    const gate = join(tempDir('flume-gate-'), 'commit');
    current = agentRepo({
      onPrompt: [
        { match: 'Submit the branch', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
        {
          actions: [
            { say: 'Fixing.' },
            { run: ['sh', '-c', `n=0; while [ ! -e "${gate}" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done; echo fixed > fix.txt && git add fix.txt && git commit -qm fix`] },
            { sleepMs: 60_000 },
          ],
        },
      ],
    });
    const launched = await current.flume(['launch', '--kind', 'fix', '--name', 'view', '--brief', 'Fix it.', '--no-watch']);
    expect(launched.code, launched.stderr).toBe(0);
    const dir = tempDir('flume-view-');
    viewSocket = join(dir, 'sock');
    const host = tmuxHost({ socket: viewSocket });
    const { pane } = await host.open({ title: 'view', cwd: current.repo, argv: [process.execPath, FLUME_BIN, 'status', '--watch'], env: { ...current.env, TERM: 'xterm-256color' } });
    const before = await waitFor(async () => {
      const screen = (await host.capture(pane!)) ?? '';
      return screen.includes('fix/view') ? screen : undefined;
    }, 'the first view');
    expect(before).toMatch(/fix\/view\s+active\s+1\/2 code (working|starting)/);
    writeFileSync(gate, '');
    // The agent commits; a step of the place (as the supervisor would take) ends the stage and starts the next.
    const { openRepository } = await import('../../../core/config/repository.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');
    const { advance } = await import('../../../core/engine/stage/step.js');
    process.env.FLUME_STATE_DIR = current.state;
    const repository = await openRepository(current.repo, await defaultPreset());
    await waitFor(async () => {
      await advance(repository, 'fix--view');
      return (await current!.place('fix/view')).stage.name === 'submission';
    }, 'the submission stage');
    const after = await waitFor(async () => {
      const screen = (await host.capture(pane!)) ?? '';
      return /2\/2 submission/.test(screen) ? screen : undefined;
    }, 'the redrawn view');
    expect(after).not.toMatch(/1\/2 code/);
  });

  it('prints plain blocks, only when the view changes, when not a terminal', async () => {
    const state = tempDir('flume-state-');
    const child = spawn(process.execPath, [FLUME_BIN, 'status', '--watch'], { env: { ...process.env, FLUME_STATE_DIR: state }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await waitFor(() => out.includes('no places'), 'the first view');
    child.kill('SIGINT');
    await new Promise((done) => child.on('close', done));
    expect(out).not.toContain('\x1b[');

    // Quiet while nothing changes: the command's own loop, run here so its readings can be counted
    // (a fixed wait proves nothing on a host too slow to read again within it). Two readings after
    // the first view, each the same view, print nothing more.
    const { watchStatus } = await import('../../../core/cli/view/status-watch.js');
    const { status } = await import('../../../core/engine/status/status.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');
    process.env.FLUME_STATE_DIR = state;
    let readings = 0;
    let printed = '';
    const controller = new AbortController();
    const io = { stdout: (text: string) => void (printed += text), stderr: () => undefined, isTTY: false };
    const read = async () => {
      const report = await status(defaultPreset);
      readings++;
      return report;
    };
    const loop = watchStatus(io, read, { signal: controller.signal, pollMs: 100 });
    await waitFor(() => printed.includes('no places'), 'the first view in this process');
    const first = readings;
    await waitFor(() => readings >= first + 2, 'two more readings');
    controller.abort();
    await loop;
    expect(printed).not.toContain('\x1b[');
    expect(printed.match(/no places/g)).toHaveLength(1);
    remove(state);
  });
});
