import { describe, it } from 'vitest';
import { LONG, promptsOf, repoFor, running } from './helpers.js';

// Each test has its own repository, state, tmux server and supervisor: they run at once.

describe.concurrent('a stage that stops short', { timeout: LONG }, () => {
  it('waits with what the agent needs and starts no next stage; a tell answers it and the agent delivers', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: '^Use SQLite', actions: [{ say: 'Using SQLite.' }, { sleepMs: 500 }, { run: [t.commit, 'db.txt'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
        { match: 'ASK-ME', actions: [{ say: 'One thing first.' }, { ask: { question: 'Which database should the cache use?', header: 'Database', options: ['SQLite', 'Postgres'] } }] },
        { match: 'Make the change the brief asks for', actions: [{ sleepMs: 300 }, { say: 'Which database should I use?' }] },
      ],
    });
    const place = await t.launch('fix', 'db', 'Store the cache.');
    const asking = await t.launch('fix', 'ask', 'Store the cache. ASK-ME');
    // A short slow poll: the waiting places write nothing, so passes come at the poll alone.
    t.watch({}, { poll: '500ms' });

    const waiting = await t.until('fix/db', (p) => p?.stage?.state === 'waiting' && p.stage, 'the stage to wait');
    expect(waiting).toMatchObject({ name: 'code', index: 0, needs: 'Which database should I use?', agent: { state: 'idle' } });
    const question = await t.until('fix/ask', (p) => p?.stage?.state === 'waiting' && p.stage, 'the open question to show as waiting');
    expect(question).toMatchObject({ name: 'code', agent: { state: 'asking' } });
    expect(question.needs).toContain('Which database should the cache use?');

    // The supervisor passes over them and starts nothing: two passes that read them waiting, no step under way.
    await t.quiet(3);
    for (const id of ['fix/db', 'fix/ask']) {
      const stage = (await t.view(id)).stage;
      expect(stage).toMatchObject({ name: 'code', state: 'waiting', attempt: 1 });
      expect(t.events(id.replace('/', '--')).filter((e) => e.event === 'stage-started')).toHaveLength(1);
    }
    expect(t.livePanes()).toHaveLength(2);

    const told = await t.flume(['tell', 'fix/db', 'Use SQLite.', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    const next = await t.until('fix/db', (p) => p?.stage?.name === 'submission' && p.stage, 'the code stage to deliver and submission to start');
    expect(next.agent.sessionId).not.toBe(place.stage.agent.sessionId);
    expect(promptsOf(place.stage.agent.transcriptPath)).toEqual([expect.stringContaining('Make the change'), 'Use SQLite.']);
    expect(running(place.stage.agent.pid)).toBe(false);
    expect(t.record('fix--db').history).toEqual([expect.objectContaining({ name: 'code', delivered: expect.stringMatching(/^commit /) })]);
    // The question is still open; nothing moved there.
    expect((await t.view('fix/ask')).stage).toMatchObject({ name: 'code', state: 'waiting' });
    expect(running(asking.stage.agent.pid)).toBe(true);
  });
});

describe.concurrent('a stage quiet past its limit', { timeout: LONG }, () => {
  it('is reported stuck, and flume ends nothing', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'Building.' }, { hang: true }] }] }, { limits: { promptTimeout: '3s', startTimeout: '15s', stuckAfter: '3s' } });
    const place = await t.launch('fix', 'slow', 'Build it all.');
    t.watch({}, { poll: '500ms' });
    const stuck = await t.until('fix/slow', (p) => p?.stage?.state === 'stuck' && p.stage, 'the stage to read stuck');
    expect(stuck).toMatchObject({ name: 'code', agent: { state: 'working' } });
    expect(Date.parse(stuck.stuckSince)).toBeLessThanOrEqual(Date.now() - 3000);
    expect(Date.parse(stuck.stuckSince)).toBeGreaterThanOrEqual(Date.parse(place.stage.startedAt));
    expect(stuck.needs).toBeUndefined();
    // Passes that read the place stuck end no agent and start nothing.
    await t.quiet(3);
    expect((await t.view('fix/slow')).stage).toMatchObject({ state: 'stuck', stuckSince: stuck.stuckSince, agent: { state: 'working' } });
    expect(running(place.stage.agent.pid)).toBe(true);
    expect(t.livePanes()).toEqual([{ pane: place.stage.agent.pane, pid: place.stage.agent.pid }]);
    expect(t.events('fix--slow').map((e) => e.event)).not.toContain('agent-stopped');
  });
});
