import { describe, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { flume, git, tempDir } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { LONG, repoFor, running } from './helpers.js';
import { launchedRecord } from '../../helpers/result-schema.js';

// Truth at the edges: status says only what the agent's own record shows. Each test has
// its own repository, state, tmux server and supervisor: they run at once.

const WORKING = { onPrompt: [{ actions: [{ say: 'Working on it.' }, { hang: true }] }] };

/** The supervisor's pid, from its lock; 0 while there is none (a new one moves a dead one's lock aside first). */
function supervisorPid(state: string): number {
  try {
    return Number(readFileSync(join(state, 'watch.lock'), 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

describe.concurrent('an agent whose process is gone', { timeout: LONG }, () => {
  it('is never shown working in the reading that sees it exited, and a supervisor records it on its next pass', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, WORKING);
    const alone = await t.launch('fix', 'alone', 'Work.');
    const watched = await t.launch('fix', 'watched', 'Work.');
    expect((await t.view('fix/alone')).stage).toMatchObject({ state: 'working', agent: { state: 'working' } });

    // No supervisor: status alone reads the agent gone, and says the stage waits, in decide's words.
    process.kill(alone.stage.agent.pid, 'SIGKILL');
    await t.until('fix/alone', () => !running(alone.stage.agent.pid), 'the agent to be gone');
    const seen = (await t.view('fix/alone')).stage;
    expect(seen).toMatchObject({ state: 'waiting', needs: expect.stringContaining('its agent exited without the deliverable'), agent: { state: 'exited' } });
    const text = await t.flume(['status', 'fix/alone', '--repo', t.repo]);
    expect(text.stdout).toContain('code: waiting');
    expect(text.stdout).not.toContain('code: working');

    // With a supervisor: a killed process writes no file, so no event wakes it; its next pass (the
    // slow poll) must not reuse what it read while the agent ran.
    t.watch();
    await t.afterPasses(1);
    expect(t.record('fix--watched').stage.waiting).toBeUndefined();
    process.kill(watched.stage.agent.pid, 'SIGKILL');
    await t.until('fix/watched', () => !running(watched.stage.agent.pid), 'the agent to be gone');
    // Two passes, and one that ended with no step under way: the step that records the wait is done.
    await t.quiet(2);
    expect(t.record('fix--watched').stage.waiting?.needs).toContain('its agent exited without the deliverable');
    expect(t.record('fix--alone').stage.waiting?.needs).toContain('its agent exited without the deliverable');
  });
});

describe.concurrent('a launch or tidy under way', { timeout: LONG }, () => {
  it('reads making while a live launch holds its place, and interrupted only once its flume is gone', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    // git runs post-checkout inside `git worktree add`: the launch stands in its making phase until the gate opens.
    const hook = join(t.repo, '.git', 'hooks', 'post-checkout');
    writeFileSync(hook, `#!/bin/sh\n${t.gate('checkout')}\n`);
    chmodSync(hook, 0o755);
    const launching = flume(['launch', '--kind', 'fix', '--name', 'slow', '--brief', 'b', '--no-start', '--no-watch', '--json'], { env: t.env, cwd: t.repo });
    const making = await t.until('fix/slow', (p) => p?.state === 'making' && p, 'the launch to be making');
    expect(making.problems).toEqual([]);
    const text = await t.flume(['status', '--repo', t.repo]);
    expect(text.stdout).toContain('fix/slow  making');
    expect(text.stdout).not.toContain('interrupted');
    t.open('checkout');
    expect((await launching).code).toBe(0);
    expect((await t.view('fix/slow')).state).toBe('active');

    // A launch killed in its making phase was interrupted: its lock's holder is gone.
    const crashed = await flume(['launch', '--kind', 'fix', '--name', 'cut', '--brief', 'b', '--no-start', '--no-watch'], { env: { ...t.env, FLUME_CRASH_AT: 'launch:recorded' }, cwd: t.repo });
    expect(crashed.code).not.toBe(0);
    const cut = await t.view('fix/cut');
    expect(cut.state).toBe('making');
    expect(cut.problems).toEqual([expect.stringContaining('its launch was interrupted')]);
  });

  it('reads tidying while a live flume holds the place, and interrupted once none does', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    expect((await t.flume(['launch', '--kind', 'fix', '--name', 'tidy', '--brief', 'b', '--no-start', '--no-watch'])).code).toBe(0);
    // A tidy in its tidying phase, as its record and lock stand: the lock held by a live process (this test's).
    const records = join(t.repo, '.git', 'flume', 'places');
    const record = JSON.parse(readFileSync(join(records, 'fix--tidy.json'), 'utf8'));
    writeFileSync(join(records, 'fix--tidy.json'), JSON.stringify({ ...record, phase: 'tidying', dropped: { at: record.createdAt } }));
    const lock = join(records, 'fix--tidy.lock');
    writeFileSync(lock, `${process.pid} ${hostname()} ${randomUUID()}`);
    const live = await t.view('fix/tidy');
    expect(live.state).toBe('tidying');
    expect(live.problems).toEqual([]);
    // Its holder gone (a pid no process has): the tidy was cut short.
    writeFileSync(lock, `999999999 ${hostname()} ${randomUUID()}`);
    const cut = await t.view('fix/tidy');
    expect(cut.state).toBe('tidying');
    expect(cut.problems).toEqual([expect.stringContaining('its tidying was interrupted')]);
  });
});

describe.concurrent('a supervisor killed', { timeout: LONG }, () => {
  it('is reported missing by status, and the next command that changes a place starts one', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: '^Use SQLite', actions: [{ run: [t.commit, 'db.txt'] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { hang: true }] },
        { match: 'Make the change the brief asks for', actions: [{ say: 'Which database should I use?' }] },
      ],
    });
    // Launched with a supervisor (no --no-watch): launch starts one in the background.
    const launched = await t.flume(['launch', '--kind', 'fix', '--name', 'db', '--brief', 'Store the cache.', '--json']);
    expect(launched.code, launched.stderr).toBe(0);
    await t.until('fix/db', (p) => p?.stage?.state === 'waiting', 'the stage to wait on the operator');
    // The launch's own step can bring the stage there before the supervisor it started in the
    // background has taken its lock (a node start, seconds on a loaded machine).
    let first = supervisorPid(t.state);
    for (let i = 0; i < 600 && !running(first); i++) {
      await sleep(100);
      first = supervisorPid(t.state);
    }
    expect(running(first)).toBe(true);
    expect((await t.view('fix/db')) && JSON.parse((await t.flume(['status', '--json'])).stdout).supervisor).toMatchObject({ running: true, pid: first });

    process.kill(first, 'SIGKILL');
    await t.until('fix/db', () => !running(first), 'the supervisor to be gone');
    const report = JSON.parse((await t.flume(['status', '--json'])).stdout);
    expect(report.supervisor).toEqual({ running: false, note: expect.stringContaining('no supervisor runs on this host') });
    const text = (await t.flume(['status'])).stdout;
    expect(text).toContain('supervisor: none running; no supervisor runs on this host, so no stage ends on its deliverable');
    // Reading status starts none.
    expect(supervisorPid(t.state)).toBe(first);

    const told = await t.flume(['tell', 'fix/db', 'Use SQLite.']);
    expect(told.code, told.stderr).toBe(0);
    // The tell started one in the background: it takes the dead one's lock over once it runs.
    let second = supervisorPid(t.state);
    for (let i = 0; i < 600 && (second === first || !running(second)); i++) {
      await sleep(100);
      second = supervisorPid(t.state);
    }
    expect(second).not.toBe(first);
    expect(running(second)).toBe(true);
    // The new supervisor moves the place on: the commit ends the stage and submission starts.
    await t.until('fix/db', (p) => p?.stage?.name === 'submission', 'the next stage to start');
    expect(JSON.parse((await t.flume(['status', '--json'])).stdout).supervisor).toMatchObject({ running: true, pid: second });
  });
});

