/**
 * The idle-supervisor benchmark runs over fake agents that write nothing while idle.
 * This pins that the real Claude Code is as quiet where the supervisor looks. With a turn done and its
 * input box empty, the real program and the fake sit side by side for 18 s; over that time neither
 * changes a file the supervisor watches or stamps (DESIGN.md, the idle supervisor's memo): its
 * transcript folder, `sessions/` (its state file), the worktree's own entries. What the real program
 * does write while idle is a start-bound one-off outside those: about 10 s after it starts it
 * rewrites `<config>/.claude.json` once (dropping its `fullscreenBootPending` entry), and at about
 * 11 s and 19 s its screen shows, then clears, a tmux focus-events hint (bench/RESULTS.md, "What the
 * real Claude Code writes while idle"). The fake writes nothing at all.
 *
 * Run inside a loopback-only network namespace (root):
 *     sh scripts/test.sh --project claude-2.1.332 test/e2e/idle-writes.test.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeClaudeEnv } from '../helpers/claude-env.js';
import { isReady, sleep, startClaudePane, startTmux, stopClaudePane, submitPrompt, waitUntil, hasInputBox, inputBoxText } from '../helpers/claude-pane.js';
import { fakeClaude, readRecords } from '../helpers/fake-claude/index.js';
import { startMessagesApi } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** How long both agents are watched at rest. */
const OBSERVE_MS = 18_000;

/** Every file under `dir` (recursively) with its size and mtime; `skip` leaves a top-level entry out. */
function snapshot(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (folder === dir && skip.includes(entry.name)) continue;
      try {
        if (entry.isDirectory()) walk(path);
        else {
          const s = statSync(path);
          out[relative(dir, path)] = `${s.size}:${s.mtimeMs}`;
        }
      } catch {
        // gone between the listing and the stat: a change, which the second snapshot shows
      }
    }
  };
  walk(dir);
  return out;
}

/** The names whose entry differs between two snapshots. */
function changed(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys({ ...before, ...after }).filter((name) => before[name] !== after[name]).sort();
}

/** What the supervisor watches or stamps for one agent: its transcript folder, sessions/, the worktree. */
interface Watched {
  configDir: string;
  cwd: string;
}

/** Snapshots of the watched places, and the config dir's top-level files (where .claude.json is). */
function look({ configDir, cwd }: Watched) {
  return {
    projects: snapshot(join(configDir, 'projects')),
    sessions: snapshot(join(configDir, 'sessions')),
    worktree: snapshot(cwd, ['.git']),
    config: snapshot(configDir, ['projects', 'sessions']),
  };
}

describe('an agent at rest at its input box', () => {
  it('the real Claude Code, like the fake, changes nothing the supervisor watches', async () => {
    const api = await startMessagesApi({ script: ['Hello from the real one.'] });
    cleanups.push(() => expect(api.unexpected(), 'what the scripted API saw unscripted').toEqual([]));
    cleanups.push(() => api.close());
    const env = makeClaudeEnv({ baseUrl: api.url });
    cleanups.push(() => env.cleanup());
    const realCwd = join(env.root, 'real');
    const fakeCwd = join(env.root, 'fake');
    for (const cwd of [realCwd, fakeCwd]) {
      mkdirSync(cwd);
      execFileSync('git', ['init', '-q'], { cwd });
    }
    env.trust(realCwd);
    const fakeConfig = join(env.root, 'fake-config');

    // Both started together, so the window covers the same seconds of each one's life.
    const real = await startClaudePane(env, realCwd);
    cleanups.push(() => stopClaudePane(real));
    const fake = fakeClaude({ configDir: fakeConfig, cwd: fakeCwd, script: { onPrompt: [{ actions: [{ say: 'Hello from the fake.' }] }] } });
    const tmuxDir = join(env.root, 'fake-tmux');
    mkdirSync(tmuxDir);
    const fakeTmux = startTmux(tmuxDir);
    cleanups.push(() => fakeTmux.kill());
    await fakeTmux.tmux('new-session', '-d', '-x', '200', '-y', '50', '-c', fake.spec.cwd, 'env', '-i', ...Object.entries(fake.spec.env).map(([k, v]) => `${k}=${v}`), ...fake.spec.argv);
    const fakePane = { tmux: fakeTmux, target: '%0', pid: 0, sessionId: fake.sessionId, cwd: fakeCwd };

    await real.tmux.waitForScreen(isReady, 30_000);
    await fakeTmux.waitForScreen(isReady, 30_000);
    expect(await submitPrompt(real, 'Say hello.')).toBeGreaterThanOrEqual(1);
    expect(await submitPrompt(fakePane, 'Say hello.')).toBeGreaterThanOrEqual(1);
    const turnOver = (lines: Array<Record<string, any>>) => lines.some((l) => l.type === 'system' && l.subtype === 'turn_duration');
    await waitUntil(() => turnOver(env.readTranscript(real.sessionId)), 20_000, "the real program's turn to end");
    await waitUntil(() => turnOver(readRecords(fake.transcriptPath)), 20_000, "the fake's turn to end");
    // Let the turn's own trailing writes land (the state file lags its screen by about 250 ms).
    await sleep(1_500);

    const agents: Record<'real' | 'fake', Watched> = { real: { configDir: env.configDir, cwd: realCwd }, fake: { configDir: fakeConfig, cwd: fakeCwd } };
    const before = { real: look(agents.real), fake: look(agents.fake) };
    await sleep(OBSERVE_MS);
    const after = { real: look(agents.real), fake: look(agents.fake) };

    for (const who of ['real', 'fake'] as const) {
      // The state file and the transcript are there (what the supervisor stamps), and unchanged.
      expect(Object.keys(before[who].sessions).some((name) => /^\d+\.json$/.test(name)), `${who}: a state file`).toBe(true);
      expect(Object.keys(before[who].projects).some((name) => name.endsWith('.jsonl')), `${who}: a transcript`).toBe(true);
      expect(changed(before[who].projects, after[who].projects), `${who}: the transcript folder`).toEqual([]);
      expect(changed(before[who].sessions, after[who].sessions), `${who}: sessions/`).toEqual([]);
      expect(changed(before[who].worktree, after[who].worktree), `${who}: the worktree`).toEqual([]);
    }
    // Outside what the supervisor watches, the real program may rewrite .claude.json once; nothing else.
    expect(changed(before.real.config, after.real.config).filter((name) => name !== '.claude.json'), 'real: the config dir').toEqual([]);
    expect(changed(before.fake.config, after.fake.config), 'fake: the config dir').toEqual([]);
    // Both still at an empty input box: at rest, not between turns.
    for (const screen of [await real.tmux.capture(), await fakeTmux.capture()]) {
      expect(hasInputBox(screen)).toBe(true);
      expect(inputBoxText(screen)).toBe('');
    }
  });
});
