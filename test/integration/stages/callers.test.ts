/**
 * flume for its callers: a kind whose caller starts its stages (`advance: 'caller'`), a stage that is
 * a gate, `flume wait` and `--wait`, and the event stream, with the fake agent in real tmux and the
 * supervisor a real `flume watch`, driven as crew drives flume: through the command line alone.
 */
import { describe, it } from 'vitest';
import { spawn } from 'node:child_process';
import { FLUME_BIN } from '../../helpers/repo.js';
import { validResult } from '../../helpers/result-schema.js';
import { LONG, promptsOf, repoFor } from './helpers.js';

const UNIT = {
  name: 'unit',
  description: 'A crew unit, each stage started by crew.',
  branch: 'crew/{name}',
  advance: 'caller',
  stages: [
    { name: 'settle', prompt: 'Settle {name} on {target}.', deliverable: 'commit' },
    { name: 'fixround', prompt: 'Fix round for {name}.', deliverable: 'commit' },
    { name: 'merge', prompt: 'Merge {branch} into {target}.', deliverable: 'landing' },
  ],
};

const GATED = {
  name: 'gated',
  stages: [
    { name: 'code', prompt: 'Code: {brief}', deliverable: 'commit', advance: 'caller' },
    { name: 'review', prompt: 'Review: {brief}', deliverable: 'commit' },
  ],
};

const CHECKED = {
  name: 'checked',
  advance: 'caller',
  stages: [
    { name: 'code', prompt: 'Code: {brief}', deliverable: 'commit' },
    { name: 'verify', prompt: 'Verify: {brief}', deliverable: { type: 'report', path: 'verify.md' } },
  ],
};

/** Every event of the repository's stream, checked against events.schema.json. */
async function streamOf(t: ReturnType<typeof repoFor>, extra: string[] = []): Promise<any[]> {
  const result = await t.flume(['events', '--repo', t.repo, '--json', ...extra]);
  if (result.code !== 0) throw new Error(`events failed: ${result.stdout}${result.stderr}`);
  return result.stdout.split('\n').filter(Boolean).map((line) => validResult('events', JSON.parse(line), 'events --json'));
}

