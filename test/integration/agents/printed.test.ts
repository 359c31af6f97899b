import { afterEach, describe, expect, it } from 'vitest';
import { dirname, join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { tmuxHost, killTmuxServer } from '../../../agents/panes/tmux.js';
import { tempDir, remove } from '../../helpers/repo.js';

let current: AgentRepo | undefined;
let operatorSocket: string | undefined;
afterEach(async () => {
  if (operatorSocket) {
    await killTmuxServer(operatorSocket);
    remove(dirname(operatorSocket));
    operatorSocket = undefined;
  }
  await current?.cleanup();
  current = undefined;
});

describe('the printed command', () => {
  it('prints the exact command with its session id and prompt, then confirms the prompt in the transcript once the operator runs it', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 20_000 }] }] }, { agent: { host: 'printed' } });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'print', '--brief', 'Printed brief.', '--no-watch']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('the config sets agent.host to "printed"');
    const place = await current.place('fix/print');
    const agent = place.stage.agent;
    expect(agent.host).toBe('printed');
    expect(agent.command).toContain('--session-id');
    expect(agent.command).toContain(agent.sessionId);
    expect(agent.command[agent.command.length - 1]).toContain('Printed brief.');
    const before = await current.place('fix/print');
    expect(before.stage).toMatchObject({ delivery: 'sending' });
    expect(before.stage.agent).toMatchObject({ host: 'printed', state: 'not-up', command: agent.command });

    const human = await current.flume(['status', 'fix/print', '--repo', current.repo]);
    expect(human.stdout).toContain('printed');

    // The operator pastes the printed line where they like: here, a shell in a tmux server of the
    // test's own, in a folder that is not the place. The line takes itself there.
    // The line as launch printed it: from `run: ` to the line after it (the prompt's own lines are within quotes).
    const printed = /^run: ([\s\S]*?)\nprompt: /m.exec(result.stdout);
    expect(printed, result.stdout).toBeTruthy();
    const line = printed![1];
    expect(human.stdout).toContain(`run: ${line}`);
    expect(line).toMatch(/^cd \S+ && env /);
    expect(line.slice(3, line.indexOf(' && ')).replace(/^'|'$/g, '')).toBe(place.path);
    const dir = tempDir('flume-operator-');
    operatorSocket = join(dir, 'sock');
    await tmuxHost({ socket: operatorSocket }).open({ title: 'operator', cwd: dir, argv: ['sh', '-c', line], env: { ...(process.env as Record<string, string>) } });
    const { openRepository } = await import('../../../core/config/repository.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');
    const { advance } = await import('../../../core/engine/stage/step.js');
    process.env.FLUME_STATE_DIR = current.state;
    const repository = await openRepository(current.repo, await defaultPreset());
    await waitFor(async () => {
      await advance(repository, 'fix--print');
      return (await current!.place('fix/print')).stage.delivery === 'taken';
    }, 'the printed prompt to be taken');
    const after = await current.place('fix/print');
    expect(after.stage.agent.state).toBe('working');
  });

  it('is what flume falls back to where no tmux is found, and it says so', async () => {
    current = agentRepo({}, { agent: { host: 'auto' } });
    const bin = tempDir('flume-path-');
    const { symlinkSync } = await import('node:fs');
    const { execFileSync } = await import('node:child_process');
    for (const program of ['git', 'sh']) symlinkSync(execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(), join(bin, program));
    symlinkSync(process.execPath, join(bin, 'node'));
    const { flume } = await import('../../helpers/repo.js');
    const result = await flume(['launch', '--kind', 'fix', '--name', 'notmux', '--brief', 'No tmux here.', '--no-watch'], { env: { ...current.env, PATH: bin }, cwd: current.repo });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('neither a running herdr nor tmux is found here');
    expect(result.stdout).toMatch(/run: cd \S+ && env .*--session-id/);
    remove(bin);
  });
});
