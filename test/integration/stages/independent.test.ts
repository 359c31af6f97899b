import { describe, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { flume } from '../../helpers/repo.js';
import { LONG, repoFor, tip } from './helpers.js';

// Places move independently (issue 9 item 6): a stage start that waits on a slow agent holds only
// its own place, never the supervisor's passes over the others.

describe.concurrent('a slow stage start', { timeout: LONG }, () => {
  it("holds only its own place: another place's delivery is recorded within a couple of passes", async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { limits: { startTimeout: '90s' } });
    // The quick place's agent commits once the test opens its gate.
    t.script({ onPrompt: [{ match: 'Make the change', actions: [{ run: [t.commit, 'work.txt', 'go'] }, { say: 'Committed.' }] }, { actions: [{ hang: true }] }] });
    await t.launch('fix', 'quick', 'Work.');
    // A launch cut short once its place was made and readied: the supervisor starts its stage.
    const cut = await flume(['launch', '--kind', 'fix', '--name', 'slow', '--brief', 'Work.', '--no-watch'], { env: { ...t.env, FLUME_CRASH_AT: 'launch:readied' }, cwd: t.repo });
    expect(cut.code).not.toBe(0);
    expect(t.record('fix--slow')).toMatchObject({ phase: 'made' });
    // Agents started from now on show their input box only after 45 s.
    t.script({ startDelayMs: 45_000, onPrompt: [{ actions: [{ hang: true }] }] });
    t.watch();
    await t.until('fix/slow', (p) => p?.stage?.state === 'starting', 'the supervisor to start the slow stage');
    const before = tip(t.repo, 'fix/quick');
    t.open('go');
    while (tip(t.repo, 'fix/quick') === before) await sleep(50);
    // From the commit on: the delivery's record comes within a couple of passes, and passes go on.
    const passes = t.passes();
    const deadline = Date.now() + 30_000;
    const delivered = () => t.events('fix--quick').some((e) => e.event === 'mark-delivered');
    while (!delivered() && t.passes() <= passes + 3 && Date.now() < deadline) await sleep(50);
    expect(delivered(), `passes since the commit: ${t.passes() - passes}`).toBe(true);
    expect(t.passes() - passes).toBeLessThanOrEqual(3);
    // All the while the slow agent had no input box: its prompt is not yet sent.
    expect(t.record('fix--slow').stage).toMatchObject({ name: 'code', delivery: 'sending', sends: 0 });
  });
});
