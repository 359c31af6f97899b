import { describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { remove, tempDir } from '../../helpers/repo.js';
import { agentRepo } from '../../helpers/agent-repo.js';
import { LONG } from './helpers.js';

/** True while a tmux server answers on `socket`. */
function serverUp(socket: string): boolean {
  try {
    execFileSync('tmux', ['-S', socket, 'list-sessions'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('an agent whose program is missing', { timeout: LONG }, () => {
  it('fails launch (exit 1) naming the program and why, records why the stage never started, and leaves no tmux server', async ({ expect, onTestFinished }) => {
    // `claude` on no folder of the agent's PATH, as on a host without Claude Code.
    const t = agentRepo({}, {}, { binary: 'claude', env: { PATH: '/nonexistent/flume-test-bin' } });
    onTestFinished(() => t.cleanup());
    const result = await t.flume(['launch', '--kind', 'fix', '--name', 'nobin', '--brief', 'Do it.', '--no-watch', '--json']);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error).toMatchObject({ code: 'AGENT_START_FAILED', details: { program: 'claude' } });
    expect(error.message).toContain("The agent's program claude could not start: it is not on the agent's PATH (1 folder searched).");
    expect(error.fix).toContain('flume retry');
    const socket = join(t.state, 'tmux', 'flume.sock');
    expect(existsSync(socket) && serverUp(socket)).toBe(false);
    // Status says the stage never started, and why, without a supervisor.
    const place = await t.place('fix/nobin');
    expect(place.stage).toMatchObject({ state: 'never-started', delivery: 'never-started', needs: expect.stringMatching(/^its agent could not start: .*The agent's program claude could not start: it is not on the agent's PATH/) });
    const text = await t.flume(['status', 'fix/nobin']);
    expect(text.stdout).toContain('needs: its agent could not start');
  });

  it('fails launch (exit 1) with the last words of a program that exits at once, and closes its dead pane so no tmux server stays', async ({ expect, onTestFinished }) => {
    const bin = join(tempDir('flume-bin-'), 'claude');
    writeFileSync(bin, '#!/bin/sh\necho "claude: this build needs a newer node" >&2\nexit 3\n');
    chmodSync(bin, 0o755);
    const t = agentRepo({}, {}, { binary: bin });
    onTestFinished(async () => {
      await t.cleanup();
      remove(dirname(bin));
    });
    const result = await t.flume(['launch', '--kind', 'fix', '--name', 'dies', '--brief', 'Do it.', '--no-watch', '--json']);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe('AGENT_START_FAILED');
    expect(error.message).toContain(`its agent's program ${bin} exited before it took input; its last words: claude: this build needs a newer node`);
    const socket = join(t.state, 'tmux', 'flume.sock');
    expect(existsSync(socket) && serverUp(socket)).toBe(false);
    const place = await t.place('fix/dies');
    expect(place.stage).toMatchObject({ state: 'never-started', needs: expect.stringContaining('this build needs a newer node') });
  });
});