describe.concurrent('a kind whose caller starts its stages', { timeout: LONG }, () => {
  it('starts nothing by itself: each stage runs when its caller says, in its own order, each end read with what it delivered', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [UNIT] });
    t.script({
      onPrompt: [
        { match: '^Settle', actions: [{ run: [t.commit, 'settled.txt'] }, { say: 'Settled.' }] },
        { match: '^Fix round', actions: [{ run: [t.commit, 'fixed.txt'] }, { say: 'Fixed.' }] },
        { match: '^Merge', actions: [{ run: [t.land] }, { say: 'Merged.' }] },
      ],
    });
    const kinds = JSON.parse((await t.flume(['kinds', '--repo', t.repo, '--json'])).stdout);
    expect(validResult('kinds', kinds).kinds.find((k: any) => k.name === 'unit')).toMatchObject({ advance: 'caller' });
    t.watch();
    const place = await t.launch('unit', 'u1', 'A unit of crew.');
    expect(place.stage).toBeUndefined();
    expect(await t.view('unit/u1')).toMatchObject({ stage: null, awaits: 'caller', awaiting: { gate: false } });
    // A supervisor runs, and starts nothing.
    await t.quiet(2);
    expect(t.sessions(place.path)).toEqual([]);
    const first = await t.flume(['wait', 'unit/u1', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(validResult('wait', JSON.parse(first.stdout))).toMatchObject({ reached: 'awaits-caller' });

    // crew's order: the fix round first, then settle, then merge; nothing starts in between.
    const ran: string[] = [];
    for (const stage of ['fixround', 'settle']) {
      const staged = await t.flume(['stage', 'unit/u1', stage, '--wait', '--json', '--timeout', '4m']);
      expect(staged.code, staged.stdout + staged.stderr).toBe(0);
      const ended = validResult('wait', JSON.parse(staged.stdout));
      expect(['delivered', 'awaits-caller']).toContain(ended.reached);
      // One reading holds the stage's end and what it delivered.
      const seen = ended.places[0];
      expect(seen).toMatchObject({ awaits: 'caller', awaiting: { after: stage, gate: false }, stage: { name: stage, state: 'delivered' } });
      expect(seen.stage.delivered.what).toMatch(/^commit [0-9a-f]{7}/);
      expect(seen.awaiting.what).toBe(seen.stage.delivered.what);
      await t.quiet(2);
      ran.push(stage);
      const now = await t.view('unit/u1');
      expect(now).toMatchObject({ awaits: 'caller', stage: { name: stage, state: 'delivered', agent: { state: expect.stringMatching(/exited|not-up/) } } });
      expect(t.sessions(place.path)).toHaveLength(ran.length);
    }
    const merged = await t.flume(['stage', 'unit/u1', 'merge', '--wait', '--json', '--for', 'delivered,gone', '--timeout', '4m']);
    expect(merged.code, merged.stdout + merged.stderr).toBe(0);
    // A landing that lands ends the launch: nothing waits for the caller, and tidying takes the place.
    await t.until('unit/u1', (p) => p === undefined, 'the landed place to be tidied');

    const events = await streamOf(t);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    expect(events.filter((e) => e.event === 'stage-started').map((e) => e.stage)).toEqual(['fixround', 'settle', 'merge']);
    expect(events.filter((e) => e.event === 'awaits-caller').map((e) => e.after ?? null)).toEqual([null, 'fixround', 'settle']);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['launched', 'prompt-sent', 'prompt-taken', 'delivered', 'stopped', 'finished', 'tidied']));
    // The tidied place's events are still there, and --since resumes after any one of them.
    const middle = events[Math.floor(events.length / 2)].id;
    expect((await streamOf(t, ['--since', String(middle)])).map((e) => e.id)).toEqual(ids.filter((id) => id > middle));
    expect((await streamOf(t, ['unit/u1'])).map((e) => e.id)).toEqual(ids);
  });

  it('a verify report asking for fixes starts no fix round: the caller decides, and `next` starts it', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [CHECKED] });
    t.script({
      onPrompt: [
        { match: '^Verify', actions: [{ run: ['sh', '-c', 'printf "Two tests fail.\\n\\nVerdict: fix\\n" > verify.md && git add verify.md && git commit -qm verify'] }, { say: 'Needs fixes.' }] },
        { match: '^Code', actions: [{ run: [t.commit, 'fix.txt'] }, { say: 'Fixed.' }] },
      ],
    });
    t.watch();
    const place = await t.launch('checked', 'v', 'Check it.');
    const verified = await t.flume(['stage', 'checked/v', 'verify', '--wait', '--json', '--timeout', '4m']);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).places[0]).toMatchObject({ awaits: 'caller', stage: { name: 'verify', state: 'delivered', delivered: { what: 'verify.md: fix' } } });
    await t.quiet(3);
    expect(await t.view('checked/v')).toMatchObject({ awaits: 'caller', stage: { name: 'verify' } });
    expect(t.sessions(place.path)).toHaveLength(1);
    const next = await t.flume(['next', 'checked/v', '--json']);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(validResult('stage', JSON.parse(next.stdout)).stage).toMatchObject({ name: 'code', attempt: 1 });
    expect(t.record('checked--v').stage).toMatchObject({ name: 'code', fixRounds: 1, deliverable: { type: 'commit' } });
  });
});

