/**
 * What the OpenCode driver reads, pinned against the real OpenCode 1.18.33: the screens
 * agents/opencode/screen.ts classifies, and the record agents/opencode/record.ts reads from the
 * TUI's own server, produced by the real program in a pane against the scripted Chat Completions
 * API, with the folder and config the driver writes (agents/opencode/home.ts). It also pins what the
 * driver relies on: the server answers only with the agent's password, a permission asked by
 * default and none with `permission: "allow"`, a refused option or an unknown session id ends the
 * program before it takes input, and Ctrl-C twice ends it with nothing of it left.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { judge } from '../../agents/opencode/driver.js';
import { classifyScreen, draftText } from '../../agents/opencode/screen.js';
import { promptState, usageOf } from '../../agents/opencode/record.js';
import { opencodeEnv, startOpencodePane, OPENCODE_VERSION, type OpencodeEnv, type OpencodePane } from '../helpers/opencode-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { bash, message, type ReplyLike } from '../helpers/chat-api.js';
import { makeRepo, remove } from '../helpers/repo.js';
import { HANG_MS } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function start(script: ReplyLike[], options: { bypass?: boolean; args?: string[] } = {}): Promise<{ env: OpencodeEnv; pane: OpencodePane; repo: string }> {
  const env = await opencodeEnv({ script });
  const repo = makeRepo();
  cleanups.push(() => env.cleanup(), () => remove(repo));
  const pane = await startOpencodePane(env, repo, options);
  cleanups.push(() => pane.stop());
  return { env, pane, repo };
}

/** Processes whose environment names this agent folder: the agent's, however they were started. */
function processesOf(home: string): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      return readFileSync(`/proc/${n}/environ`, 'utf8').split('\0').includes(`OPENCODE_CONFIG=${join(home, 'opencode.json')}`) ? [Number(n)] : [];
    } catch {
      return [];
    }
  });
}

const READY = /Ask anything…/;
const PANE = { own: true, alive: true };

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

