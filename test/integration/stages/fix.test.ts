import { describe, it } from 'vitest';
import { existsSync } from 'node:fs';
import { git } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { isAncestor, LONG, promptsOf, repoFor, running, tip } from './helpers.js';

describe('a fix, driven by the supervisor', { timeout: LONG }, () => {
  it('runs code to its commit, starts a fresh agent for submission, and tidies the place once the branch lands', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    // Each agent's work waits on a gate the test opens, so the supervisor (not launch) sees it land.
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt', 'code'] }, { say: 'Committed one.txt.' }] },
        { match: 'Submit the branch for landing', actions: [{ run: [t.land, 'land'] }, { say: 'Landed on main.' }] },
      ],
    });
    const place = await t.launch('fix', 'one', 'Add one.txt.');
    const first = place.stage.agent;
    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken' });
    const watch = t.watch();

    const seen: any[] = [];
    await t.until('fix/one', (p) => p?.stage?.state === 'working', 'code to work', { seen });
    t.open('code');
    const submission = await t.until('fix/one', (p) => p?.stage?.name === 'submission' && p.stage.delivery === 'taken' && p.stage, 'the submission stage to take its prompt', { seen });
    // The code stage ended on its commit: recorded in the place's history and its event log.
    const record = t.record('fix--one');
    const codeHead = record.history[0]?.delivered?.replace(/^commit /, '');
    expect(record.history).toEqual([expect.objectContaining({ name: 'code', delivered: expect.stringMatching(/^commit [0-9a-f]{7}$/) })]);
    expect(git(place.path, 'log', '-1', '--format=%s', codeHead)).toBe('Work on one.txt');
    const events = t.events('fix--one');
    const kinds = events.map((e) => e.event);
    expect(kinds.indexOf('mark-delivered')).toBeLessThan(kinds.indexOf('agent-stopped'));
    expect(kinds.indexOf('agent-stopped')).toBeLessThan(kinds.lastIndexOf('stage-started'));
    expect(events.filter((e) => e.event === 'stage-started').map((e) => [e.stage, e.index])).toEqual([['code', 0], ['submission', 1]]);
    // A fresh agent: a new session in a new pane (tmux may give it the old id: the server exits with
    // its last pane); the code stage's agent was ended first.
    expect(submission.agent.sessionId).not.toBe(first.sessionId);
    expect(record.stage.agent.pid).not.toBe(first.pid);
    expect(running(first.pid)).toBe(false);
    expect(t.livePanes()).toEqual([{ pane: submission.agent.pane, pid: record.stage.agent.pid }]);
    expect(submission.attempt).toBe(1);
    const codeStates = seen.filter((p) => p?.stage?.name === 'code').map((p) => p.stage.state);
    expect(codeStates).toContain('working');
    expect(codeStates.every((s) => s === 'working' || s === 'delivered')).toBe(true);
    expect(promptsOf(first.transcriptPath)).toHaveLength(1);
    expect(promptsOf(submission.agent.transcript)[0]).toContain(`code delivered commit ${codeHead}`);

    // Submission lands the branch; the place finishes and tidying removes it.
    t.open('land');
    await t.until('fix/one', (p) => p === undefined, 'the place to be tidied away', { timeoutMs: 40_000 });
    expect(isAncestor(t.repo, codeHead, 'main')).toBe(true);
    expect(existsSync(place.path)).toBe(false);
    expect(git(t.repo, 'worktree', 'list', '--porcelain')).not.toContain(place.path);
    expect(tip(t.repo, 'fix/one')).toBeUndefined();
    expect(t.livePanes()).toEqual([]);
    expect(t.record('fix--one')).toBeUndefined();
    // The supervisor says what it tidied once the tidy is over, just after the record is gone.
    await waitFor(() => watch.output().includes('fix/one: tidy removed'), 'the supervisor to say the place was tidied');
    const log = watch.output();
    const order = ['fix/one: mark-delivered', 'fix/one: stop-agent (submission delivered landed on main)', 'fix/one: finish', 'fix/one: tidy removed'].map((line) => log.indexOf(line));
    expect(order.every((at) => at >= 0), log).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(git(t.repo, 'status', '--porcelain')).toBe('');
  });
});