describe.concurrent('a gate', { timeout: LONG }, () => {
  it('holds the place after its stage delivers, across a supervisor restart, until `next` (its note joining the prompt)', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [GATED] });
    t.script({ onPrompt: [{ match: '^Code', actions: [{ run: [t.commit, 'code.txt'] }, { say: 'Coded.' }] }, { match: '^Review', actions: [{ say: 'Reviewing.' }, { sleepMs: 60_000 }] }] });
    const kinds = JSON.parse((await t.flume(['kinds', '--repo', t.repo, '--json'])).stdout);
    expect(validResult('kinds', kinds).kinds.find((k: any) => k.name === 'gated')).toMatchObject({ advance: 'flume', stages: [{ name: 'code', gate: true }, { name: 'review' }] });
    const first = t.watch();
    const place = await t.launch('gated', 'g', 'Add the parser.');
    const held = await t.flume(['wait', 'gated/g', '--for', 'awaits-caller', '--timeout', '4m', '--json']);
    expect(held.code, held.stdout + held.stderr).toBe(0);
    expect(JSON.parse(held.stdout).places[0]).toMatchObject({ awaits: 'caller', awaiting: { after: 'code', gate: true } });
    const text = await t.flume(['status', 'gated/g']);
    expect(text.stdout).toContain('at the gate after code: flume next gated/g goes on');
    await first.stop();
    const beforeRestart = (await streamOf(t)).at(-1)!.id;
    t.watch();
    await t.quiet(3);
    expect(await t.view('gated/g')).toMatchObject({ awaits: 'caller', stage: { name: 'code', state: 'delivered' } });
    expect(t.sessions(place.path)).toHaveLength(1);
    const next = await t.flume(['next', 'gated/g', '--note', 'Keep the old API too.', '--json']);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    const review = validResult('stage', JSON.parse(next.stdout)).stage;
    expect(review).toMatchObject({ name: 'review', delivery: 'taken' });
    expect(promptsOf(t.record('gated--g').stage.agent.transcriptPath)[0]).toMatch(/^Review: Add the parser\.\n\nThe operator's notes for this round:\nKeep the old API too\.$/);
    // A place that does not wait for its caller is refused, with nothing started.
    const again = await t.flume(['next', 'gated/g', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.code).toBe('NOT_AWAITING');
    expect(t.sessions(place.path)).toHaveLength(2);
    // Across the supervisor's restart the stream lost and repeated nothing: one id after another,
    // and a caller resuming after the last event it read before the restart gets exactly the rest.
    const events = await streamOf(t);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect((await streamOf(t, ['--since', String(beforeRestart)])).map((e) => e.id)).toEqual(events.filter((e) => e.id > beforeRestart).map((e) => e.id));
    expect(events.filter((e) => e.event === 'awaits-caller')).toHaveLength(1);
  });
});

