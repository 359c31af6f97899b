/**
 * With the REAL Claude Code 2.1.332: a launch puts neither the API key nor the
 * caller's GITHUB_TOKEN in any process's argv, the real program gets both in its environment, and
 * Claude Code's `.claude.json` (mode 600, holding the approved key) is still 600 after flume's
 * pre-seed merged into it and after the real program ran and exited (it may rewrite the file itself).
 *
 * Run inside a loopback-only network namespace (root): `sh scripts/test.sh test/e2e/secrets.test.ts`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertIsolated } from '../helpers/netns.js';
import { environOf, filesHolding, leaks, mode, watchArgv } from '../helpers/proc.js';
import { git } from '../helpers/repo.js';
import { alive, realRepo, waitFor, type RealRepo } from './real-repo.js';

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('the real Claude Code started by flume', () => {
  it('gets its secrets in its environment only, and its private .claude.json stays private', async () => {
    // A key of this run's own (the machine runs other suites with the shared test key); flume's
    // pre-seed approves it in .claude.json, as it would a user's.
    const apiKey = `sk-ant-test-flume-${randomBytes(16).toString('hex')}`;
    const t = (current = await realRepo({ script: ['On it.'], env: { ANTHROPIC_API_KEY: apiKey }, config: { prompts: { 'fix.code': '{brief}' } } }));
    const githubToken = `ghp_flumee2e${randomBytes(12).toString('hex')}`;
    Object.assign(t.env, { GITHUB_TOKEN: githubToken });
    const claudeJson = join(t.claude.configDir, '.claude.json');
    chmodSync(claudeJson, 0o600);
    const inode = statSync(claudeJson).ino;
    const secrets = [apiKey, githubToken];

    const stop = watchArgv(secrets);
    const place = await t.launch('fix', 'secret', 'Say you are on it.');
    expect(stop()).toEqual([]);
    expect(place.stage.delivery).toBe('taken');
    const pid = place.stage.agent.pid as number;
    expect(environOf(pid)).toMatchObject({ ANTHROPIC_API_KEY: apiKey, GITHUB_TOKEN: githubToken });
    // flume's pre-seed merged this place's trust in (a new file by rename), keeping the mode.
    const seeded = statSync(claudeJson);
    expect(seeded.ino).not.toBe(inode);
    expect(mode(claudeJson)).toBe('600');
    expect(JSON.parse(readFileSync(claudeJson, 'utf8')).customApiKeyResponses.approved).toContain(apiKey.slice(-20));

    await t.until('fix/secret', (p) => p?.stage.agent.state === 'idle', 'the turn to end');
    expect(leaks(secrets)).toEqual([]);
    const common = git(t.repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    expect(filesHolding(t.state, secrets)).toEqual([]);
    expect(filesHolding(join(common, 'flume'), secrets)).toEqual([]);

    // The real program rewrites .claude.json itself as it runs and as it exits: what mode does it leave?
    const stopped = await t.flume(['stop', 'fix/secret', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    await waitFor(() => !alive(pid), 'the real program to exit');
    // Whether the real program rewrites the file by rename before it exits varies from run to run (CI
    // once saw the same inode as flume's seed): the mode is what is guarded, whichever file is there.
    const after = statSync(claudeJson);
    const rewrote = after.ino !== seeded.ino || after.mtimeMs !== seeded.mtimeMs;
    console.log(`secrets e2e: .claude.json inode ${inode} → ${seeded.ino} (flume) → ${after.ino} (claude, ${rewrote ? 'rewritten' : 'not rewritten'}), mode ${mode(claudeJson)}`);
    expect(JSON.parse(readFileSync(claudeJson, 'utf8')).projects).toBeDefined();
    expect(mode(claudeJson)).toBe('600');
  });
});
