import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { tmuxHost } from '../../../agents/panes/tmux.js';
import { settledSight, sight, type AgentAt } from '../../helpers/untouched.js';
import { launchedRecord } from '../../helpers/result-schema.js';

let current: AgentRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function launch(repo: AgentRepo, name: string) {
  const result = await repo.flume(['launch', '--kind', 'fix', '--name', name, '--brief', `Work ${name}.`, '--no-watch', '--json']);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return launchedRecord(result.stdout);
}

const prompts = (path: string) => readRecords(path).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content as string);
const agentState = async (repo: AgentRepo, id: string) => (await repo.place(id)).stage.agent.state;
const code = (stdout: string) => JSON.parse(stdout).error?.code;
/** The place's agent as the test sees it: its pane on flume's tmux server and its transcript. */
const at = (repo: AgentRepo, place: any): AgentAt => ({ socket: join(repo.state, 'tmux', 'flume.sock'), pane: place.stage.agent.pane, transcriptPath: place.stage.agent.transcriptPath });

describe('flume tell', () => {
  it('reaches an idle agent as a prompt, confirmed in its transcript', async () => {
    current = agentRepo({ onPrompt: [{ match: '^Answer', actions: [{ say: 'Thanks, going on.' }, { sleepMs: 30_000 }] }, { actions: [{ say: 'Which colour should it be?' }] }] });
    const place = await launch(current, 'tell');
    await waitFor(async () => (await agentState(current!, 'fix/tell')) === 'idle', 'the agent to end its turn');
    const result = await current.flume(['tell', 'fix/tell', 'Answer: blue', '--json']);
    expect(result.code, result.stdout).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ taken: true, sends: 1 });
    expect(prompts(place.stage.agent.transcriptPath)).toContain('Answer: blue');
    const file = join(current.state, 'answer.txt');
    (await import('node:fs')).writeFileSync(file, 'Answer: from a file, with "quotes" and $(no shell)');
    const fromFile = await current.flume(['tell', 'fix/tell', '--file', file]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    // The agent is busy with the first answer, so this one is queued: a queued-prompt record counts.
    const queued = readRecords(place.stage.agent.transcriptPath).find((r) => r.type === 'queue-operation' && r.operation === 'enqueue');
    expect(queued?.content).toBe('Answer: from a file, with "quotes" and $(no shell)');
  });

  it('refuses text holding control characters with nothing typed, the issue\'s nested paste marker included', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Which colour should it be?' }] }] });
    const place = await launch(current, 'esc');
    await waitFor(async () => (await agentState(current!, 'fix/esc')) === 'idle', 'the agent to end its turn');
    const before = prompts(place.stage.agent.transcriptPath);
    const seen = await settledSight(at(current, place));
    // A single-pass strip of `\e[200~` would leave `\e[201~` here, ending the paste and typing the rest.
    for (const text of ['one\x1b[20\x1b[200~1~two\nthree', 'ring \x07', 'csi \u009b2J']) {
      const refused = await current.flume(['tell', 'fix/esc', text, '--json']);
      expect(code(refused.stdout), refused.stdout).toBe('BAD_TEXT');
    }
    expect(prompts(place.stage.agent.transcriptPath)).toEqual(before);
    // Nothing typed: the pane and the transcript are as they were, byte for byte.
    expect(await sight(at(current, place))).toEqual(seen);
    expect(await agentState(current, 'fix/esc')).toBe('idle');
    const told = await current.flume(['tell', 'fix/esc', 'Answer:\tblue\r\nand green', '--json']);
    expect(told.code, told.stdout).toBe(0);
    // The TAB is sent as the four spaces Claude Code 2.1.332 records for it (test/e2e/tabs.test.ts).
    expect(prompts(place.stage.agent.transcriptPath)).toEqual([...before, 'Answer:    blue\nand green']);
  });

  it("refuses a text Claude Code would run as its command, a character that shows as nothing before it, with nothing typed; a stage whose prompt would be one starts no agent", async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Which colour should it be?' }] }] });
    const place = await launch(current, 'slash');
    await waitFor(async () => (await agentState(current!, 'fix/slash')) === 'idle', 'the agent to end its turn');
    const before = prompts(place.stage.agent.transcriptPath);
    const seen = await settledSight(at(current, place));
    for (const text of ['/init', '\u200b/init now', '\u2060 /about']) {
      const refused = await current.flume(['tell', 'fix/slash', text, '--json']);
      expect(code(refused.stdout), `${JSON.stringify(text)}: ${refused.stdout}`).toBe('BAD_TEXT');
    }
    expect(await sight(at(current, place))).toEqual(seen);
    expect(prompts(place.stage.agent.transcriptPath)).toEqual(before);
    // The config now makes the stage's prompt a command: retry ends the agent and starts none in its place.
    const { readFileSync, writeFileSync } = await import('node:fs');
    const rc = join(current.repo, '.flumerc.json');
    writeFileSync(rc, JSON.stringify({ ...JSON.parse(readFileSync(rc, 'utf8')), prompts: { 'fix.code': '\u200b/init {brief}' } }, null, 2));
    expect((await current.flume(['trust', '--repo', current.repo])).code).toBe(0);
    const retried = await current.flume(['retry', 'fix/slash', '--json']);
    expect(code(retried.stdout), retried.stdout + retried.stderr).toBe('BAD_TEXT');
    const after = await current.place('fix/slash');
    expect(after.stage).toMatchObject({ delivery: 'never-started' });
    expect(after.stage.waiting?.needs ?? after.stage.needs, JSON.stringify(after.stage)).toMatch(/its prompt cannot be sent/);
    // No tmux server left at all (its last pane closed) is no live pane either.
    const panes = (await import('node:child_process')).spawnSync('tmux', ['-S', join(current.state, 'tmux', 'flume.sock'), 'list-panes', '-a', '-F', '#{pane_dead}'], { encoding: 'utf8' });
    const live = (panes.status === 0 ? panes.stdout : '').split('\n').filter((dead) => dead === '0');
    expect(live, 'a live pane after the refused start').toEqual([]);
  });

  it('is refused with nothing typed while a question is open, and reaches the agent once it is answered', async () => {
    current = agentRepo({ onPrompt: [{ match: '^Later', actions: [{ say: 'ok' }] }, { actions: [{ ask: { question: 'Which fruit?', header: 'Fruit', options: ['apple', 'pear'] } }, { say: 'Picked {answer}.' }] }] });
    const place = await launch(current, 'ask');
    await waitFor(async () => (await agentState(current!, 'fix/ask')) === 'asking', 'the question dialog');
    const before = readRecords(place.stage.agent.transcriptPath).length;
    const seen = await settledSight(at(current, place));
    const refused = await current.flume(['tell', 'fix/ask', 'Later: bananas', '--json']);
    expect(refused.code).toBe(1);
    expect(code(refused.stdout)).toBe('AGENT_ASKING');
    expect(readRecords(place.stage.agent.transcriptPath).length).toBe(before);
    expect(await sight(at(current, place))).toEqual(seen);
    const host = tmuxHost({ socket: join(current.state, 'tmux', 'flume.sock') });
    expect(await host.capture(place.stage.agent.pane)).not.toContain('bananas');
    await host.keys(place.stage.agent.pane, ['1']);
    await waitFor(async () => (await agentState(current!, 'fix/ask')) === 'idle', 'the answer');
    const told = await current.flume(['tell', 'fix/ask', 'Later: bananas']);
    expect(told.code, told.stderr).toBe(0);
    expect(prompts(place.stage.agent.transcriptPath)).toContain('Later: bananas');
  });

  it('is refused with nothing typed while a permission prompt is open', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }] }] });
    const place = await launch(current, 'perm');
    await waitFor(async () => (await agentState(current!, 'fix/perm')) === 'asking', 'the permission prompt');
    const seen = await settledSight(at(current, place));
    const refused = await current.flume(['tell', 'fix/perm', 'go ahead', '--json']);
    // Nothing typed: the dialog stands as it was (no key answered it), and the transcript did not grow.
    expect(await sight(at(current, place))).toEqual(seen);
    expect(code(refused.stdout)).toBe('AGENT_ASKING');
    expect(JSON.parse(refused.stdout).error.details.dialog).toBe('permission');
    expect(JSON.parse(refused.stdout).error.message).toContain('has a permission prompt open');
  });

  it('is refused with nothing typed while a permission prompt is on screen and Claude Code\'s state file still says busy', async () => {
    // The real program writes `waiting` to its state file a moment after the dialog is drawn
    // (test/fixtures/claude-2.1.332/README.md, "It lags"): the screen alone must be enough.
    current = agentRepo({ onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }] }] });
    const place = await launch(current, 'lag');
    const host = tmuxHost({ socket: join(current.state, 'tmux', 'flume.sock') });
    await waitFor(async () => /Do you want to proceed\?/.test((await host.capture(place.stage.agent.pane)) ?? ''), 'the permission dialog on screen');
    const sessions = join(current.configDir, 'sessions');
    const { readdirSync, readFileSync, writeFileSync } = await import('node:fs');
    const file = readdirSync(sessions).map((name) => join(sessions, name)).find((path) => JSON.parse(readFileSync(path, 'utf8')).sessionId === place.stage.agent.sessionId)!;
    // The fake, as the real program, writes `waiting` a moment after the dialog is drawn: let that
    // write land first, then put the file back to `busy`, as the lag would leave it.
    await waitFor(() => JSON.parse(readFileSync(file, 'utf8')).status === 'waiting', 'the lagging state file to say waiting');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), status: 'busy', updatedAt: Date.now() }));
    const seen = await settledSight(at(current, place));
    expect((await current.place('fix/lag')).stage.agent.state).toBe('asking');
    const refused = await current.flume(['tell', 'fix/lag', 'go ahead', '--json']);
    expect(code(refused.stdout), refused.stdout + refused.stderr).toBe('AGENT_ASKING');
    expect(JSON.parse(refused.stdout).error.details.dialog).toBe('permission');
    expect(await sight(at(current, place))).toEqual(seen);
    expect(JSON.parse(readFileSync(file, 'utf8')).status).toBe('busy');
  });

  it('never submits a draft someone left in the input box', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Done for now.' }, { draft: 'half typed thought' }] }] });
    const place = await launch(current, 'draft');
    await waitFor(async () => (await agentState(current!, 'fix/draft')) === 'idle', 'the turn end');
    const seen = await settledSight(at(current, place));
    const refused = await current.flume(['tell', 'fix/draft', 'more', '--json']);
    expect(code(refused.stdout)).toBe('AGENT_BUSY');
    // The draft still stands alone in the box: nothing added to it, nothing submitted.
    expect(await sight(at(current, place))).toEqual(seen);
    expect(prompts(place.stage.agent.transcriptPath).join('\n')).not.toContain('half typed');
  });

  it('is refused when the agent is not up', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'bye' }, { crash: 3 }] }] });
    const place = await launch(current, 'dead');
    await waitFor(async () => (await agentState(current!, 'fix/dead')) === 'exited', 'the crash');
    const seen = await settledSight(at(current, place));
    const refused = await current.flume(['tell', 'fix/dead', 'hello?', '--json']);
    expect(code(refused.stdout)).toBe('AGENT_NOT_UP');
    expect(await sight(at(current, place))).toEqual(seen);
  });
});

describe('flume stop', () => {
  it('refuses a working agent without --force, ends it with --force, and reads exited only when it is gone', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Thinking hard.' }, { hang: true }] }] });
    const place = await launch(current, 'hang');
    await waitFor(async () => (await agentState(current!, 'fix/hang')) === 'working', 'work');
    const refused = await current.flume(['stop', 'fix/hang', '--json']);
    expect(code(refused.stdout)).toBe('AGENT_WORKING');
    expect(await agentState(current, 'fix/hang')).toBe('working');
    const forced = await current.flume(['stop', 'fix/hang', '--force', '--json']);
    expect(forced.code, forced.stdout).toBe(0);
    expect(await agentState(current, 'fix/hang')).toBe('exited');
    expect(() => process.kill(place.stage.agent.pid, 0)).toThrow();
  });

  it('stops an idle agent without --force', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'What next?' }] }] });
    await launch(current, 'idle');
    await waitFor(async () => (await agentState(current!, 'fix/idle')) === 'idle', 'the turn end');
    const stopped = await current.flume(['stop', 'fix/idle']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(await agentState(current, 'fix/idle')).toBe('exited');
    const again = await current.flume(['stop', 'fix/idle', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ already: true });
  });
});
