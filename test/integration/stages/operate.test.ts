import { describe, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../helpers/repo.js';
import { settledSight, sight } from '../../helpers/untouched.js';
import { LONG, promptsOf, repoFor, running, tip } from './helpers.js';
import { validResult } from '../../helpers/result-schema.js';

// Each test has its own repository, state, tmux server and supervisor: they run at once.

const UNIT = {
  name: 'unit',
  description: 'A crew unit: settle, then merge.',
  branch: 'crew/{name}',
  stages: [
    { name: 'settle', prompt: 'Settle {name} on {target}: make the one commit the unit needs on {branch}.', deliverable: 'commit' },
    { name: 'merge', prompt: 'Merge {branch} into {target} ({previous}).', deliverable: 'landing' },
  ],
};

describe.concurrent('flume retry', { timeout: LONG }, () => {
  it('starts the stage again with a fresh agent (attempt 2), which the supervisor then moves on', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'I need the API key.' }] }] });
    const place = await t.launch('fix', 'key', 'Call the API.');
    t.watch();
    await t.until('fix/key', (p) => p?.stage?.state === 'waiting', 'the stage to wait');
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ sleepMs: 500 }, { run: [t.commit, 'api.txt'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    const retried = await t.flume(['retry', 'fix/key', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    const stage = validResult('stage', JSON.parse(retried.stdout)).stage;
    expect(stage).toMatchObject({ name: 'code', index: 0, attempt: 2, delivery: 'taken' });
    expect(stage.agent.sessionId).not.toBe(place.stage.agent.sessionId);
    expect(running(place.stage.agent.pid)).toBe(false);
    // retry answers with the stage as status shows it; flume's record names the transcript file.
    expect(promptsOf(t.record('fix--key').stage.agent.transcriptPath)[0]).toBe(promptsOf(place.stage.agent.transcriptPath)[0]);
    const next = await t.until('fix/key', (p) => p?.stage?.name === 'submission' && p.stage, 'the retried stage to deliver');
    expect(next.attempt).toBe(1);
    const history = t.record('fix--key').history.map((h: any) => [h.name, h.delivered]);
    expect(history).toEqual([['code', undefined], ['code', expect.stringMatching(/^commit /)]]);
    expect(t.events('fix--key').filter((e) => e.event === 'stage-started').map((e) => e.stage)).toEqual(['code', 'code', 'submission']);
  });
});

describe.concurrent('flume go-on', { timeout: LONG }, () => {
  it('is refused on a fix (go-on is a question\'s), and nothing is stopped or started', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'I need the API key.' }] }] });
    const place = await t.launch('fix', 'on', 'Call the API.');
    t.watch();
    // Waiting is what go-on once took for a question's stopping short: it ran the fix's stage again.
    await t.until('fix/on', (p) => p?.stage?.state === 'waiting', 'the stage to wait');
    const before = t.record('fix--on');
    const agent = { socket: join(t.state, 'tmux', 'flume.sock'), pane: place.stage.agent.pane, transcriptPath: place.stage.agent.transcriptPath };
    const seen = await settledSight(agent);
    const result = await t.flume(['go-on', 'fix/on', '--note', 'here is the key', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'CANNOT_GO_ON', details: { stage: 'code', deliverable: 'commit' } });
    expect(t.record('fix--on')).toEqual(before);
    expect(t.events('fix--on').filter((e) => e.event === 'stage-started')).toHaveLength(1);
    expect(running(place.stage.agent.pid)).toBe(true);
    expect(t.sessions(place.path)).toEqual([place.stage.agent.sessionId]);
    // Nothing typed: the agent's pane and transcript are as they were, byte for byte.
    expect(await sight(agent)).toEqual(seen);
  });
});