describe.concurrent('a place launched with --no-start', { timeout: LONG }, () => {
  it('starts no agent while a supervisor runs, until flume retry starts its stage', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, WORKING);
    const made = await t.flume(['launch', '--kind', 'fix', '--name', 'later', '--brief', 'Work.', '--no-start', '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(launchedRecord(made.stdout).launched).toEqual({ start: false, watch: true });
    t.watch({}, { poll: '500ms' });
    await t.quiet(3);
    expect(t.record('fix--later').stage).toBeUndefined();
    expect(t.events('fix--later').map((e) => e.event)).not.toContain('stage-started');
    expect(t.livePanes()).toEqual([]);
    const view = await t.view('fix/later');
    expect(view).toMatchObject({ stage: null, awaitsStart: true });
    expect((await t.flume(['status', 'fix/later'])).stdout).toContain('launched with --no-start: flume stage or flume retry starts one');

    const retried = await t.flume(['retry', 'fix/later']);
    expect(retried.code, retried.stderr).toBe(0);
    const started = await t.until('fix/later', (p) => p?.stage?.state === 'working' && p, 'the stage to start');
    expect(started.awaitsStart).toBeUndefined();
    expect(t.livePanes()).toHaveLength(1);
  });
});

describe.concurrent('a dropped place tidying keeps', { timeout: LONG }, () => {
  it('is judged again only when what it was judged on changes: no event per pass, and removed once its agent ends', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, WORKING);
    await t.launch('fix', 'busy', 'Work.');
    expect((await t.flume(['drop', 'fix/busy'])).code).toBe(0);
    // A slow poll of 10 s, not 2: on a loaded machine a pass (its git reading, the judging) can take
    // over 5 s, and then every pass is a slow poll's and judges again (seen in full runs).
    const watch = t.watch({}, { poll: '10s' });
    await t.until('fix/busy', (p) => p?.kept && p, 'tidying to keep the place');
    const kept = t.record('fix--busy').kept;
    expect(kept.reason).toContain('agent');
    // Passes go on, and none writes: one kept event, one kept stamp. Judging takes the place's lock (a
    // file event that wakes one more pass), so were it judged every pass it would be judged in each;
    // judged only at the slow poll, it is judged at most once in each 10 s the passes took, and once
    // more (the last judgement came at some moment before they began). Measured so, a loaded machine
    // whose passes take seconds each does not count as judging too often.
    const judged = t.judged();
    const from = Date.now();
    await t.afterPasses(4);
    const slowPolls = Math.floor((Date.now() - from) / 10_000);
    expect(t.judged() - judged).toBeLessThanOrEqual(slowPolls + 1);
    expect(t.events('fix--busy').filter((e) => e.event === 'kept')).toHaveLength(1);
    expect(t.record('fix--busy').kept).toEqual(kept);
    expect(watch.output().match(/tidy kept/g)).toHaveLength(1);

    // The agent ends: that is what it was kept on, so tidying judges it again and removes it.
    expect((await t.flume(['stop', 'fix/busy', '--force'])).code).toBe(0);
    await t.until('fix/busy', (p) => p === undefined, 'tidying to remove the place');
  });
});