describe.concurrent('flume wait', { timeout: LONG }, () => {
  it('returns on a stage stopping short, gives up with exit 4 at its limit, refuses an unknown place, and ends when the place is tidied', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {
      onPrompt: [
        { match: '^The key is', actions: [{ sleepMs: 2000 }, { say: 'Thanks, that key works.' }] },
        { actions: [{ say: 'Working on it.' }, { sleepMs: 20_000 }, { say: 'I need the API key.' }] },
      ],
    });
    t.watch();
    await t.launch('fix', 'w', 'Call the API.');
    const timedOut = await t.flume(['wait', 'fix/w', '--for', 'delivered', '--timeout', '1s', '--json']);
    expect(timedOut.code).toBe(4);
    expect(validResult('error', JSON.parse(timedOut.stdout)).error.code).toBe('WAIT_TIMEOUT');
    const waited = await t.flume(['wait', 'fix/w', '--for', 'waiting', '--timeout', '4m', '--json']);
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ reached: 'waiting', places: [{ stage: { state: 'waiting', needs: expect.stringMatching(/I need the API key\.$/) } }] });
    // After a tell, --wait counts only what comes after it: not the waiting the tell answered.
    const told = await t.flume(['tell', 'fix/w', 'The key is K-1.', '--wait', '--for', 'waiting', '--timeout', '4m', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(validResult('wait', JSON.parse(told.stdout)).places[0].stage.needs).toMatch(/Thanks, that key works\.$/);
    const unknown = await t.flume(['wait', 'fix/nothing', '--repo', t.repo, '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('UNKNOWN_PLACE');
    const badFor = await t.flume(['wait', 'fix/w', '--for', 'lunch']);
    expect(badFor.code).toBe(2);

    // A waiter for the place's end, then the place dropped and tidied.
    const waiter = spawn(process.execPath, [FLUME_BIN, 'wait', 'fix/w', '--repo', t.repo, '--for', 'gone', '--timeout', '4m', '--json'], { env: t.env, cwd: t.repo });
    let out = '';
    waiter.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number>((done) => waiter.on('exit', (code) => done(code ?? -1)));
    // The follower of the stream, started before: it sees the same events as they come.
    const follower = spawn(process.execPath, [FLUME_BIN, 'events', '--repo', t.repo, '--follow', '--json'], { env: t.env, cwd: t.repo });
    let followed = '';
    follower.stdout.on('data', (d) => (followed += d));
    expect((await t.flume(['stop', 'fix/w', '--force'])).code).toBe(0);
    const dropped = await t.flume(['drop', 'fix/w', '--reason', 'no key']);
    expect(dropped.code, dropped.stdout + dropped.stderr).toBe(0);
    const tidied = await t.flume(['tidy', '--repo', t.repo]);
    expect(tidied.code, tidied.stdout + tidied.stderr).toBe(0);
    expect(await exited, out).toBe(0);
    expect(validResult('wait', JSON.parse(out))).toMatchObject({ reached: 'gone', places: [] });
    const all = (await streamOf(t)).map((e) => e.id);
    await new Promise((done) => setTimeout(done, 3000));
    follower.kill('SIGTERM');
    await new Promise((done) => follower.on('exit', done));
    expect(followed.split('\n').filter(Boolean).map((line) => JSON.parse(line).id)).toEqual(all);
  });

  it('steps a place nobody supervises itself (launched with --no-watch): its caller still only waits', async ({ expect, onTestFinished }) => {
    // Stuck is what only a step records (status shows no stage stuck before one has): with no
    // supervisor, only the wait's own step can record it.
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 120_000 }] }] }, { limits: { stuckAfter: '3s' } });
    await t.launch('fix', 'alone', 'Do it.');
    const waited = await t.flume(['wait', 'fix/alone', '--for', 'stuck', '--timeout', '4m', '--json']);
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ reached: 'stuck', places: [{ stage: { name: 'code', state: 'stuck' } }] });
    expect((await streamOf(t, ['fix/alone'])).filter((e) => e.event === 'stuck')).toHaveLength(1);
    expect(t.passes()).toBe(0);
  });

  it('after acting, --wait counts only what follows its own act, not an end of the stage before recorded late', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [UNIT] });
    t.script({
      onPrompt: [
        { match: '^Settle', actions: [{ run: [t.commit, 'settled.txt'] }, { say: 'Settled.' }] },
        { match: '^Fix round', actions: [{ sleepMs: 3000 }, { run: [t.commit, 'fixed.txt'] }, { say: 'Fixed.' }] },
      ],
    });
    // No supervisor: nothing records settle's end until the next command on the place steps it.
    await t.launch('unit', 'r', 'A unit.');
    expect((await t.flume(['stage', 'unit/r', 'settle'])).code).toBe(0);
    await t.until('unit/r', (p) => p?.stage?.state === 'delivered', 'settle to deliver');
    expect(t.record('unit--r').awaits).toBeUndefined();
    // `stage` records settle's end (its step) after the wait's mark, and only then starts fixround.
    const staged = await t.flume(['stage', 'unit/r', 'fixround', '--wait', '--for', 'delivered,awaits-caller', '--timeout', '4m', '--json']);
    expect(staged.code, staged.stdout + staged.stderr).toBe(0);
    expect(JSON.parse(staged.stdout).places[0]).toMatchObject({ stage: { name: 'fixround', state: 'delivered' } });
  });
});