describe.concurrent('a kind the repository declares', { timeout: LONG }, () => {
  it('runs stage by stage like the built-ins; flume stage starts a named stage again', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [UNIT] });
    t.script({
      onPrompt: [
        { match: '^Settle', actions: [{ run: [t.commit, 'settled.txt', 'settle'] }, { say: 'Settled.' }] },
        { match: '^Merge', actions: [{ say: 'The merge conflicts with main; settle it again.' }] },
      ],
    });
    const kinds = JSON.parse((await t.flume(['kinds', '--repo', t.repo, '--json'])).stdout);
    expect(JSON.stringify(kinds)).toContain('settle');
    const place = await t.launch('unit', 'u', 'Settle the unit.');
    expect(place).toMatchObject({ branch: 'crew/u', stage: { name: 'settle', delivery: 'taken' } });
    expect(promptsOf(place.stage.agent.transcriptPath)[0]).toBe('Settle u on main: make the one commit the unit needs on crew/u.');
    t.watch();
    t.open('settle');
    const merge = await t.until('unit/u', (p) => p?.stage?.name === 'merge' && p.stage.state === 'waiting' && p.stage, 'merge to stop short');
    expect(merge).toMatchObject({ index: 1, of: 2, deliverable: 'landing', needs: 'The merge conflicts with main; settle it again.' });
    expect(promptsOf(merge.agent.transcript)[0]).toMatch(/^Merge crew\/u into main \(settle delivered commit [0-9a-f]{7}\)\.$/);

    t.script({
      onPrompt: [
        { match: '^Settle', actions: [{ run: [t.commit, 'settled-again.txt'] }, { say: 'Settled again.' }] },
        { match: '^Merge', actions: [{ run: [t.land, 'merge'] }, { say: 'Merged.' }] },
      ],
    });
    const staged = await t.flume(['stage', 'unit/u', 'settle', '--json']);
    expect(staged.code, staged.stdout + staged.stderr).toBe(0);
    const settle = JSON.parse(staged.stdout).stage;
    expect(settle).toMatchObject({ name: 'settle', index: 0, attempt: 2, delivery: 'taken' });
    expect(settle.agent.sessionId).not.toBe(merge.agent.sessionId);
    const unknown = await t.flume(['stage', 'unit/u', 'verify', '--json']);
    expect(JSON.parse(unknown.stdout).error.code).toBe('UNKNOWN_STAGE');

    await t.until('unit/u', (p) => p?.stage?.name === 'merge' && p.stage.state === 'working', 'merge to run again');
    const started = t.events('unit--u').filter((e) => e.event === 'stage-started').map((e) => e.stage);
    expect(started).toEqual(['settle', 'merge', 'settle', 'merge']);
    expect(t.record('unit--u').history.map((h: any) => [h.name, h.delivered?.replace(/[0-9a-f]{7}$/, 'X')])).toEqual([
      ['settle', 'commit X'],
      ['merge', undefined],
      ['settle', 'commit X'],
    ]);
    t.open('merge');
    await t.until('unit/u', (p) => p === undefined, 'the unit to land and be tidied', { timeoutMs: 40_000 });
    expect(tip(t.repo, 'crew/u')).toBeUndefined();
    expect(existsSync(place.path)).toBe(false);
    expect(git(t.repo, 'log', '--format=%s', 'main')).toContain('Work on settled-again.txt');
  });
});

describe.concurrent('pane ids', { timeout: LONG }, () => {
  it('another place\'s agent in a reused tmux pane id is never read or stopped as this place\'s', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'What now?' }] }] });
    const a = await t.launch('fix', 'a', 'First.');
    t.watch();
    await t.until('fix/a', (p) => p?.stage?.state === 'waiting', 'a to wait');
    const stopped = await t.flume(['stop', 'fix/a']);
    expect(stopped.code, stopped.stderr).toBe(0);
    // The tmux server ended with its last pane; the next agent's pane may get a's old id.
    const b = await t.launch('fix', 'b', 'Second.');
    expect(b.stage.agent.pane).toBe(a.stage.agent.pane);
    await t.until('fix/b', (p) => p?.stage?.state === 'waiting', 'b to wait');
    expect((await t.view('fix/a')).stage.agent.state).toBe('exited');
    const retried = await t.flume(['retry', 'fix/a', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(running(b.stage.agent.pid)).toBe(true);
    expect((await t.view('fix/b')).stage.agent.state).not.toBe('exited');
    expect(t.livePanes()).toHaveLength(2);
  });
});