describe.concurrent('a place landed while its agent runs', { timeout: LONG }, () => {
  it('is never kept for its running agent: the landing is read in the pass that sees it, the agent stopped, then the place tidied', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: 'Make the change', actions: [{ run: [t.commit] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { hang: true }] },
      ],
    });
    await t.launch('fix', 'land', 'Work.');
    const watch = t.watch();
    await t.until('fix/land', (p) => p?.stage?.name === 'submission' && p.stage.delivery === 'taken', 'the submission stage to take its prompt');
    // The supervisor has read the working agent (its memo of the place): two passes, then the operator
    // lands the branch. Only the target's head moves: no file of the place, its record or transcript.
    await t.afterPasses(2);
    git(t.repo, 'merge', '-q', '--no-edit', 'fix/land');
    const seen: any[] = [];
    await t.until('fix/land', (p) => p === undefined, 'the landed place to be tidied', { seen });
    expect(seen.filter((p) => p?.kept || p?.state === 'kept')).toEqual([]);
    expect(watch.output()).not.toContain('tidy kept');
    // The supervisor prints its line once the removal is done: a moment after the record is gone.
    await waitFor(() => watch.output().includes('fix/land: tidy removed'), 'the supervisor to say the place was tidied');
  });
});

describe.concurrent('a pane host that cannot be asked', { timeout: LONG }, () => {
  it('never reads a running agent as gone: status shows it at work, tidy keeps its place, and the agent runs on', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, WORKING);
    const place = await t.launch('fix', 'unasked', 'Work.');
    await t.until('fix/unasked', (p) => p?.stage?.agent?.state === 'working', 'the agent to work');
    expect((await t.flume(['drop', 'fix/unasked'])).code).toBe(0);
    // A tmux that answers nothing, as one that fails on a starved host, first on PATH for these runs.
    const bin = tempDir('flume-unanswering-tmux-');
    writeFileSync(join(bin, 'tmux'), '#!/bin/sh\necho "error connecting to the server (Resource temporarily unavailable)" >&2\nexit 1\n');
    chmodSync(join(bin, 'tmux'), 0o755);
    const env = { ...t.env, PATH: `${bin}:${t.env.PATH ?? process.env.PATH}` };
    const read = await flume(['status', 'fix/unasked', '--json'], { env, cwd: t.repo, process: true });
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout).places[0].stage.agent.state).toBe('working');
    const tidied = await flume(['tidy', '--json'], { env, cwd: t.repo, process: true });
    expect(tidied.code, tidied.stderr).toBe(0);
    expect(JSON.parse(tidied.stdout).outcomes).toEqual([expect.objectContaining({ id: 'fix/unasked', action: 'kept', reason: expect.stringContaining('agent') })]);
    expect(existsSync(place.path)).toBe(true);
    expect(running(place.stage.agent.pid)).toBe(true);
    // With tmux answering again, the same agent reads at work.
    expect((await t.view('fix/unasked')).stage.agent.state).toBe('working');
  });
});
