import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume } from '../../helpers/repo.js';
import { waitUntil } from '../../helpers/wait.js';
import { LONG, repoFor, tip } from './helpers.js';

// Places move independently: a stage start that waits on a slow agent holds only
// its own place, never the supervisor's passes over the others.

describe.concurrent('a slow stage start', { timeout: LONG }, () => {
  it("holds only its own place: another place's delivery is recorded while its step is under way", async ({ expect, onTestFinished }) => {
    // Readying holds a stage start for 100 s once the test has made the file `hold` in the git dir.
    const ready = { setup: [{ run: ['sh', '-c', 'if [ -e "$(git rev-parse --git-common-dir)/hold" ]; then sleep 100; fi'] }] };
    const t = repoFor({ onTestFinished }, {}, { limits: { startTimeout: '90s' }, ready });
    // The quick place's agent commits once the test opens its gate.
    t.script({ onPrompt: [{ match: 'Make the change', actions: [{ run: [t.commit, 'work.txt', 'go'] }, { say: 'Committed.' }] }, { actions: [{ hang: true }] }] });
    await t.launch('fix', 'quick', 'Work.');
    // A launch cut short once its place was made and readied: the supervisor starts its stage.
    const cut = await flume(['launch', '--kind', 'fix', '--name', 'slow', '--brief', 'Work.', '--no-watch'], { env: { ...t.env, FLUME_CRASH_AT: 'launch:readied' }, cwd: t.repo });
    expect(cut.code).not.toBe(0);
    expect(t.record('fix--slow')).toMatchObject({ phase: 'made' });
    // The slow place's agent shows its input box only after 30 s; it commits once its gate opens.
    t.script({ startDelayMs: 30_000, onPrompt: [{ match: 'Make the change', actions: [{ run: [t.commit, 'work.txt', 'slow-go'] }, { say: 'Committed.' }] }, { actions: [{ hang: true }] }] });
    t.watch();
    await t.until('fix/slow', (p) => p?.stage?.state === 'starting', 'the supervisor to start the slow stage');
    // The slow place is readied: stages started from now on (the quick place's next) are held in
    // readying for longer than this test, so that step stays under way to the end.
    writeFileSync(join(t.repo, '.git', 'hold'), '');
    await delivered(t, 'quick', 'go');
    // All the while the slow agent had no input box: its prompt is not yet sent.
    const timeline = () => JSON.stringify([...t.events('fix--slow'), ...t.events('fix--quick').map((e) => ({ quick: true, ...e }))].map((e) => [e.at, e.quick ? 'quick' : 'slow', e.event]).sort());
    expect(t.record('fix--slow').stage, timeline()).toMatchObject({ name: 'code', delivery: 'sending', sends: 0 });
    // The slow start ends (its prompt taken) while the quick place's next start is under way: the slow
    // place's own delivery is recorded as promptly.
    await t.until('fix/slow', (p) => p?.stage?.state === 'working', 'the slow stage to take its prompt', { timeoutMs: 90_000 });
    expect(t.record('fix--quick').stage).toMatchObject({ name: 'code', delivered: {} });
    await delivered(t, 'slow', 'slow-go');
    // Recorded while the quick place's next start was still held in its readying: not behind that step.
    expect(t.record('fix--quick').stage).toMatchObject({ name: 'code', delivered: {} });
  });
});

/**
 * Opens the place's gate, waits for its commit, then for its delivery's record. The test then asserts
 * the rule itself, not a time: the other place's step is still under way when the record comes. A
 * delivery held behind that step would be recorded only once it ended (its readying sleeps 100 s),
 * after the other place had moved on, or not before this wait's hang guard.
 */
async function delivered(t: ReturnType<typeof repoFor>, name: string, gate: string): Promise<void> {
  const before = tip(t.repo, `fix/${name}`);
  t.open(gate);
  await waitUntil(() => tip(t.repo, `fix/${name}`) !== before, `fix/${name}'s commit`);
  await waitUntil(() => t.events(`fix--${name}`).some((e) => e.event === 'mark-delivered'), `fix/${name}'s delivery recorded`);
}
