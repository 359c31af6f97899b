/**
 * Claude Code's folder trust follows the user's own decision: flume pre-seeds it only for a
 * repository the user trusted with `flume trust`. In one they did not, Claude Code asks in its pane,
 * and flume says so truthfully: the stage waits on that question, and `flume trust` then
 * `flume retry` answers it. The agent is the scripted fake on PATH as `claude`, in flume's own tmux.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume, flumeEnv, makeRepo, remove, tempDir } from '../../helpers/repo.js';
import { FAKE_CLAUDE } from '../../helpers/fake-claude/index.js';
import { killTmuxServer } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Claude Code folder trust', () => {
  it('is not pre-seeded for an untrusted repository with no config; the stage waits on the question until flume trust and retry', async () => {
    const state = tempDir('flume-state-');
    const configDir = tempDir('flume-claude-');
    const bin = join(configDir, 'bin');
    mkdirSync(bin);
    symlinkSync(FAKE_CLAUDE, join(bin, 'claude'));
    const script = join(configDir, 'script.json');
    writeFileSync(script, JSON.stringify({ trust: true }));
    const repo = makeRepo({ trusted: false });
    const env = flumeEnv(state, { PATH: `${bin}:${process.env.PATH}`, CLAUDE_CONFIG_DIR: configDir, FAKE_CLAUDE_SCRIPT: script });
    cleanups.push(async () => {
      await killTmuxServer(join(state, 'tmux', 'flume.sock'));
      [repo, state, configDir].forEach(remove);
    });
    const run = (args: string[]) => flume([...args, '--repo', repo], { env });

    // No config: nothing of the repository runs, so launching needs no trust.
    const launched = await run(['launch', '--kind', 'fix', '--name', 'asks', '--brief', 'Add one.txt.', '--no-watch', '--json']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const place = launchedRecord(launched.stdout);
    const claudeJson = () => (existsSync(join(configDir, '.claude.json')) ? JSON.parse(readFileSync(join(configDir, '.claude.json'), 'utf8')) : {});
    expect(claudeJson().projects?.[repo]?.hasTrustDialogAccepted).not.toBe(true);
    expect(claudeJson().projects?.[place.path]?.hasTrustDialogAccepted).not.toBe(true);
    expect(place.stage.delivery).not.toBe('taken');
    expect(place.stage.waiting?.needs).toContain('flume trust --repo');

    const view = async () => JSON.parse((await run(['status', 'fix/asks', '--json'])).stdout).places[0];
    const waiting = await view();
    expect(waiting.stage).toMatchObject({ state: 'waiting', agent: { state: 'asking' } });
    expect(waiting.stage.needs).toMatch(/trust the folder/);
    expect(waiting.stage.needs).toContain('flume retry');

    // The user's answer: trust the repository, then start the stage afresh.
    expect((await run(['trust'])).code).toBe(0);
    const retried = await run(['retry', 'fix/asks', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(claudeJson().projects?.[repo]?.hasTrustDialogAccepted).toBe(true);
    const last = await waitFor(async () => ((v) => (v.stage.delivery === 'taken' ? v : undefined))(await view()), 'the retried prompt taken');
    expect(last.stage).toMatchObject({ delivery: 'taken', attempt: 2 });
    // Past the question: whatever the fake says next, it no longer waits on folder trust.
    expect(last.stage.needs ?? '').not.toMatch(/trust the folder/);
  }, 120_000);
});
