import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { git } from '../../helpers/repo.js';
import { countTasks } from '../../../deliverables/index.js';
import { COMMIT, promptsOf, running, stageRepo, type StageRepo } from './helpers.js';

let current: StageRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const TASKS = 'openspec/changes/ticks/tasks.md';

describe('a tick that lands between two reads', () => {
  it('never shows a deliverable that is not there: status reads the ticks at one commit, never the working tree', async () => {
    // A kind of one code stage, so the change can stand on main before the launch.
    const kind = { name: 'tick', stages: [{ name: 'code', prompt: 'Tick every task of openspec/changes/{name}/ in order.', deliverable: 'openspec-tasks' }] };
    current = stageRepo({}, { kinds: [kind] });
    const t = current;
    const total = 6;
    git(t.repo, 'checkout', '-q', '-b', 'seed');
    (await import('../../helpers/repo.js')).commit(t.repo, TASKS, Array.from({ length: total }, (_, i) => `- [ ] ${i + 1} step ${i + 1}\n`).join(''), 'Add the change');
    git(t.repo, 'checkout', '-q', 'main');
    git(t.repo, 'merge', '-q', '--ff-only', 'seed');
    // Each tick is made in the working tree first and committed a moment later; the last waits longest.
    const ticker = t.bin('ticks.sh', `for i in $(seq 1 ${total}); do
  sed -i "s/^- \\[ \\] $i /- [x] $i /" ${TASKS}
  if [ "$i" = ${total} ]; then sleep 2.5; else sleep 0.4; fi
  git commit -qam "Tick $i"
done`);
    t.script({ onPrompt: [{ actions: [{ run: [ticker] }, { say: 'All ticked.' }] }] });
    process.env.FLUME_STATE_DIR = t.state;
    const { status } = await import('../../../core/engine/status.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');

    const place = await t.launch('tick', 'ticks', 'Tick them.');
    t.watch();
    const committed = () => countTasks(git(t.repo, 'show', `tick/ticks:${TASKS}`)).done;
    const working = () => countTasks(readFileSync(join(place.path, TASKS), 'utf8')).done;
    const readings: Array<{ before: number; after: number; ahead: number; done: number; state: string }> = [];
    const deadline = Date.now() + 40_000;
    for (;;) {
      const before = committed();
      const ahead = working();
      const view = (await status(defaultPreset, { repo: t.repo })).places[0].stage!;
      const after = committed();
      readings.push({ before, after, ahead, done: view.progress!.done, state: view.state });
      if (view.state === 'delivered' || Date.now() > deadline) break;
    }
    for (const r of readings) {
      expect(r.done, JSON.stringify(r)).toBeGreaterThanOrEqual(r.before);
      expect(r.done, JSON.stringify(r)).toBeLessThanOrEqual(r.after);
      if (r.state === 'delivered') expect(r.after).toBe(total);
    }
    // The window was there: the working tree held a tick status did not show, and nothing ended on it.
    expect(readings.some((r) => r.ahead > r.done && r.after === r.done)).toBe(true);
    expect(readings.some((r) => r.ahead === total && r.after < total && r.state !== 'delivered')).toBe(true);
    expect(readings.at(-1)!.state).toBe('delivered');
    const record = t.record('tick--ticks');
    expect(countTasks(git(t.repo, 'show', `${record.stage.delivered.head}:${TASKS}`))).toEqual({ done: total, total });
    expect(record.stage.delivered.what).toBe(`${total} of ${total} tasks`);
  });
});

const POINTS = ['stage:agent-started', 'stage:prompt-sent', 'stage:ended'] as const;

describe('the supervisor killed at a stage change', () => {
  it.each(POINTS)('at %s: a restarted supervisor starts nothing twice', async (point) => {
    current = stageRepo({});
    const t = current;
    const commit = t.bin('commit.sh', COMMIT);
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ sleepMs: 1000 }, { run: [commit, 'one.txt'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    const place = await t.launch('fix', 'crash', 'Add one.txt.');
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, t.livePanes().length)), 100);
    try {
      const first = t.watch({ FLUME_CRASH_AT: point });
      const code = await Promise.race([first.exited, sleep(30_000).then(() => 'still running')]);
      expect(code, first.output()).toBe(137);
      const crashed = t.record('fix--crash');
      expect(crashed.stage.name).toBe(point === 'stage:ended' ? 'code' : 'submission');
      if (point === 'stage:ended') expect(crashed.stage.delivered).toBeDefined();
      if (point === 'stage:agent-started') expect(crashed.stage).toMatchObject({ delivery: 'sending', sends: 0 });
      if (point === 'stage:prompt-sent') expect(crashed.stage).toMatchObject({ delivery: 'sending', sends: 1 });

      const second = t.watch();
      const stage = await t.until('fix/crash', (p) => p?.stage?.name === 'submission' && p.stage.state === 'working' && p.stage, 'submission to work after the restart');
      // Another pass or two of the supervisor (its poll is 2 s) changes nothing.
      await sleep(3000);
      const after = await t.view('fix/crash');
      expect(after.stage).toMatchObject({ name: 'submission', state: 'working', attempt: 1, agent: { sessionId: stage.agent.sessionId } });
      const started = t.events('fix--crash').filter((e) => e.event === 'stage-started');
      expect(started.map((e) => [e.stage, e.index])).toEqual([['code', 0], ['submission', 1]]);
      // One live agent: submission's. The code stage's agent was ended; each session got its prompt once.
      const record = t.record('fix--crash');
      expect(t.livePanes()).toEqual([{ pane: stage.agent.pane, pid: record.stage.agent.pid }]);
      expect(running(place.stage.agent.pid)).toBe(false);
      expect(t.sessions(place.path).sort()).toEqual([place.stage.agent.sessionId, stage.agent.sessionId].sort());
      expect(promptsOf(stage.agent.transcript)).toHaveLength(1);
      expect(promptsOf(place.stage.agent.transcriptPath)).toHaveLength(1);
      expect(liveStateFiles(t.configDir)).toEqual([record.stage.agent.pid]);
      expect(most).toBeLessThanOrEqual(1);
      expect(second.output()).not.toContain('Error');
    } finally {
      clearInterval(sampler);
    }
  });
});

/** The pids of the fake agents whose state file says they run (a crashed one leaves its file, so check). */
function liveStateFiles(configDir: string): number[] {
  const dir = join(configDir, 'sessions');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+\.json$/.test(name))
    .map((name) => Number.parseInt(name, 10))
    .filter((pid) => running(pid));
}
