/**
 * The Codex driver's readings that need no program: the config it writes, the rollout found among
 * others by folder and start, its usage read incrementally, and the state judged from a rollout and
 * a screen. What the real program writes and shows is pinned in test/e2e-codex/codex-vs-real.test.ts.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configToml } from '../../../agents/codex/home.js';
import { commitFolders } from '../../../agents/codex/sandbox.js';
import { git, makeRepo, remove } from '../../helpers/repo.js';
import { findRollout, readRollout, readUsage } from '../../../agents/codex/rollout.js';
import { judge } from '../../../agents/codex/driver.js';
import { classifyScreen, draftText, sameDraft } from '../../../agents/codex/screen.js';
import { awayFromMenus } from '../../../agents/prompts.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flume-codex-unit-'));
  dirs.push(dir);
  return dir;
}
const line = (type: string, payload: object, timestamp = '2026-12-01T10:00:01.000Z') => `${JSON.stringify({ timestamp, type, payload })}\n`;

describe('the config.toml the driver writes', () => {
  it('turns the daemon off, trusts only the folders given, and names the model and provider', () => {
    // The real Codex reads this config in test/e2e-codex (trust, provider, daemon off); here, its text.
    const text = configToml({ model: 'gpt-5', provider: { name: 'my proxy', base_url: 'http://127.0.0.1:9/v1', env_key: 'PROXY_KEY', request_max_retries: 2 } }, ['/work/a "b"']);
    expect(text.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      'model = "gpt-5"',
      'model_provider = "my proxy"',
      '[features]',
      'daemon_auto_start = false',
      '[model_providers."my proxy"]',
      'name = "my proxy"',
      'wire_api = "responses"',
      'base_url = "http://127.0.0.1:9/v1"',
      'env_key = "PROXY_KEY"',
      'request_max_retries = 2',
      '[projects."/work/a \\"b\\""]',
      'trust_level = "trusted"',
    ]);
    expect(configToml({}, []).split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(['[features]', 'daemon_auto_start = false']);
  });

  it('names the folders a commit writes as the sandbox\'s writable roots', () => {
    // What the real Codex makes of them is in test/e2e-codex/codex.test.ts (a commit under its sandbox).
    const text = configToml({}, [], ['/r/.git/worktrees/fix--a', '/r/.git/objects']);
    expect(text).toContain('\n[sandbox_workspace_write]\nwritable_roots = ["/r/.git/worktrees/fix--a", "/r/.git/objects"]\n');
  });
});

describe('the folders a commit in a place writes', () => {
  it('are the worktree\'s git folder, the objects, and the folders of its branch\'s ref and reflog', async () => {
    const repo = makeRepo();
    try {
      git(repo, 'branch', 'fix/a');
      git(repo, 'worktree', 'add', '-q', join(repo, 'places', 'fix--a'), 'fix/a');
      const common = join(repo, '.git');
      expect(await commitFolders(join(repo, 'places', 'fix--a'), 'fix/a')).toEqual([
        join(common, 'worktrees', 'fix--a'),
        join(common, 'objects'),
        join(common, 'refs', 'heads', 'fix'),
        join(common, 'logs', 'refs', 'heads', 'fix'),
      ]);
    } finally {
      remove(repo);
    }
  });
});

describe('the rollout', () => {
  it('is found by its folder and start among other sessions', async () => {
    const home = temp();
    const day = join(home, 'sessions', '2026', '12', '01');
    mkdirSync(day, { recursive: true });
    const meta = (cwd: string, timestamp: string) => line('session_meta', { cwd, timestamp, id: 'x' });
    writeFileSync(join(day, 'rollout-2026-12-01T09-00-00-a.jsonl'), meta('/repo/places/fix--a', '2026-12-01T09:00:00.000Z'));
    writeFileSync(join(day, 'rollout-2026-12-01T10-00-00-b.jsonl'), meta('/repo/places/fix--b', '2026-12-01T10:00:00.000Z'));
    writeFileSync(join(day, 'rollout-2026-12-01T10-00-01-c.jsonl'), meta('/repo/places/fix--a', '2026-12-01T10:00:01.000Z'));
    expect(await findRollout(home, '/repo/places/fix--a', '2026-12-01T10:00:00.500Z')).toBe(join(day, 'rollout-2026-12-01T10-00-01-c.jsonl'));
    expect(await findRollout(home, '/repo/places/fix--b', '2026-12-01T10:00:00.500Z')).toBe(join(day, 'rollout-2026-12-01T10-00-00-b.jsonl'));
    expect(await findRollout(home, '/repo/places/fix--a', '2026-12-01T11:00:00.000Z')).toBeUndefined();
    expect(await findRollout(temp(), '/repo/places/fix--a', '2026-12-01T10:00:00.000Z')).toBeUndefined();
  });

  it('counts each response once, by the turn model, and reads only what it gained', async () => {
    const path = join(temp(), 'rollout.jsonl');
    const usage = (input: number, cached: number, output: number) => line('token_usage_record', { usage: { input_tokens: input, cached_input_tokens: cached, cache_write_input_tokens: 0, output_tokens: output } });
    writeFileSync(path, line('turn_context', { model: 'gpt-a' }) + usage(100, 40, 10));
    const first = (await readUsage(path))!;
    expect(first.usage).toEqual({ models: { 'gpt-a': { input: 60, cacheRead: 40, cacheWrite: 0, output: 10 } }, replies: 1 });
    // Nothing new: the same cursor back.
    expect((await readUsage(path, first.cursor))!.cursor).toBe(first.cursor);
    appendFileSync(path, line('turn_context', { model: 'gpt-b' }) + usage(200, 0, 5) + '{"timestamp":"2026-12-01T10:00:02Z","type":"token_usage_rec');
    const second = (await readUsage(path, first.cursor))!;
    expect(second.usage).toEqual({ models: { 'gpt-a': { input: 60, cacheRead: 40, cacheWrite: 0, output: 10 }, 'gpt-b': { input: 200, cacheRead: 0, cacheWrite: 0, output: 5 } }, replies: 2 });
    // A replaced file is read from its start.
    rmSync(path);
    writeFileSync(path, usage(1, 0, 1));
    expect((await readUsage(path, second.cursor))!.usage).toEqual({ models: { unknown: { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 } }, replies: 1 });
  });
});

describe('the state of a Codex agent', () => {
  const handle = { driver: 'codex', sessionId: 's', host: 'tmux', pane: '%1', cwd: '/p', startedAt: '2026-12-01T10:00:00.000Z' };
  const idle = '› Ask Codex to do anything\n\n  gpt-test default · /p\n  ← for agents · ? for shortcuts\n';

  it('reads a turn ended with a question as stopped short, in the agent\'s words', async () => {
    const path = join(temp(), 'rollout.jsonl');
    writeFileSync(path, line('event_msg', { type: 'task_started' }) + line('event_msg', { type: 'task_complete', last_agent_message: 'Which file?' }));
    expect(judge(handle, await readRollout(path), { own: true, alive: true, screen: idle })).toMatchObject({ state: 'idle', turnEnded: true, needs: 'Which file?' });
    expect(judge(handle, await readRollout(path), { own: false, alive: false })).toMatchObject({ state: 'exited', paneGone: true, needs: 'Which file?' });
  });

  it('reads a running turn as working, an approval as a permission dialog naming the command, and no rollout as idle or starting', async () => {
    const path = join(temp(), 'rollout.jsonl');
    writeFileSync(path, line('event_msg', { type: 'task_started' }) + line('response_item', { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"rm -rf build"}' }));
    const rollout = await readRollout(path);
    expect(judge(handle, rollout, { own: true, alive: true, screen: '• Working (3s • esc to interrupt)\n' + idle })).toMatchObject({ state: 'working' });
    const approval = '  Would you like to run the following command?\n  $ rm -rf build\n› 1. Yes, proceed (y)\n  Press enter to confirm or esc to cancel\n';
    expect(judge(handle, rollout, { own: true, alive: true, screen: approval })).toMatchObject({ state: 'asking', dialog: 'permission', needs: 'approval to run `rm -rf build`' });
    expect(judge(handle, undefined, { own: true, alive: true, screen: idle })).toEqual({ state: 'idle' });
    expect(judge(handle, undefined, { own: true, alive: true, screen: '' })).toEqual({ state: 'starting' });
  });

  it('tells a draft from the placeholder, and reads a draft of several lines whole', () => {
    expect(classifyScreen(idle)).toBe('input-ready');
    expect(draftText(idle)).toBe('');
    expect(draftText('› Make a probe file\n• Done.\n› first line\n  second line\n\n  gpt-test default · /p\n')).toBe('first line\nsecond line');
  });
});

describe("Codex's input line, as the driver matches flume's text in it", () => {
  it('takes a paste it shows folded for the text only when its count of characters is the text\'s', () => {
    const text = `${'x'.repeat(1000)} é${'y'.repeat(530)}`;
    expect(sameDraft(`[Pasted Content ${Array.from(text).length} chars]`, text)).toBe(true);
    expect(sameDraft('[Pasted Content 12 chars]', text)).toBe(false);
  });

  it('puts a space after a last word that opens a menu, so Enter submits rather than picks', () => {
    expect(awayFromMenus('look at @')).toBe('look at @ ');
    expect(awayFromMenus('use $imagegen')).toBe('use $imagegen ');
    expect(awayFromMenus('@')).toBe('@ ');
    expect(awayFromMenus('look at a@b.c')).toBe('look at a@b.c');
    expect(awayFromMenus('a / b')).toBe('a / b');
  });
});
