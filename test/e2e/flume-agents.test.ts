/**
 * Issue "Agents", end to end: the flume CLI (`launch --no-watch`, `tell`, `stop`, `status --json`)
 * running the REAL Claude Code (2.1.332, and each version the run selects) in flume's own tmux server, talking to the scripted Messages
 * API on 127.0.0.1. Every "taken" here was read by flume from the transcript the real program wrote,
 * and every refusal is checked against what the real program shows and records.
 *
 * The fake-agent twins of these tests are test/integration/agents/{delivery,tell-stop}.test.ts.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e/flume-agents.test.ts'
 */
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION, PINNED_CLAUDE_VERSION } from '../helpers/claude-env.js';
import { askUserQuestion, bash, lastUserText, text, toolResults } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { alive, errorCode, prompts, realRepo, toolUses, transcript, waitFor, type RealRepo, type RealRepoOptions } from './real-repo.js';

const execFileAsync = promisify(execFile);

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** A repository whose fix prompt is the brief alone, so a one-line brief is a one-line prompt. */
async function repoWith(options: RealRepoOptions): Promise<RealRepo> {
  current = await realRepo({ ...options, config: { prompts: { 'fix.code': '{brief}' }, ...options.config } });
  return current;
}

/** `flume status --json`'s view of the agent's state. */
async function agentState(t: RealRepo, id: string): Promise<string> {
  return (await t.place(id)).stage.agent.state;
}

/** Presses keys in a pane of flume's tmux server, as an operator would (`tmux -S <socket> send-keys`). */
async function press(t: RealRepo, pane: string, ...keys: string[]): Promise<void> {
  await execFileAsync('tmux', ['-S', t.socket, 'send-keys', '-t', pane, ...keys]);
}

