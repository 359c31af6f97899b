/**
 * Claude Code's state file (`<config>/sessions/<pid>.json`) lags its screen: 2.1.332 wrote `waiting`
 * about 200 ms after its permission dialog was up (test/fixtures/claude-2.1.332/README.md). The
 * fake lags as much by default; here it lags a minute, so a flume that saw a permission prompt only
 * through the state file would call the agent working while the dialog holds it. The screen decides.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { settledSight, sight, type AgentAt } from '../../helpers/untouched.js';
import { tmuxHost } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';

let current: AgentRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The statuses in the fake's state files. */
const stateFiles = (configDir: string) =>
  readdirSync(join(configDir, 'sessions'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(configDir, 'sessions', name), 'utf8')).status as string);

describe('a permission prompt', () => {
  it('is read from the screen while Claude Code\'s state file has not yet said waiting', async () => {
    current = agentRepo({ stateLagMs: 60_000, onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }, { say: 'Deleted.' }] }] });
    const launched = await current.flume(['launch', '--kind', 'fix', '--name', 'perm', '--brief', 'Delete the build.', '--no-watch', '--json']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const place = launchedRecord(launched.stdout);
    const host = tmuxHost({ socket: join(current.state, 'tmux', 'flume.sock') });
    await waitFor(async () => (await host.capture(place.stage.agent.pane))?.includes('Do you want to proceed?'), 'the dialog on screen');
    const view = await current.place('fix/perm');
    // The state file still holds what it said at start.
    expect(stateFiles(current.configDir)).toEqual(['idle']);
    expect(view.stage).toMatchObject({ state: 'waiting', needs: 'permission to use Bash', agent: { state: 'asking' } });
    // And flume types nothing into the dialog.
    const told = await current.flume(['tell', 'fix/perm', 'Go on.', '--json']);
    expect(JSON.parse(told.stdout).error?.code).toBe('AGENT_ASKING');
  });
});

describe('a question', () => {
  it("is read from the screen while its AskUserQuestion line has not reached the transcript", async () => {
    current = agentRepo({ stateLagMs: 60_000, onPrompt: [{ actions: [{ ask: { question: 'Which fruit?', header: 'Fruit', options: ['apple', 'pear'] }, transcriptLagMs: 60_000 }, { say: 'Picked {answer}.' }] }] });
    const launched = await current.flume(['launch', '--kind', 'fix', '--name', 'ask', '--brief', 'Pick a fruit.', '--no-watch', '--json']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const place = launchedRecord(launched.stdout);
    const agent: AgentAt = { socket: join(current.state, 'tmux', 'flume.sock'), pane: place.stage.agent.pane, transcriptPath: place.stage.agent.transcriptPath };
    const host = tmuxHost({ socket: agent.socket });
    await waitFor(async () => (await host.capture(agent.pane))?.includes('Enter to select'), 'the dialog on screen');
    const seen = await settledSight(agent);
    const view = await current.place('fix/ask');
    // Neither the state file nor the transcript says it asks.
    expect(stateFiles(current.configDir)).toEqual(['idle']);
    expect(readRecords(agent.transcriptPath).some((r) => JSON.stringify(r).includes('AskUserQuestion'))).toBe(false);
    expect(view.stage).toMatchObject({ state: 'waiting', agent: { state: 'asking' } });
    // And flume types nothing into the dialog.
    const told = await current.flume(['tell', 'fix/ask', 'Later: bananas', '--json']);
    expect(JSON.parse(told.stdout).error?.code).toBe('AGENT_ASKING');
    expect(await sight(agent)).toEqual(seen);
  });
});
