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
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'print', '--brief', 'Printed brief.', '--no-watch', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const { place } = JSON.parse(result.stdout);
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

    // The operator runs the command where they like: here, a tmux server of the test's own.
    const dir = tempDir('flume-operator-');
    operatorSocket = join(dir, 'sock');
    const [, ...rest] = agent.command as string[];
    const envWords = rest.slice(0, rest.findIndex((w: string) => !w.includes('=') && w !== '-u'));
    const argv = rest.slice(envWords.length);
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    for (const word of envWords) if (word.includes('=')) env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
    await tmuxHost({ socket: operatorSocket }).open({ title: 'operator', cwd: place.path, argv, env });
    const { openRepository } = await import('../../../core/context.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');
    const { advance } = await import('../../../core/engine/step.js');
    process.env.FLUME_STATE_DIR = current.state;
    const repository = await openRepository(current.repo, await defaultPreset());
    await waitFor(async () => {
      await advance(repository, 'fix--print');
      return (await current!.place('fix/print')).stage.delivery === 'taken';
    }, 'the printed prompt to be taken', 15_000);
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
    expect(result.stdout).toContain('no herdr or tmux here');
    expect(result.stdout).toMatch(/run: .*--session-id/);
    remove(bin);
  });
});