describe('a prompt flume sends to the real Claude Code', () => {
  it('is typed when short, and taken: the real transcript holds it as a typed prompt', async () => {
    // The reply's usage, scripted: status must show exactly these figures, read from the transcript.
    const usage = { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 7890, cache_creation_input_tokens: 321 };
    // Two blocks: the real program writes a line for each, both with the reply's message id.
    const t = await repoWith({ script: [{ blocks: [{ type: 'text', text: 'On it.' }, { type: 'text', text: 'Done.' }], usage }] });
    const brief = 'Mend the off-by-one in the parser, please.';
    const started = Date.now();
    const place = await t.launch('fix', 'short', brief);
    const launchMs = Date.now() - started;

    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken', sends: 1, prompt: brief });
    const path = place.stage.agent.transcriptPath;
    // flume computed the path before the file existed; the real program wrote exactly there.
    expect(t.claude.findTranscript(place.stage.agent.sessionId)).toBe(path);
    const user = transcript(path).filter((l) => l.type === 'user' && !l.isMeta);
    expect(user).toHaveLength(1);
    expect(user[0]).toMatchObject({ promptSource: 'typed', message: { content: brief } });
    // The program writes the prompt's line before it sends the request: on a loaded machine the request comes after.
    expect(lastUserText((await t.api.waitForRequest(1)).body)).toBe(brief);

    // The scripted reply ends the turn; status reads the real agent idle.
    const view = await t.until('fix/short', (p) => p?.stage.agent.state === 'idle' && p, 'the turn to end');
    expect(view.stage).toMatchObject({ delivery: 'taken', agent: { driver: 'claude-code', host: 'tmux', sessionId: place.stage.agent.sessionId, pane: place.stage.agent.pane } });
    // flume asked the real program its version at start; status names it, in JSON and in text.
    expect(place.stage.agent.version).toBe(CLAUDE_VERSION);
    expect(view.stage.agent.version).toBe(CLAUDE_VERSION);
    expect((await t.flume(['status', '--repo', t.repo])).stdout).toContain(`agent claude-code ${CLAUDE_VERSION} idle in tmux`);
    // What the stage cost, from the real program's record of the one reply: the scripted figures, once.
    const model = t.api.requests[0]!.body.model!;
    const tokens = { input: 1234, output: 56, cacheRead: 7890, cacheWrite: 321 };
    expect(view.stage.usage).toMatchObject({ ...tokens, total: 9501, replies: 1, models: { [model]: tokens } });
    expect(Object.keys(view.stage.usage.models)).toEqual([model]);
    // (It wrote the reply as two lines, one id, each with the whole usage: counted once.)
    const lines = transcript(path).filter((l) => l.type === 'assistant');
    expect(lines.map((l) => [l.message.id, l.message.usage.input_tokens])).toEqual([[lines[0].message.id, 1234], [lines[0].message.id, 1234]]);
    console.log(`flume-agents: short prompt launched and confirmed in ${launchMs} ms`);
  });

  it('is pasted when long and multi-line, and taken whole', async () => {
    // The built-in fix template around a 40-line brief: about 4 KB, sent as one bracketed paste.
    const t = await repoWith({ script: ['Reading the brief.'], config: { prompts: {} } });
    const brief = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: ${'the quick brown fox jumps over the lazy dog '.repeat(2).trim()}`).join('\n');
    const place = await t.launch('fix', 'long', brief);

    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1 });
    expect(place.stage.prompt.length).toBeGreaterThan(800);
    const [taken] = prompts(place.stage.agent.transcriptPath);
    // The real program took it as a paste: 2.1.332 wraps the text in <pasted_content> tags in the
    // transcript; 2.1.250 and 2.1.300 keep the plain text (test/fixtures/claude-<version>/README.md).
    if (CLAUDE_VERSION === PINNED_CLAUDE_VERSION) expect(taken).toMatch(/^\n\n<pasted_content id="[0-9a-f]{4}">\n/);
    else expect(taken).toBe(place.stage.prompt);
    expect(taken).toContain(`${brief}\n\nMake the change the brief asks for`);
    expect(taken).toContain(place.path);
    // What reached the model is the whole prompt, every line in order.
    const sent = lastUserText((await t.api.waitForRequest(1)).body);
    for (const line of brief.split('\n')) expect(sent).toContain(line);
    expect(sent.indexOf('Line 39:')).toBeLessThan(sent.indexOf('Line 40:'));
  });

  it('is sent once more when the real program drops the first sending, and the second is taken', async () => {
    // A UserPromptSubmit hook that blocks the first prompt of the config dir (exit 2), then lets all pass.
    // The real program writes no user line for a blocked prompt (only a system "informational" line)
    // and puts the prompt back in the input box, so flume's second sending submits it.
    const mark = `/tmp/flume-e2e-dropped-${process.pid}-${Date.now()}`;
    const hook = `if [ -e ${mark} ]; then exit 0; fi; touch ${mark}; echo "flume e2e: first sending dropped" >&2; exit 2`;
    const t = await repoWith({
      script: ['Got it the second time.'],
      settings: { hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: hook }] }] } },
      config: { limits: { promptTimeout: '5s', startTimeout: '40s' } },
    });
    try {
      const brief = 'Try again, the first one was dropped.';
      const place = await t.launch('fix', 'drop', brief);

      expect(existsSync(mark)).toBe(true);
      expect(place.stage).toMatchObject({ delivery: 'taken', sends: 2 });
      const lines = transcript(place.stage.agent.transcriptPath);
      const blocked = lines.find((l) => l.type === 'system' && l.subtype === 'informational');
      expect(String(blocked?.message?.content ?? blocked?.content)).toMatch(/UserPromptSubmit operation blocked by hook[\s\S]*Original prompt: Try again/);
      // Blocked lines come before the taken one; the prompt reached the model once.
      expect(prompts(place.stage.agent.transcriptPath)).toEqual([brief]);
      expect(lines.findIndex((l) => l === blocked)).toBeLessThan(lines.findIndex((l) => l.type === 'user'));
      await t.api.waitForRequest(1);
      expect(t.api.requests).toHaveLength(1);
      const view = await t.place('fix/drop');
      expect(view.stage).toMatchObject({ delivery: 'taken' });
      expect(t.events('fix--drop').find((e) => e.event === 'prompt-taken')).toMatchObject({ sends: 2 });
    } finally {
      rmSync(mark, { force: true });
    }
  });
});

describe('flume tell to the real Claude Code', () => {
  it('is refused with nothing typed while a real question dialog is open, and taken once it is answered', async () => {
    const question = askUserQuestion([{ question: 'Which fruit should it be?', header: 'Fruit', options: [{ label: 'Apple', description: 'Red or green' }, { label: 'Pear', description: 'Green' }] }]);
    const t = await repoWith({ script: [question, 'Apple it is.', 'Bananas noted.'] });
    const place = await t.launch('fix', 'ask', 'Pick a fruit with me.');
    const { pane, transcriptPath } = place.stage.agent;
    await waitFor(async () => (await agentState(t, 'fix/ask')) === 'asking', 'the real question dialog');
    // Claude Code records the question before it draws it: the screen is read once the dialog is drawn and settled.
    await waitFor(async () => /Enter to select/.test((await t.host.capture(pane)) ?? ''), 'the question dialog drawn');
    await new Promise((done) => setTimeout(done, 1500));
    const before = prompts(transcriptPath);

    const refused = await t.flume(['tell', 'fix/ask', 'Later: bananas', '--json']);
    expect(refused.code).toBe(1);
    expect(errorCode(refused.stdout), refused.stdout + refused.stderr).toBe('AGENT_ASKING');
    expect(JSON.parse(refused.stdout).error.details).toMatchObject({ dialog: 'question', needs: 'Which fruit should it be?' });
    // Nothing typed: the dialog is still open, its screen does not hold the text, the transcript did not grow.
    const screen = (await t.host.capture(pane))!;
    expect(screen).toMatch(/Enter to select/);
    expect(screen).not.toContain('bananas');
    expect(prompts(transcriptPath)).toEqual(before);
    expect(JSON.stringify(transcript(transcriptPath))).not.toContain('bananas');
    expect(t.api.requests).toHaveLength(1);

    // The operator answers in the pane; the real program sends the answer as the tool's result.
    await press(t, pane, '1');
    const second = await t.api.waitForRequest(2, 15_000);
    const ask = toolUses(transcriptPath).find((u) => u.name === 'AskUserQuestion')!;
    expect(toolResults(second.body)[0]).toMatchObject({ toolUseId: ask.id, isError: false });
    expect(toolResults(second.body)[0]!.text).toContain('"Which fruit should it be?"="Apple"');
    await waitFor(async () => (await agentState(t, 'fix/ask')) === 'idle', 'the answer\'s turn to end');

    const told = await t.flume(['tell', 'fix/ask', 'Later: bananas', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: true, sends: 1 });
    expect(prompts(transcriptPath)).toEqual(['Pick a fruit with me.', 'Later: bananas']);
    expect(lastUserText((await t.api.waitForRequest(3, 15_000)).body)).toBe('Later: bananas');
  });

  it('is refused with nothing typed while a real permission prompt is open', async () => {
    const t = await repoWith({ permissionMode: 'default', script: [bash('touch allowed.txt', 'Create allowed.txt'), 'Created it.', 'Noted.'] });
    const place = await t.launch('fix', 'perm', 'Create a file.');
    const { pane, transcriptPath } = place.stage.agent;
    await waitFor(async () => (await agentState(t, 'fix/perm')) === 'asking', 'the real permission prompt');
    // Claude Code records the prompt before it draws it: the screen is read once the prompt is drawn and settled.
    await waitFor(async () => /Do you want to proceed\?/.test((await t.host.capture(pane)) ?? ''), 'the permission prompt drawn');
    await new Promise((done) => setTimeout(done, 1500));
    const before = prompts(transcriptPath);

    const refused = await t.flume(['tell', 'fix/perm', 'go ahead', '--json']);
    expect(errorCode(refused.stdout), refused.stdout + refused.stderr).toBe('AGENT_ASKING');
    expect(JSON.parse(refused.stdout).error.details).toMatchObject({ dialog: 'permission', needs: 'permission to use Bash' });
    const screen = (await t.host.capture(pane))!;
    expect(screen).toMatch(/Do you want to proceed\?/);
    expect(screen).not.toContain('go ahead');
    expect(prompts(transcriptPath)).toEqual(before);
    expect(JSON.stringify(transcript(transcriptPath))).not.toContain('go ahead');
    expect(existsSync(join(place.path, 'allowed.txt'))).toBe(false);

    // Allowed in the pane, the command runs and the turn ends; then the tell is taken.
    await press(t, pane, '1');
    await waitFor(() => existsSync(join(place.path, 'allowed.txt')), 'the allowed command to run');
    await waitFor(async () => (await agentState(t, 'fix/perm')) === 'idle', 'the turn to end');
    const told = await t.flume(['tell', 'fix/perm', 'go ahead', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(prompts(transcriptPath)).toEqual(['Create a file.', 'go ahead']);
  });
});

describe('flume stop on the real Claude Code', () => {
  it('refuses a working agent, ends it with --force, and stops an idle one', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = await repoWith({ script: (request) => (lastUserText(request.body).startsWith('Think') ? text('Still thinking.', { until: held }) : 'What next?') });
    try {
      const [busy, idle] = await Promise.all([t.launch('fix', 'busy', 'Think very hard about it.'), t.launch('fix', 'idle', 'Say what you need.')]);
      await waitFor(async () => (await agentState(t, 'fix/busy')) === 'working', 'the held reply to keep it working');

      const refused = await t.flume(['stop', 'fix/busy', '--json']);
      expect(refused.code).toBe(1);
      expect(errorCode(refused.stdout), refused.stdout + refused.stderr).toBe('AGENT_WORKING');
      expect(alive(busy.stage.agent.pid)).toBe(true);
      expect(await agentState(t, 'fix/busy')).toBe('working');
      expect(await t.host.capture(busy.stage.agent.pane)).toMatch(/esc to interrupt/);

      const forced = await t.flume(['stop', 'fix/busy', '--force', '--json']);
      expect(forced.code, forced.stdout + forced.stderr).toBe(0);
      expect(JSON.parse(forced.stdout)).toMatchObject({ state: 'exited', already: false });
      expect(alive(busy.stage.agent.pid)).toBe(false);
      expect(await agentState(t, 'fix/busy')).toBe('exited');
      // The real program's own record of the session is gone with it.
      expect(t.claude.sessionStates().map((s) => s.sessionId)).not.toContain(busy.stage.agent.sessionId);

      await waitFor(async () => (await agentState(t, 'fix/idle')) === 'idle', 'the other agent to end its turn');
      const stopped = await t.flume(['stop', 'fix/idle', '--json']);
      expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
      expect(alive(idle.stage.agent.pid)).toBe(false);
      expect(await agentState(t, 'fix/idle')).toBe('exited');
      const again = await t.flume(['stop', 'fix/idle', '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ already: true });
    } finally {
      release();
    }
  });
});