describe(`the real OpenCode ${OPENCODE_VERSION}, as the driver reads it`, () => {
  it('shows and records what the driver reads: input box, drafts, working, a turn, its usage; Ctrl-C twice ends it, nothing left', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const { pane, repo } = await start([message('Noted.', { until: held }), 'Second.']);
    const ready = await pane.waitForScreen(READY, 60_000);
    expect(classifyScreen(ready)).toBe('input-ready');
    expect(draftText(ready)).toBe('');

    // The server answers with the agent's password only, and says its version.
    expect(await pane.get<{ version: string }>('/global/health')).toEqual({ healthy: true, version: OPENCODE_VERSION });
    expect((await fetch(`http://127.0.0.1:${pane.server.port}/session`)).status).toBe(401);
    expect(await pane.record(), 'no session before the first prompt').toBeUndefined();

    // A draft of several lines, pasted, reads back whole; Ctrl-C clears it.
    pane.paste('line one\nline two');
    await pane.waitForScreen(/line two/);
    expect(draftText(pane.capture())).toBe('line one\nline two');
    pane.keys('C-c');
    expect(draftText(await pane.waitForScreen(READY))).toBe('');

    const prompt = 'Say something short, please.';
    pane.type(prompt);
    await pane.waitForScreen(/Say something short/);
    expect(draftText(pane.capture())).toBe(prompt);
    pane.keys('Enter');

    // Held by the API: the record holds the prompt, the status says busy, the footer says so.
    const working = await until(() => pane.record(), (r) => Boolean(r?.working));
    expect(working?.working).toBe(true);
    expect(promptState(working, prompt)).toBe('taken');
    expect(promptState(working, 'Something nobody said')).toBe('not-yet');
    const busy = await pane.waitForScreen(/esc interrupt/);
    expect(classifyScreen(busy)).toBe('working');
    expect(judge({ driver: 'opencode', sessionId: 's', host: 'tmux', cwd: repo, startedAt: '' }, working, { ...PANE, screen: busy }).state).toBe('working');

    release();
    const ended = await until(() => pane.record(), (r) => Boolean(r?.turnEnded));
    expect(ended).toMatchObject({ working: false, turnEnded: true, aborted: false, lastText: 'Noted.' });
    const usage = usageOf(ended!);
    expect(usage.usage).toEqual({ models: { 'test-model': { input: 70, output: 20, cacheRead: 30, cacheWrite: 0 } }, replies: 1 });
    expect(usageOf(ended!, usage.cursor).cursor, 'an unchanged record hands the cursor back').toBe(usage.cursor);
    const idle = await until(async () => pane.capture(), (s) => classifyScreen(s) === 'input-ready' && s.includes('Noted.'));
    expect(judge({ driver: 'opencode', sessionId: 's', host: 'tmux', cwd: repo, startedAt: '' }, ended, { ...PANE, screen: idle })).toMatchObject({ state: 'idle', turnEnded: true, needs: 'Noted.' });

    // In the session's view (the prompt above in the history, a sidebar to the right) the draft reads alone.
    pane.type('a second draft');
    const second = await pane.waitForScreen(/a second draft/);
    expect(draftText(second)).toBe('a second draft');

    // Ctrl-C clears the draft, a second one quits; nothing of the agent is left.
    const home = pane.home;
    expect(processesOf(home).length).toBeGreaterThan(0);
    pane.keys('C-c');
    await new Promise((resolve) => setTimeout(resolve, 300));
    pane.keys('C-c');
    await until(async () => pane.dead(), Boolean, 10_000);
    expect(pane.dead()).toBe(true);
    expect(pane.capture()).toMatch(/Continue\s+opencode -s ses_/);
    expect(await until(async () => processesOf(home), (left) => left.length === 0, 5_000)).toEqual([]);
  });

  it('asks before a command writes outside the place by default, as a dialog the record names; Esc declines it', async () => {
    const { pane, repo } = await start([bash('touch ../outside.txt'), 'Declined.']);
    await pane.waitForScreen(READY, 60_000);
    pane.type('Write outside');
    await pane.waitForScreen(/Write outside/);
    pane.keys('Enter');
    const dialog = await pane.waitForScreen(/Permission required/);
    expect(dialog).toMatch(/Allow once\s+Allow always\s+Reject/);
    expect(classifyScreen(dialog)).toBe('permission');
    const record = await until(() => pane.record(), (r) => Boolean(r?.permission));
    expect(record?.permission).toBe('`touch ../outside.txt` (external_directory)');
    expect(judge({ driver: 'opencode', sessionId: 's', host: 'tmux', cwd: repo, startedAt: '' }, record, { ...PANE, screen: dialog })).toMatchObject({ state: 'asking', dialog: 'permission' });
    pane.keys('Escape');
    const after = await until(() => pane.record(), (r) => Boolean(r?.turnEnded));
    expect(after).toMatchObject({ turnEnded: true });
    expect(after?.permission).toBeUndefined();
    expect(existsSync(join(repo, '..', 'outside.txt'))).toBe(false);
  });

  it('runs that command without asking under `permission: "allow"` (a stage that bypasses permissions)', async () => {
    const { pane, repo } = await start([bash('touch ../allowed-outside.txt'), 'Written.'], { bypass: true });
    await pane.waitForScreen(READY, 60_000);
    pane.type('Write outside');
    await pane.waitForScreen(/Write outside/);
    pane.keys('Enter');
    const ended = await until(() => pane.record(), (r) => Boolean(r?.turnEnded && r.lastText === 'Written.'));
    expect(ended?.lastText).toBe('Written.');
    expect(existsSync(join(repo, '..', 'allowed-outside.txt'))).toBe(true);
    remove(join(repo, '..', 'allowed-outside.txt'));
    expect(pane.capture()).not.toMatch(/Permission required/);
  });

  it('ends before it takes input when given an option it does not know, or a session id it does not have', async () => {
    const refused = await start([], { args: ['--no-such-option'] });
    await until(async () => refused.pane.dead(), Boolean, 20_000);
    expect(refused.pane.dead()).toBe(true);
    expect(refused.pane.capture()).toContain('session id to continue');
    const unknown = await start([], { args: ['-s', 'ses_flumeUnknown0000000000000'] });
    await until(async () => unknown.pane.dead(), Boolean, 30_000);
    expect(unknown.pane.dead()).toBe(true);
    // It prints `Error: Session not found: <id>` and exits 1; on a loaded machine the TUI's own
    // screen, drawn and cleared as it exits, can leave only tmux's `Pane is dead (status 1, …)`.
    expect(unknown.pane.capture()).toMatch(/Session not found: ses_flumeUnknown0000000000000|Pane is dead \(status 1\b/);
  });
});
