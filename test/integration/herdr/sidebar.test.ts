import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../../core/index.js';
import { which } from '../../../core/support/exec.js';
import { rowTokens, SIDEBAR_TTL_MS, sidebarRefresher, sidebarRows, watchSidebar } from '../../../plugins/herdr/index.js';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { fakeHerdr, HERDR_PLUGIN_JS, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { commit, FLUME_BIN, flume, PROJECT } from '../../helpers/repo.js';
import { promptsOf, stageRepo } from '../stages/helpers.js';

const TASKS = (done: number) => Array.from({ length: 8 }, (_, i) => `- [${i < done ? 'x' : ' '}] task ${i + 1}`).join('\n') + '\n';

describe.skipIf(which('tmux') === undefined)('the herdr sidebar, from a real status report', () => {
  let repo: AgentRepo;
  let herdr: FakeHerdr;
  let undo: () => void;
  const status = async (): Promise<StatusReport> => {
    const result = await flume(['status', '--json'], { env: repo.env });
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as StatusReport;
  };
  const reportCalls = () => herdr.callsOf('pane', 'report-metadata');

  beforeAll(async () => {
    herdr = fakeHerdr();
    undo = herdr.install();
    const script = {
      onPrompt: [
        { match: 'QQASK', actions: [{ ask: { question: 'Which colour should the shed be?', header: 'Colour', options: ['red', 'green'] } }] },
        { match: 'QQBUSY|QQTASKS', actions: [{ say: 'On it.' }, { sleepMs: 120_000 }] },
      ],
    };
    repo = agentRepo(script, { agent: { host: 'auto' }, plugins: [HERDR_PLUGIN_JS], limits: { promptTimeout: '3s', startTimeout: '15s', stuckAfter: '2s' } });
    Object.assign(repo.env, herdr.env);
    const launch = async (kind: string, name: string, brief: string, start = true) => {
      const launched = await repo.flume(['launch', '--kind', kind, '--name', name, '--brief', brief, '--no-watch', ...(start ? [] : ['--no-start'])]);
      expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    };
    await launch('fix', 'ask', 'QQASK paint it');
    await launch('fix', 'busy', 'QQBUSY sand it');
    await launch('change', 'tasks', 'QQTASKS plan it');
    commit(join(repo.repo, 'places', 'change--tasks'), 'openspec/changes/tasks/tasks.md', TASKS(3));
    // The supervisor records what a place needs and when it went quiet; run it until it has.
    const watch = spawn(process.execPath, [FLUME_BIN, 'watch', '--poll', '1s', '--linger', '0', '--quiet'], { env: repo.env, stdio: 'ignore' });
    try {
      await waitFor(async () => {
        const byId = Object.fromEntries((await status()).places.map((p) => [p.id, p.stage?.state]));
        return byId['fix/ask'] === 'waiting' && byId['fix/busy'] === 'stuck';
      }, 'waiting and stuck', 90_000);
    } finally {
      watch.kill('SIGTERM');
    }
    await new Promise((done) => (watch.exitCode === null ? watch.once('exit', done) : done(undefined)));
    // A place with no stage yet has no agent pane, so no row (the supervisor would have started it).
    await launch('fix', 'later', 'not yet', false);
    // Four launches through herdr and a supervisor's passes: over two minutes once, on a loaded machine.
  }, 300_000);

  afterAll(async () => {
    undo();
    await repo.cleanup();
    herdr.cleanup();
  });

  it("reports each herdr-hosted place's kind, stage, state, agent, tasks and needs on its pane, and nothing twice", async () => {
    const report = await status();
    const rows = sidebarRows(report);
    expect(rows.map((row) => row.place).sort()).toEqual(['change/tasks', 'fix/ask', 'fix/busy']);
    herdr.clearLog();
    const refresher = sidebarRefresher();
    const first = await refresher.refresh(report);
    expect(first.every((r) => r.ok)).toBe(true);
    expect(reportCalls()).toHaveLength(3);
    const pane = (id: string) => rows.find((row) => row.place === id)!.pane;

    expect(herdr.tokens(pane('fix/ask'))).toMatchObject({ flume_place: 'fix/ask', flume_kind: 'fix', flume_stage: 'code 1/2', flume_state: 'waiting', flume_agent: 'asking' });
    expect(herdr.tokens(pane('fix/ask')).flume_needs).toMatch(/^needs: .*Which colour should the shed be\?/);
    expect(herdr.tokens(pane('fix/busy'))).toMatchObject({ flume_stage: 'code 1/2', flume_state: 'stuck', flume_agent: 'working', flume_needs: expect.stringMatching(/^stuck since \d\d:\d\d$/) });
    expect(herdr.tokens(pane('change/tasks'))).toMatchObject({ flume_kind: 'change', flume_stage: 'construct 1/4', flume_tasks: '3 of 8' });
    expect(herdr.tokens(pane('fix/busy')).flume_tasks).toBeUndefined();
    for (const call of reportCalls()) expect(call.argv.slice(3, 7)).toEqual(['--source', 'flume:sidebar', '--seq', expect.stringMatching(/^\d+$/)]);

    herdr.clearLog();
    expect(await refresher.refresh(await status())).toEqual([]);
    expect(reportCalls()).toEqual([]);

    commit(join(repo.repo, 'places', 'change--tasks'), 'openspec/changes/tasks/tasks.md', TASKS(4));
    const next = await refresher.refresh(await status());
    expect(next).toEqual([{ pane: pane('change/tasks'), place: 'change/tasks', set: { flume_tasks: '4 of 8' }, cleared: [], ok: true }]);
    expect(reportCalls()).toHaveLength(1);
    expect(herdr.tokens(pane('change/tasks')).flume_tasks).toBe('4 of 8');
  });

  it('clears the tokens of a place that leaves the report, and re-sends a report herdr refused', async () => {
    const report = await status();
    const refresher = sidebarRefresher();
    await refresher.refresh(report);
    const gone = sidebarRows(report).find((row) => row.place === 'fix/busy')!;
    herdr.clearLog();
    const without = { ...report, places: report.places.filter((p) => p.id !== 'fix/busy') };
    const cleared = await refresher.refresh(without);
    expect(cleared).toEqual([{ pane: gone.pane, place: 'fix/busy', set: {}, cleared: Object.keys(gone.tokens), ok: true }]);
    expect(herdr.tokens(gone.pane)).toEqual({});
    expect(await refresher.refresh(without)).toEqual([]);

    herdr.setRunning(false);
    const refused = await refresher.refresh(report);
    herdr.setRunning(true);
    expect(refused).toMatchObject([{ place: 'fix/busy', ok: false }]);
    expect((await refresher.refresh(report)).map((r) => [r.place, r.ok])).toEqual([['fix/busy', true]]);
    expect(herdr.tokens(gone.pane)).toEqual(gone.tokens);
  });

  it("lists every host's places from a merged reading, another host's on its pane of herdr's saved machine of that name", async () => {
    const report = await status();
    // A reading as `status --all-hosts --json` gives it: this host's places and another's (here the same places, as if build-1 held them too).
    const all = { ...report, places: [...report.places.map((p) => ({ ...p, host: 'local' })), ...report.places.map((p) => ({ ...p, host: 'build-1' }))] } as StatusReport;
    const rows = sidebarRows(all);
    expect(rows.map((row) => row.place).sort()).toEqual(['build-1:change/tasks', 'build-1:fix/ask', 'build-1:fix/busy', 'change/tasks', 'fix/ask', 'fix/busy']);
    const refresher = sidebarRefresher();
    herdr.clearLog();
    expect((await refresher.refresh(all)).every((r) => r.ok)).toBe(true);
    expect(herdr.callsOf('--machine', 'build-1', 'pane', 'report-metadata')).toHaveLength(3);
    const pane = rows.find((row) => row.place === 'build-1:fix/ask')!.pane;
    expect(herdr.tokens(pane, 'build-1')).toMatchObject({ flume_place: 'build-1:fix/ask', flume_kind: 'fix', flume_state: 'waiting' });
    expect(herdr.tokens(pane).flume_place).toBe('fix/ask');
    // Another host's place that leaves is cleared on that machine; this host's row of the same pane id stays.
    await refresher.refresh({ ...all, places: all.places.filter((p) => !(p.host === 'build-1' && p.id === 'fix/ask')) } as StatusReport);
    expect(herdr.tokens(pane, 'build-1')).toEqual({});
    expect(herdr.tokens(pane).flume_place).toBe('fix/ask');
  });

  it('normalises tokens as herdr stores them and leaves absent ones out', async () => {
    const place = (await status()).places.find((p) => p.id === 'fix/ask')!;
    const tokens = rowTokens({ ...place, stage: { ...place.stage!, needs: `  two\nlines\tand ${'x'.repeat(100)}` } });
    expect(tokens.flume_needs).toBe(`needs: two lines and ${'x'.repeat(80 - 'needs: two lines and '.length)}`);
    expect(rowTokens({ ...place, stage: null })).toEqual({ flume_place: 'fix/ask', flume_kind: 'fix' });
    expect(rowTokens({ ...place, state: 'dropped' }).flume_state).toBe('dropped');
  });

  it("runs once per herdr event from the plugin's bin.js: every row with --ttl-ms, and a notification when a place starts to wait, once", async () => {
    const stateDir = join(repo.state, 'herdr-plugin-state');
    const once = () => spawnSync(process.execPath, [join(PROJECT, 'dist', 'plugins', 'herdr', 'bin.js'), 'sidebar', '--once'], { cwd: join(PROJECT, 'plugins', 'herdr'), env: { ...repo.env, HERDR_PLUGIN_STATE_DIR: stateDir, HERDR_PLUGIN_EVENT: 'pane.agent_status_changed' }, encoding: 'utf8' });
    herdr.clearLog();
    const first = once();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.split('\n').filter((line) => line.endsWith('reported')).sort()).toEqual(['change/tasks: reported', 'fix/ask: reported', 'fix/busy: reported']);
    expect(reportCalls()).toHaveLength(3);
    for (const call of reportCalls()) expect(call.argv.slice(7, 9)).toEqual(['--ttl-ms', String(SIDEBAR_TTL_MS)]);
    const toasts = () => herdr.callsOf('notification', 'show').map((call) => call.argv);
    // Every place that waits (asking, stuck; change/tasks too once quiet past stuckAfter), each once.
    const waiting = sidebarRows(await status()).filter((row) => ['waiting', 'stuck'].includes(row.tokens.flume_state ?? '')).map((row) => `flume: ${row.place} waits`);
    expect(waiting).toEqual(expect.arrayContaining(['flume: fix/ask waits', 'flume: fix/busy waits']));
    expect(toasts().map((argv) => argv[2]).sort()).toEqual(waiting.sort());
    expect(toasts().find((argv) => argv[2] === 'flume: fix/ask waits')).toEqual(['notification', 'show', 'flume: fix/ask waits', '--body', expect.stringMatching(/^needs: .*Which colour/), '--sound', 'request']);

    // The next event renews every row's TTL (a new process: nothing of the last one's but its state file) and notifies no one again.
    herdr.clearLog();
    expect(once().status).toBe(0);
    expect(reportCalls()).toHaveLength(3);
    expect(toasts()).toEqual([]);
  });

  it('keeps refreshing until herdr stops, and stops when aborted', async () => {
    const report = await status();
    let reads = 0;
    await watchSidebar({ readStatus: async () => (reads++, report), intervalMs: 10, running: async () => reads < 3 });
    expect(reads).toBe(3);
    const controller = new AbortController();
    const loop = watchSidebar({ readStatus: async () => report, intervalMs: 60_000, signal: controller.signal });
    controller.abort();
    await loop;
  });
});

