/**
 * Proves the harness the end-to-end tests stand on: the real Claude Code 2.1.332, started in a tmux
 * pane of the test's own, talks to the scripted Messages API, takes a prompt typed the way flume
 * types it, and writes both the prompt and the scripted reply to its transcript.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e'
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION, encodeCwd, makeClaudeEnv, type ClaudeEnv, type ClaudeEnvOptions, type TranscriptLine } from '../helpers/claude-env.js';
import { isReady, sleep, startClaudePane, stopClaudePane, submitPrompt, waitUntil, type ClaudePane } from '../helpers/claude-pane.js';
import { askUserQuestion, lastUserText, startMessagesApi, text, toolResults, type MessagesApi, type Script } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('the scripted Messages API', () => {
  it('streams a reply as the real API does and records the request', async () => {
    const api = await startMessagesApi({ script: [askUserQuestion([{ question: 'Which?', header: 'Pick', options: [{ label: 'A', description: 'a' }, { label: 'B', description: 'b' }] }], { before: 'Let me ask.' })] });
    cleanups.push(() => api.close());
    const response = await fetch(`${api.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: 'Hi' }] }] }),
    });
    const events = (await response.text()).split('\n\n').filter(Boolean).map((chunk) => {
      const [event, data] = chunk.split('\n');
      return { event: event?.slice('event: '.length), data: JSON.parse(data?.slice('data: '.length) ?? '{}') as Record<string, any> };
    });

    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(events.map((e) => e.event)).toEqual([
      'message_start', 'ping',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    const json = events.filter((e) => e.data.delta?.type === 'input_json_delta').map((e) => e.data.delta.partial_json).join('');
    expect(JSON.parse(json).questions[0].options).toHaveLength(2);
    expect(events.at(-2)?.data.delta.stop_reason).toBe('tool_use');
    expect(lastUserText(api.requests[0]!.body)).toBe('Hi');
  });
});

describe('the real Claude Code against the scripted API', () => {
  it(`runs ${CLAUDE_VERSION}, takes a typed prompt and writes it and the reply to its transcript`, async () => {
    const started = Date.now();
    const { api, env, pane, repo } = await startAgent(['Scripted reply from the test.']);
    const ready = Date.now();
    const prompt = 'Please say hello. This prompt is typed with send-keys -l in bursts, then Enter on its own.';

    expect(env.findTranscript(pane.sessionId)).toBeUndefined();
    expect(await submitPrompt(pane, prompt)).toBe(1);
    const lines = await waitUntil(() => {
      const t = env.readTranscript(pane.sessionId);
      return t.some((l) => l.type === 'system' && l.subtype === 'turn_duration') && t;
    }, 15_000, 'the end of the turn in the transcript').catch(async (error: Error) => {
      const types = env.readTranscript(pane.sessionId).map((l) => l.type + (l.subtype ? `:${l.subtype}` : '')).join(' ');
      throw new Error(`${error.message}; transcript: ${types || '(none)'}; requests: ${api.requests.length}; screen:\n${await pane.tmux.capture()}`);
    });

    const user = lines.find((l) => l.type === 'user' && !l.isMeta);
    expect(user?.message?.content).toBe(prompt);
    expect(user?.promptSource).toBe('typed');
    expect(assistantTexts(lines)).toEqual(['Scripted reply from the test.']);
    expect(env.findTranscript(pane.sessionId)).toBe(join(env.configDir, 'projects', encodeCwd(repo), `${pane.sessionId}.jsonl`));
    expect(api.requests).toHaveLength(1);
    expect(lastUserText(api.requests[0]!.body)).toBe(prompt);
    expect(api.other).toEqual([]);
    const state = await waitUntil(() => env.sessionStates().find((s) => s.status === 'idle'), 5_000, 'an idle session state');
    expect(state).toMatchObject({ pid: pane.pid, sessionId: pane.sessionId, cwd: repo, version: CLAUDE_VERSION });
    console.log(`harness e2e: ready after ${ready - started} ms, turn written after ${Date.now() - ready} ms`);
  });

  it('streams a tool call that Claude Code acts on and answers with a tool_result', async () => {
    const question = askUserQuestion([{ question: 'Which database?', header: 'Database', options: [{ label: 'Postgres', description: 'Relational' }, { label: 'SQLite', description: 'One file' }] }]);
    const { api, env, pane } = await startAgent([question, 'Going with SQLite.']);

    await submitPrompt(pane, 'Ask me something.');
    await pane.tmux.waitForScreen(/Enter to select/);
    // The state file follows the screen a little later.
    const state = await waitUntil(() => env.sessionStates().find((s) => s.status === 'waiting'), 5_000, 'status waiting');
    expect(state.waitingFor).toBe('input needed');
    await sleep(300); // a key sent in the dialog's first ~100 ms can be lost (see the fixtures README)
    await pane.tmux.keys('2');
    const second = await api.waitForRequest(2, 10_000);

    const [result] = toolResults(second.body);
    const call = await waitUntil(() => env.readTranscript(pane.sessionId).find((l) => toolUses(l).some((u) => u.name === 'AskUserQuestion')), 5_000, 'the tool_use line');
    expect(result).toMatchObject({ toolUseId: toolUses(call)[0]!.id, isError: false });
    expect(result!.text).toContain('"Which database?"="SQLite"');
    await pane.tmux.waitForScreen(/Going with SQLite/);
  });

  it('stays busy while a reply is held, and idle once it is released', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { env, pane } = await startAgent([text('Finally.', { until: held })]);

    await submitPrompt(pane, 'Take your time.');
    await waitUntil(() => env.sessionStates()[0]?.status === 'busy', 5_000, 'status busy');
    expect(await pane.tmux.capture()).toMatch(/esc to interrupt/);
    release();
    await waitUntil(() => env.sessionStates()[0]?.status === 'idle', 10_000, 'status idle');
    // The state file can turn idle before the reply reaches the transcript: wait for it on its own.
    await waitUntil(() => assistantTexts(env.readTranscript(pane.sessionId)).length > 0, 5_000, 'the reply in the transcript');
    expect(assistantTexts(env.readTranscript(pane.sessionId))).toEqual(['Finally.']);
  });
});

/** Starts the scripted API, a seeded config, a trusted git repository and claude in a pane; all undone after the test. */
async function startAgent(script: Script, options: Partial<ClaudeEnvOptions> = {}): Promise<{ api: MessagesApi; env: ClaudeEnv; pane: ClaudePane; repo: string }> {
  const api = await startMessagesApi({ script });
  // Run last (cleanups run in reverse), once the agent is gone: it may ask nothing the test did not script.
  cleanups.push(() => expect(api.unexpected(), 'what the scripted API saw unscripted').toEqual([]));
  cleanups.push(() => api.close());
  const env = makeClaudeEnv({ baseUrl: api.url, ...options });
  cleanups.push(() => env.cleanup());
  const repo = join(env.root, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q'], { cwd: repo });
  env.trust(repo);
  const pane = await startClaudePane(env, repo);
  cleanups.push(() => stopClaudePane(pane));
  await pane.tmux.waitForScreen(isReady, 15_000);
  // 2.1.250/2.1.300 redraw the footer once more when their tmux hint appears, and on a loaded machine
  // put back as a draft a prompt submitted during it: ready means ready twice, a second apart.
  await sleep(1_000);
  await pane.tmux.waitForScreen(isReady, 15_000);
  return { api, env, pane, repo };
}

function assistantTexts(lines: TranscriptLine[]): string[] {
  return lines
    .filter((l) => l.type === 'assistant' && Array.isArray(l.message?.content))
    .flatMap((l) => (l.message!.content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text ?? ''));
}

function toolUses(line: TranscriptLine): Array<{ id: string; name: string }> {
  const content = line.type === 'assistant' ? line.message?.content : undefined;
  return Array.isArray(content) ? (content.filter((b) => b.type === 'tool_use') as unknown as Array<{ id: string; name: string }>) : [];
}
