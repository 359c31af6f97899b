/**
 * What the Codex driver reads, pinned against the real Codex CLI 0.171.0 (as
 * test/integration/fake-claude-vs-real.test.ts pins the fake Claude against the real one): the
 * screens agents/codex/screen.ts classifies, and the rollout lines agents/codex/rollout.ts reads,
 * produced by the real program in a pane against the scripted Responses API, with the config the
 * driver writes (agents/codex/home.ts). It also pins what the driver's config promises: no trust
 * question in a trusted folder, and no process of the agent's left once the TUI exits (no daemon).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codexDriver } from '../../agents/codex/driver.js';
import { classifyScreen, draftText } from '../../agents/codex/screen.js';
import { findRollout, promptState, readRollout, readUsage } from '../../agents/codex/rollout.js';
import { codexEnv, startCodexPane, CODEX_MODEL, CODEX_VERSION, type CodexEnv, type CodexPane } from '../helpers/codex-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { message, type Reply } from '../helpers/responses-api.js';
import { makeRepo, remove } from '../helpers/repo.js';
import { HANG_MS } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function start(script: Array<string | Reply>, options: { trusted?: boolean; args?: string[] } = {}): Promise<{ env: CodexEnv; pane: CodexPane; repo: string }> {
  const env = await codexEnv({ script });
  const repo = makeRepo();
  cleanups.push(() => env.cleanup(), () => remove(repo));
  const pane = await startCodexPane(env, repo, options);
  cleanups.push(() => pane.stop());
  return { env, pane, repo };
}

/** Processes whose environment names this home: the agent's, however it was started. */
function processesOf(home: string): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      return readFileSync(`/proc/${n}/environ`, 'utf8').split('\0').includes(`CODEX_HOME=${home}`) ? [Number(n)] : [];
    } catch {
      return [];
    }
  });
}

