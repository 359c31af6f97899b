/**
 * `flume trust --revoke` takes back the folder trust that trusting made flume write into Claude Code's
 * `.claude.json`, and only that: a key the user's own answer set before stays, and so does every other
 * key. Claude Code's own question is then back for the next place. The agent is the scripted fake on
 * PATH as `claude` (it asks about trust where `.claude.json` does not hold it), in flume's own tmux.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume, flumeEnv, makeRepo, remove, tempDir } from '../../helpers/repo.js';
import { FAKE_CLAUDE } from '../../helpers/fake-claude/index.js';
import { killTmuxServer } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('flume trust --revoke', () => {
  it("takes back the folder trust flume wrote into Claude Code's config, leaves what was there before, and the question is back", async () => {
    const state = tempDir('flume-state-');
    const configDir = tempDir('flume-claude-');
    const bin = join(configDir, 'bin');
    mkdirSync(bin);
    symlinkSync(FAKE_CLAUDE, join(bin, 'claude'));
    const script = join(configDir, 'script.json');
    writeFileSync(script, JSON.stringify({ trust: true }));
    const repo = makeRepo({ trusted: false });
    const other = '/somewhere/the-user/trusted';
    const claudeJson = join(configDir, '.claude.json');
    // The user answered Claude Code's question themselves for the first place's folder and for another;
    // the main checkout holds a key of Claude Code's own, but no trust.
    const firstPath = join(repo, 'places', 'fix--one');
    writeFileSync(claudeJson, JSON.stringify({ projects: { [repo]: { allowedTools: ['Bash'] }, [firstPath]: { hasTrustDialogAccepted: true }, [other]: { hasTrustDialogAccepted: true } } }));
    const env = flumeEnv(state, { PATH: `${bin}:${process.env.PATH}`, CLAUDE_CONFIG_DIR: configDir, FAKE_CLAUDE_SCRIPT: script });
    cleanups.push(async () => {
      await killTmuxServer(join(state, 'tmux', 'flume.sock'));
      [repo, state, configDir].forEach(remove);
    });
    const run = (args: string[]) => flume([...args, '--repo', repo], { env });
    const read = () => JSON.parse(readFileSync(claudeJson, 'utf8'));

    expect((await run(['trust'])).code).toBe(0);
    const first = await run(['launch', '--kind', 'fix', '--name', 'one', '--brief', 'Add one.txt.', '--no-watch', '--json']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const place = launchedRecord(first.stdout);
    expect(place.path).toBe(firstPath);
    expect(read().projects[repo]).toEqual({ allowedTools: ['Bash'], hasTrustDialogAccepted: true });

    const revoked = await run(['trust', '--revoke']);
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('taken back too (1 entry)');
    const after = read();
    expect(after.projects[repo]).toEqual({ allowedTools: ['Bash'] });
    expect(after.projects[firstPath]).toEqual({ hasTrustDialogAccepted: true });
    expect(after.projects[other]).toEqual({ hasTrustDialogAccepted: true });

    // A repository with no config launches untrusted; its next place meets Claude Code's own question.
    const second = await run(['launch', '--kind', 'fix', '--name', 'two', '--brief', 'Add two.txt.', '--no-watch', '--json']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const asked = launchedRecord(second.stdout);
    expect(asked.stage.delivery).not.toBe('taken');
    expect(asked.stage.waiting?.needs).toContain('flume trust --repo');
  });
});
