import { describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { commit, git } from '../../helpers/repo.js';
import { validStatus } from '../../helpers/status-schema.js';
import { waitFor } from '../../helpers/wait.js';
import { countTasks } from '../../../deliverables/index.js';
import { LONG, promptsOf, repoFor, running } from './helpers.js';

// Each test has its own repository, state, tmux server and supervisor: they run at once.

const TASKS = 'openspec/changes/ticks/tasks.md';

describe.concurrent('a tick that lands between two reads', { timeout: LONG }, () => {
  it('never shows a deliverable that is not there: status reads the ticks at one commit, never the working tree', async ({ expect, onTestFinished }) => {
    // A kind of one code stage, so the change can stand on main before the launch.
    const kind = { name: 'tick', stages: [{ name: 'code', prompt: 'Tick every task of openspec/changes/{name}/ in order.', deliverable: 'openspec-tasks' }] };
    const t = repoFor({ onTestFinished }, {}, { kinds: [kind] });
    const total = 6;
    git(t.repo, 'checkout', '-q', '-b', 'seed');
    commit(t.repo, TASKS, Array.from({ length: total }, (_, i) => `- [ ] ${i + 1} step ${i + 1}\n`).join(''), 'Add the change');
    git(t.repo, 'checkout', '-q', 'main');
    git(t.repo, 'merge', '-q', '--ff-only', 'seed');
    // Each tick is made in the working tree first and committed only once the test has read status
    // while the tick stood uncommitted (its gate); the commit then lands while the test reads again.
    const ticker = t.bin('ticks.sh', `for i in $(seq 1 ${total}); do
  sed -i "s/^- \\[ \\] $i /- [x] $i /" ${TASKS}
  ${t.gate('tick-$i')}
  git commit -qam "Tick $i"
done`);
    t.script({ onPrompt: [{ actions: [{ run: [ticker] }, { say: 'All ticked.' }] }] });
    // Status is read in this process (the same report `status --json` prints), many times a second;
    // the state folder names the tmux socket its agent reading uses.
    process.env.FLUME_STATE_DIR = t.state;
    const { status } = await import('../../../core/engine/status/status.js');
    const { defaultPreset } = await import('../../../plugins/defaults.js');

    const place = await t.launch('tick', 'ticks', 'Tick them.');
    t.watch();
    const committed = () => countTasks(git(t.repo, 'show', `tick/ticks:${TASKS}`)).done;
    const working = () => countTasks(readFileSync(join(place.path, TASKS), 'utf8')).done;
    const readings: Array<{ before: number; after: number; ahead: number; done: number; state: string }> = [];
    const deadline = Date.now() + 200_000;
    for (;;) {
      const before = committed();
      const ahead = working();
      const view = validStatus(JSON.parse(JSON.stringify(await status(defaultPreset, { repo: t.repo }))), 'status() in-process').places[0].stage!;
      const after = committed();
      const reading = { before, after, ahead, done: view.progress!.done, state: view.state };
      readings.push(reading);
      if (view.state === 'delivered' || Date.now() > deadline) break;
      // Status was read while the tick stood in the working tree alone: let the agent commit it.
      if (ahead > after && reading.done === after) t.open(`tick-${ahead}`);
      await sleep(100);
    }
    for (const r of readings) {
      expect(r.done, JSON.stringify(r)).toBeGreaterThanOrEqual(r.before);
      expect(r.done, JSON.stringify(r)).toBeLessThanOrEqual(r.after);
      if (r.state === 'delivered') expect(r.after).toBe(total);
      else expect(r.state).toBe('working');
    }
    // Every tick stood uncommitted while status was read, and status showed the commit's count.
    const windows = readings.filter((r) => r.ahead > r.done && r.after === r.done).map((r) => r.ahead);
    expect([...new Set(windows)], JSON.stringify(readings.slice(-5))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(readings.at(-1)!.state).toBe('delivered');
    // Status shows the delivery in the reading that finds it; the supervisor records it on its step.
    let record = t.record('tick--ticks');
    for (let i = 0; i < 200 && !record.stage.delivered; i++) {
      await sleep(100);
      record = t.record('tick--ticks');
    }
    expect(countTasks(git(t.repo, 'show', `${record.stage.delivered.head}:${TASKS}`))).toEqual({ done: total, total });
    expect(record.stage.delivered.what).toBe(`${total} of ${total} tasks`);
  });
});

const POINTS = ['stage:agent-started', 'stage:prompt-sent', 'stage:ended'] as const;

describe.concurrent('the supervisor killed at a stage change', { timeout: LONG }, () => {
  it.for(POINTS)('at %s: a restarted supervisor starts nothing twice', async (point, { expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    // Submission's agent works until the test ends: on a loaded host a minute's sleep can run out
    // before the test's last look, and an agent idle after its turn reads waiting.
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt', 'code'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { hang: true }] },
      ],
    });
    const place = await t.launch('fix', 'crash', 'Add one.txt.');
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, t.livePanes().length)), 200);
    try {
      const first = t.watch({ FLUME_CRASH_AT: point });
      t.open('code');
      const code = await Promise.race([first.exited, sleep(90_000).then(() => 'still running')]);
      expect(code, first.output()).toBe(137);
      const crashed = t.record('fix--crash');
      expect(crashed.stage.name).toBe(point === 'stage:ended' ? 'code' : 'submission');
      if (point === 'stage:ended') expect(crashed.stage.delivered).toBeDefined();
      if (point === 'stage:agent-started') expect(crashed.stage).toMatchObject({ delivery: 'sending', sends: 0 });
      if (point === 'stage:prompt-sent') expect(crashed.stage).toMatchObject({ delivery: 'sending', sends: 1 });

      // A short slow poll: the working agent writes nothing, so passes come at the poll alone.
      const second = t.watch({}, { poll: '500ms' });
      const stage = await t.until('fix/crash', (p) => p?.stage?.name === 'submission' && p.stage.state === 'working' && p.stage, 'submission to work after the restart');
      // Passes of the supervisor that read the working stage change nothing.
      await t.quiet(3);
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

  it('at stage:agent-started, with the new agent gone before a supervisor is back: the stage reads never-started, and retry starts it', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt', 'code'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    await t.launch('fix', 'gone', 'Add one.txt.');
    const first = t.watch({ FLUME_CRASH_AT: 'stage:agent-started' });
    t.open('code');
    expect(await Promise.race([first.exited, sleep(90_000).then(() => 'still running')]), first.output()).toBe(137);
    const crashed = t.record('fix--gone').stage;
    expect(crashed).toMatchObject({ name: 'submission', delivery: 'sending', sends: 0 });
    // The agent flume started dies before anyone sent it the prompt.
    process.kill(crashed.agent.pid, 'SIGKILL');
    await waitUntil(() => !running(crashed.agent.pid));
    t.watch();
    const stage = await t.until('fix/gone', (p) => p?.stage?.state !== 'starting' && p?.stage, 'the stage to stop reading as starting');
    expect(stage).toMatchObject({ name: 'submission', state: 'never-started', delivery: 'never-started', agent: { state: 'exited' } });
    const retried = await t.flume(['retry', 'fix/gone', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).stage).toMatchObject({ name: 'submission', attempt: 2, delivery: 'taken' });
    expect(t.livePanes()).toHaveLength(1);
  });

  it('at stage:agent-opened (its agent started, its handle not yet written): a restarted supervisor ends that agent and starts the stage afresh, once', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt', 'code'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { hang: true }] },
      ],
    });
    const place = await t.launch('fix', 'cut', 'Add one.txt.');
    const first = t.watch({ FLUME_CRASH_AT: 'stage:agent-opened' });
    t.open('code');
    expect(await Promise.race([first.exited, sleep(90_000).then(() => 'still running')]), first.output()).toBe(137);
    const crashed = t.record('fix--cut').stage;
    expect(crashed).toMatchObject({ name: 'submission', attempt: 1, delivery: 'sending', sends: 0 });
    expect(crashed.agent.pane).toBeUndefined();
    // The agent the cut start opened runs: the record knows it by its session alone.
    await waitUntil(() => liveStateFiles(t.configDir).length === 1);
    const [orphan] = liveStateFiles(t.configDir);

    const second = t.watch({}, { poll: '500ms' });
    const stage = await t.until('fix/cut', (p) => p?.stage?.name === 'submission' && p.stage.state === 'working' && p.stage, 'submission to work after the restart');
    await t.quiet(3);
    const record = t.record('fix--cut');
    expect(record.stage).toMatchObject({ name: 'submission', attempt: 2, afterCut: true, delivery: 'taken' });
    // One live agent: the new one. The one the cut start opened was ended, and never sent the prompt.
    expect(running(orphan)).toBe(false);
    expect(t.livePanes()).toEqual([{ pane: stage.agent.pane, pid: record.stage.agent.pid }]);
    expect(liveStateFiles(t.configDir)).toEqual([record.stage.agent.pid]);
    expect(promptsOf(stage.agent.transcript)).toHaveLength(1);
    expect(t.sessions(place.path)).not.toContain(crashed.agent.sessionId);
    const started = t.events('fix--cut').filter((e) => e.event === 'stage-started');
    expect(started.map((e) => [e.stage, e.attempt])).toEqual([['code', 1], ['submission', 1], ['submission', 2]]);
    expect(second.output()).not.toContain('Error');
    // The pane the cut start opened, dead since its agent was ended through its session, is named by
    // no place: the supervisor closes it at its slow poll. The new agent's pane stays.
    const panes = () => execFileSync('tmux', ['-S', join(t.state, 'tmux', 'flume.sock'), 'list-panes', '-a', '-F', '#{pane_id} #{pane_dead}'], { encoding: 'utf8' }).trim().split('\n');
    await waitFor(() => panes().length === 1 || undefined, `the dead pane of the cut start to be closed (panes: ${panes().join(', ')})`);
    expect(panes()).toEqual([`${stage.agent.pane} 0`]);
    expect(second.output()).toMatch(/closed 1 dead pane no place needs/);
  });
});

/** Polls `check` until it holds; throws after 10 s rather than going on as if it held. */
async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i >= 200) throw new Error('timed out after 10 s');
    await sleep(50);
  }
}

/** The pids of the fake agents whose state file says they run (a crashed one leaves its file, so check). */
function liveStateFiles(configDir: string): number[] {
  const dir = join(configDir, 'sessions');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+\.json$/.test(name))
    .map((name) => Number.parseInt(name, 10))
    .filter((pid) => running(pid));
}