describe(`the real Codex CLI ${CODEX_VERSION}, as the driver reads it`, () => {
  it('asks whether to trust a folder the config does not trust', async () => {
    const { pane } = await start([], { trusted: false });
    const screen = await pane.waitForScreen(/Trust this folder\?/);
    expect(screen).toContain('Trust and continue');
    expect(classifyScreen(screen)).toBe('trust');
  });

  it('shows and records what the driver reads: input line, draft, working, a turn, an approval, its usage; and leaves nothing behind', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const escalated: Reply = { items: [{ type: 'call', name: 'exec_command', arguments: { cmd: 'touch ../outside.txt', sandbox_permissions: 'require_escalated', justification: 'Write outside' } }] };
    // Taken before the pane starts, as the driver records its agent's start: the session's first line is
    // stamped when Codex begins, which on a loaded machine is well before its input line shows.
    const startedAt = new Date().toISOString();
    const { pane, repo } = await start([message('First answer.', { until: held, usage: { input_tokens: 500, cached_tokens: 100, output_tokens: 30 } }), escalated], { args: ['-a', 'on-request', '-s', 'workspace-write'] });

    // The input line with its placeholder: ready, no draft. No trust question (the config trusts the folder).
    const ready = await pane.waitForScreen(/^› /m);
    expect(ready).not.toMatch(/Trust this folder/);
    expect(classifyScreen(ready)).toBe('input-ready');
    expect(draftText(ready)).toBe('');
    expect(pane.rollout()).toBeUndefined();

    // A typed draft shows on the input line.
    pane.type('Please look at the parser');
    const typed = await pane.waitForScreen(/› Please look at the parser/);
    expect(draftText(typed)).toBe('Please look at the parser');
    await new Promise((done) => setTimeout(done, 300));
    pane.keys('Enter');

    // Working while the reply is held: the screen says so, and the rollout has begun a turn.
    const working = await pane.waitForScreen(/esc to interrupt/);
    expect(classifyScreen(working)).toBe('working');
    const path = await until(() => pane.rollout());
    // The file is there before its first line is whole (which the lookup reads): on a loaded machine, a while before.
    expect(await until(() => findRollout(pane.home, repo, startedAt))).toBe(path);
    // The folder the rollout is in is one the driver has the supervisor watch.
    const driver = codexDriver({ hosts: { get: () => undefined } } as never);
    expect(driver.watchPaths({ driver: 'codex', sessionId: 's', host: 'tmux', cwd: repo, startedAt, data: { codexHome: pane.home } })).toContain(dirname(path));
    expect(await findRollout(pane.home, repo, new Date(Date.now() + 60_000).toISOString())).toBeUndefined();
    const meta = pane.lines()[0]!;
    expect(meta).toMatchObject({ type: 'session_meta', payload: { cwd: repo, cli_version: CODEX_VERSION, originator: 'codex-tui' } });
    const during = (await until(async () => {
      // The user message and task_started are written apart, and a user-role message of Codex's own
      // (its environment context) can come first: read until the typed prompt and the turn are there
      // (seen once under a loaded machine: read between the two, the prompt was not yet recorded).
      const state = await readRollout(path);
      return state?.working && promptState(state, 'Please look at the parser') === 'taken' ? state : undefined;
    }))!;
    expect(during).toMatchObject({ working: true, turnEnded: false });
    expect(promptState(during, 'Please look at the parser')).toBe('taken');
    expect(promptState(during, 'Something never sent')).toBe('not-yet');
    const typedLines = () => pane.lines().filter((l) => l.type === 'event_msg' && l.payload.type === 'item_completed' && l.payload.item.type === 'UserMessage').map((l) => l.payload.item.content[0].text);
    await until(() => typedLines().length > 0);
    expect(typedLines()).toEqual(['Please look at the parser']);

    // The turn ends: task_complete with the agent's last message.
    release();
    await until(() => pane.lines().some((l) => l.type === 'event_msg' && l.payload.type === 'task_complete'));
    expect(pane.lines().find((l) => l.payload?.type === 'task_complete')!.payload.last_agent_message).toBe('First answer.');
    expect(await readRollout(path)).toMatchObject({ working: false, turnEnded: true, lastText: 'First answer.' });
    expect(classifyScreen(await pane.waitForScreen(/First answer\./))).toBe('input-ready');
    // Usage: one token_usage_record for the response, under the turn_context's model.
    const usage = await readUsage(path);
    expect(usage!.usage).toEqual({ models: { [CODEX_MODEL]: { input: 400, cacheRead: 100, cacheWrite: 0, output: 30 } }, replies: 1 });

    // An approval request: on screen, and its call pending in the rollout.
    pane.type('Now touch a file outside');
    await pane.waitForScreen(/› Now touch a file outside/);
    await new Promise((done) => setTimeout(done, 300));
    pane.keys('Enter');
    const approval = await pane.waitForScreen(/Would you like to run the following command\?/);
    expect(approval).toMatch(/Press enter to confirm or esc to cancel/);
    expect(classifyScreen(approval)).toBe('permission');
    const asking = await until(async () => (await readRollout(path))?.pendingCall);
    expect(JSON.parse(asking.arguments).cmd).toBe('touch ../outside.txt');

    // Esc declines; Ctrl-C twice on an idle TUI quits, and no process of the agent is left (no daemon).
    pane.keys('Escape');
    await until(async () => !(await readRollout(path))?.working);
    expect(processesOf(pane.home).length).toBeGreaterThanOrEqual(2);
    pane.keys('C-c');
    await new Promise((done) => setTimeout(done, 150));
    pane.keys('C-c');
    await until(() => processesOf(pane.home).length === 0, 5000);
    expect(readdirSync(pane.home).some((name) => name.startsWith('app-server') || name === 'packages')).toBe(false);
  });
});

async function until<T>(get: () => T | Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  for (;;) {
    const value = await get();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
