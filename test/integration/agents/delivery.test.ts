import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { hasInputBox } from '../../helpers/claude-pane.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { tmuxHost } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';

let current: AgentRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const busy = { onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 60_000 }] }] };

function userPrompts(transcript: string): string[] {
  return readRecords(transcript)
    .filter((r) => r.type === 'user' && typeof r.message?.content === 'string')
    .map((r) => r.message.content as string);
}

describe('prompt delivery with the claude-code driver in flume\'s tmux', () => {
  it('starts the first stage\'s agent with a session id and confirms its prompt in the transcript', async () => {
    current = agentRepo(busy);
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'one', '--brief', 'Mend the parser.', '--no-watch', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const place = launchedRecord(result.stdout);
    expect(place.stage).toMatchObject({ name: 'code', index: 0, delivery: 'taken', sends: 1 });
    const agent = place.stage.agent;
    expect(agent).toMatchObject({ driver: 'claude-code', host: 'tmux' });
    expect(agent.pane).toMatch(/^%\d+$/);
    expect(agent.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const prompts = userPrompts(agent.transcriptPath);
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('Mend the parser.');
    expect(prompts[0]).toContain(place.path);
    const status = await current.place('fix/one');
    expect(status.stage).toMatchObject({ name: 'code', index: 0, of: 2, state: 'working', delivery: 'taken' });
    expect(status.stage.agent).toMatchObject({ driver: 'claude-code', state: 'working', sessionId: agent.sessionId, pane: agent.pane });
    // The version the agent's program reported at start (`claude --version`) is in its record and in status.
    expect(agent.version).toBe('2.1.332');
    expect(status.stage.agent.version).toBe('2.1.332');
    const text = await current.flume(['status', '--repo', current.repo]);
    expect(text.stdout).toContain('agent claude-code 2.1.332 working in tmux');
  });

  it('presses Enter only once the box shows the text, so an agent slow to show what was typed takes it at the first sending', async () => {
    // The box shows typed text 350 ms after it comes, and an Enter before that is lost (as 2.1.332's
    // on a loaded host): a driver that pressed Enter at once would need a second sending each time.
    current = agentRepo({ echoMs: 350, onPrompt: [{ actions: [{ say: 'Which colour should it be?' }] }] });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'echo', '--brief', 'Paint the shed.', '--no-watch', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const place = launchedRecord(result.stdout);
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1 });
    await waitFor(async () => (await current!.place('fix/echo')).stage.agent.state === 'idle', 'the agent to end its turn');
    const told = await current.flume(['tell', 'fix/echo', 'Answer: blue', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: true, sends: 1 });
    expect(userPrompts(place.stage.agent.transcriptPath).slice(1)).toEqual(['Answer: blue']);
  });

  it('sends once more when the first sending is dropped, and the second is taken', async () => {
    current = agentRepo({ ...busy, dropInputs: 1 });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'drop', '--brief', 'Try again.', '--no-watch', '--json']);
    const place = launchedRecord(result.stdout);
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 2 });
    expect(userPrompts(place.stage.agent.transcriptPath)).toHaveLength(1);
  });

  it('reports the stage never started when the second sending is dropped too', async () => {
    current = agentRepo({ ...busy, dropInputs: 2 });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'never', '--brief', 'Nothing lands.', '--no-watch']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('prompt: never taken (the agent did not start)');
    const status = await current.place('fix/never');
    expect(status.stage).toMatchObject({ state: 'never-started', delivery: 'never-started' });
  });

  it('delivers a long multi-line prompt whole', async () => {
    current = agentRepo(busy);
    const brief = Array.from({ length: 40 }, (_, i) => `Line ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(2)}`).join('\n');
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'long', '--brief', brief, '--no-watch', '--json']);
    const place = launchedRecord(result.stdout);
    expect(place.stage.delivery).toBe('taken');
    expect(place.stage.prompt).toContain(brief.trim());
    // The transcript holds one prompt, and it is the whole prompt flume rendered, every line of it in
    // order: a long paste is recorded inside <pasted_content> tags (as 2.1.332 does), nothing else added or lost.
    const taken = userPrompts(place.stage.agent.transcriptPath);
    expect(taken).toHaveLength(1);
    const wrapped = /^\n*<pasted_content id="([0-9a-f]{4})">\n([\s\S]*)\n<\/pasted_content id="\1">\n*$/.exec(taken[0]);
    expect(wrapped, taken[0]).not.toBeNull();
    expect(wrapped![2]).toBe(place.stage.prompt);
  });

  it('leaves a slow start unknown, never failed, and sends once the agent accepts input', async () => {
    current = agentRepo({ ...busy, startDelayMs: 4000 }, { limits: { promptTimeout: '3s', startTimeout: '1s' } });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'slow', '--brief', 'Slowly.', '--no-watch', '--json']);
    const place = launchedRecord(result.stdout);
    expect(place.stage).toMatchObject({ delivery: 'unknown', sends: 0 });
    expect((await current.place('fix/slow')).stage.delivery).toBe('unknown');
    // The agent's input box appears on its screen (a `❯` line under a rule): it accepts input now.
    const host = tmuxHost({ socket: join(current.state, 'tmux', 'flume.sock') });
    const screen = await waitFor(async () => {
      const text = (await host.capture(place.stage.agent.pane)) ?? '';
      return hasInputBox(text) && text;
    }, 'the agent\'s input box');
    expect(userPrompts(place.stage.agent.transcriptPath), screen).toEqual([]);
    // Any command that steps the place (here a retry would start afresh; tidy and watch step too).
    const { openRepository } = await import('../../../core/config/repository.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');
    const { advance } = await import('../../../core/engine/stage/step.js');
    process.env.FLUME_STATE_DIR = current.state;
    const repository = await openRepository(current.repo, await defaultPreset());
    await advance(repository, 'fix--slow');
    const after = await current.place('fix/slow');
    expect(after.stage.delivery).toBe('taken');
  });
});