describe.skipIf(which('tmux') === undefined)('the herdr sidebar at a gate', () => {
  it('follows the event stream to the gate, notifies once, and its next popup goes on with a note', async ({ onTestFinished }) => {
    const herdr = fakeHerdr();
    const undo = herdr.install();
    const gated = { name: 'gated', stages: [{ name: 'code', prompt: 'Code: {brief}', deliverable: 'commit', advance: 'caller' }, { name: 'review', prompt: 'Review: {brief}', deliverable: 'commit' }] };
    const t = stageRepo({}, { agent: { host: 'auto' }, plugins: [HERDR_PLUGIN_JS], kinds: [gated] });
    onTestFinished(async () => {
      undo();
      await t.cleanup();
      herdr.cleanup();
    });
    Object.assign(t.env, herdr.env);
    t.script({
      onPrompt: [
        { match: '^Code', actions: [{ run: [t.commit, 'code.txt', 'code'] }, { say: 'Coded.' }] },
        { match: 'Review:', actions: [{ run: [t.commit, 'review.txt'] }, { say: 'Reviewed.' }] },
      ],
    });
    const id = 'gated/h';
    t.watch();
    await t.launch('gated', 'h', 'Gate it.');
    await t.until(id, (p) => p?.stage?.agent?.state === 'working' || p?.stage?.agent?.state === 'idle', 'the code agent');

    // The loop's own poll is ten minutes: what it reads after the gate it read because the event stream woke it.
    const reads: StatusReport[] = [];
    const readStatus = async () => {
      const result = await flume(['status', '--json'], { env: t.env });
      const report = JSON.parse(result.stdout) as StatusReport;
      reads.push(report);
      return report;
    };
    const controller = new AbortController();
    const loop = watchSidebar({ readStatus, intervalMs: 600_000, signal: controller.signal });
    try {
      await waitFor(() => reads.length > 0, 'the first reading');
      t.open('code');
      const at = await waitFor(() => reads.map((r) => r.places.find((p) => p.id === id)).find((p) => p?.awaiting), 'a reading at the gate', 150_000);
      expect(at.awaiting).toMatchObject({ gate: true, after: 'code' });
      expect(rowTokens(at)).toMatchObject({ flume_place: id, flume_state: 'at-gate', flume_needs: 'at the gate after code: next goes on' });
    } finally {
      controller.abort();
      await loop;
    }

    // The once-per-event sidebar raises one notification for the place at its gate, and no second one at the next event.
    const runBin = (args: string[], input = '') => spawnSync(process.execPath, [join(PROJECT, 'dist', 'plugins', 'herdr', 'bin.js'), ...args], { cwd: join(PROJECT, 'plugins', 'herdr'), env: { ...t.env, HERDR_PLUGIN_ID: 'flume', HERDR_PLUGIN_STATE_DIR: join(t.state, 'herdr-plugin-state'), HERDR_PLUGIN_CONTEXT_JSON: JSON.stringify({ focused_pane_id: 'w9:p1', focused_pane_cwd: '/' }) }, input, encoding: 'utf8' });
    const toasts = () => herdr.callsOf('notification', 'show').map((call) => call.argv).filter((argv) => argv[2] === `flume: ${id} waits`);
    herdr.clearLog();
    expect(runBin(['sidebar', '--once']).status).toBe(0);
    expect(toasts()).toEqual([['notification', 'show', `flume: ${id} waits`, '--body', 'at the gate after code: next goes on', '--sound', 'request']]);
    expect(runBin(['sidebar', '--once']).status).toBe(0);
    expect(toasts()).toHaveLength(1);

    // next: its popup (over a pane that is no place's) lists the places at a gate, asks for a note, and runs flume next with it.
    expect(runBin(['action', 'next']).status).toBe(0);
    expect(herdr.callsOf('plugin', 'pane', 'open').at(-1)?.argv).toEqual(['plugin', 'pane', 'open', '--plugin', 'flume', '--entrypoint', 'next', '--placement', 'popup']);
    const went = runBin(['popup', 'next'], '1\nmind the tests\n\n\n');
    expect(went.status, went.stdout + went.stderr).toBe(0);
    expect(went.stdout).toContain(` 1  ${id}  at the gate after code`);
    expect(went.stdout).toMatch(new RegExp(`went on to ${id} stage review \\(attempt 1\\): prompt \\w+`));
    const review = await t.until(id, (p) => (p?.stage?.name === 'review' && p.stage.agent?.transcript ? p : undefined), 'the review stage');
    await waitFor(() => promptsOf(review.stage.agent.transcript).length > 0, 'the review prompt');
    expect(promptsOf(review.stage.agent.transcript)[0]).toMatch(/^Review: Gate it\.[\s\S]*mind the tests/);
    // Where no place waits at a gate, the popup says so and runs nothing.
    const none = runBin(['popup', 'next'], '\n');
    expect([none.status, none.stdout]).toEqual([0, expect.stringContaining('No place waits at a gate.')]);
  }, 300_000);
});
