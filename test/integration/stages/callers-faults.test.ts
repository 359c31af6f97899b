/**
 * flume for its callers, tried as a hostile caller would (docs/callers.md): a wait begun after a
 * stage delivered at a gate, a finished launch that must stay finished, and a supervisor killed
 * between a record and its event. The fake agent in real tmux, the supervisor a real `flume watch`,
 * driven through the command line alone.
 */
import { describe, it } from 'vitest';
import { spawn } from 'node:child_process';
import { FLUME_BIN } from '../../helpers/repo.js';
import { validResult } from '../../helpers/result-schema.js';
import { LONG, repoFor } from './helpers.js';

const GATED = {
  name: 'gated',
  stages: [
    { name: 'code', prompt: 'Code: {brief}', deliverable: 'commit', advance: 'caller' },
    { name: 'review', prompt: 'Review: {brief}', deliverable: 'commit' },
  ],
};

/** A caller's kind of one stage, and a kind whose last stage is a gate. */
const ONE = { name: 'one', advance: 'caller', stages: [{ name: 'only', prompt: 'Only: {brief}', deliverable: 'commit' }] };
const LAST_GATED = { name: 'lastgated', stages: [{ name: 'only', prompt: 'Only: {brief}', deliverable: 'commit', advance: 'caller' }] };

/** The repository's events (`flume events --json`), checked against events.schema.json. */
async function streamOf(t: ReturnType<typeof repoFor>): Promise<any[]> {
  const result = await t.flume(['events', '--repo', t.repo, '--json']);
  if (result.code !== 0) throw new Error(`events failed: ${result.stdout}${result.stderr}`);
  return result.stdout.split('\n').filter(Boolean).map((line) => validResult('events', JSON.parse(line), 'events --json'));
}

describe.concurrent('flume wait at a place showing two outcomes', { timeout: LONG }, () => {
  // docs/callers.md: "a wait for `delivered` there returns, however long after the delivery it began".
  it('returns for delivered where the stage delivered and the place now waits at its gate', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [GATED] });
    t.script({ onPrompt: [{ match: '^Code', actions: [{ run: [t.commit, 'code.txt'] }, { say: 'Coded.' }] }] });
    t.watch();
    await t.launch('gated', 'g', 'Add the parser.');
    const held = await t.flume(['wait', 'gated/g', '--for', 'awaits-caller', '--timeout', '4m', '--json']);
    expect(held.code, held.stdout + held.stderr).toBe(0);
    await t.quiet(2);
    // The place shows both: it waits at its gate, and its stage delivered.
    expect(await t.view('gated/g')).toMatchObject({ awaits: 'caller', stage: { name: 'code', state: 'delivered' } });
    const delivered = await t.flume(['wait', 'gated/g', '--for', 'delivered', '--timeout', '30s', '--json']);
    expect(delivered.code, delivered.stdout + delivered.stderr).toBe(0);
    expect(validResult('wait', JSON.parse(delivered.stdout))).toMatchObject({ reached: 'delivered', places: [{ awaits: 'caller', stage: { state: 'delivered' } }] });
    // It returned on the delivery, not at its limit (that would be exit 2, reached: none).
    // Asked for either, the one that says most is named.
    const either = await t.flume(['wait', 'gated/g', '--for', 'delivered,awaits-caller', '--timeout', '30s', '--json']);
    expect(JSON.parse(either.stdout).reached).toBe('awaits-caller');
  });
});

describe.concurrent('a finished launch', { timeout: LONG }, () => {
  // docs/callers.md: "nothing awaits or starts in it after that, and `next` is refused with `NOT_AWAITING`".
  it.for([ONE, LAST_GATED])('stays finished after next at its last stage ($name), until its caller starts a stage by name', async (kind, { expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [kind] });
    t.script({ onPrompt: [{ match: '^Only', actions: [{ run: [t.commit, 'only.txt'] }, { say: 'Done.' }] }] });
    t.watch({}, { poll: '500ms' });
    const id = `${kind.name}/f`;
    await t.launch(kind.name, 'f', 'Do the one thing.');
    if (kind.advance === 'caller') {
      const staged = await t.flume(['stage', id, 'only', '--wait', '--for', 'awaits-caller', '--timeout', '4m', '--json']);
      expect(staged.code, staged.stdout + staged.stderr).toBe(0);
    } else {
      const held = await t.flume(['wait', id, '--for', 'awaits-caller', '--timeout', '4m', '--json']);
      expect(held.code, held.stdout + held.stderr).toBe(0);
    }
    await t.until(id, (p) => p?.stage?.agent?.state === 'exited' || p?.stage?.agent?.state === 'not-up', 'the delivered stage\'s agent to end');
    const next = await t.flume(['next', id, '--json']);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    // Passes of the supervisor, with a short poll, change nothing: no await, no stage, no event.
    await t.quiet(4);
    const after = await t.view(id);
    expect(after).toMatchObject({ state: 'active', finished: { at: expect.any(String) } });
    expect(after.awaits).toBeUndefined();
    const events = (await streamOf(t)).filter((e) => e.place === id).map((e) => e.event);
    expect(events.at(-1)).toBe('finished');
    expect((await streamOf(t)).filter((e) => e.place === id && e.event === 'awaits-caller' && e.after === 'only')).toHaveLength(1);
    expect((await t.flume(['status', id])).stdout).toMatch(/finished .*flume stage or retry runs a stage again/);
    const again = await t.flume(['next', id, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toMatchObject({ code: 'NOT_AWAITING' });
    expect(t.sessions(after.path)).toHaveLength(1);
    // A stage started by name runs it again: the launch is no longer finished.
    const rerun = await t.flume(['stage', id, 'only', '--wait', '--for', 'awaits-caller', '--timeout', '4m', '--json']);
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout).places[0].finished).toBeUndefined();
    expect(t.sessions(after.path)).toHaveLength(2);
  });
});

describe.concurrent('a supervisor killed between a record and its event', { timeout: LONG }, () => {
  // docs/callers.md: "a flume killed between the two loses neither ... a place never shows an end the stream does not hold".
  it('at stage:recorded: the place awaits its caller, and a caller following the stream still reads awaits-caller, once', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, { kinds: [GATED] });
    // The agent commits once the supervisor runs (the gate), so the supervisor records the end.
    t.script({ onPrompt: [{ match: '^Code', actions: [{ run: [t.commit, 'code.txt', 'code'] }, { say: 'Coded.' }] }] });
    // A caller following the stream from before the launch.
    const follower = spawn(process.execPath, [FLUME_BIN, 'events', '--repo', t.repo, '--follow', '--json'], { env: t.env, cwd: t.repo });
    let followed = '';
    follower.stdout.on('data', (d) => (followed += d));
    onTestFinished(() => void follower.kill('SIGKILL'));
    await t.launch('gated', 'c', 'Add the parser.');
    const first = t.watch({ FLUME_CRASH_AT: 'stage:recorded' });
    t.open('code');
    const code = await Promise.race([first.exited, new Promise((done) => setTimeout(done, 120_000, 'still running'))]);
    expect(code, `${first.output()}\n${JSON.stringify(t.record('gated--c'))}`).toBe(137);
    const crashed = t.record('gated--c');
    expect(crashed.awaits).toMatchObject({ after: 'code', gate: true });
    expect(crashed.unpublished).toEqual([expect.objectContaining({ event: 'await-caller' })]);
    expect((await streamOf(t)).map((e) => e.event)).not.toContain('awaits-caller');

    t.watch({}, { poll: '500ms' });
    await t.quiet(3);
    expect(t.record('gated--c').unpublished).toBeUndefined();
    const stream = await streamOf(t);
    expect(stream.filter((e) => e.event === 'awaits-caller')).toEqual([expect.objectContaining({ place: 'gated/c', after: 'code', gate: true, at: crashed.unpublished[0].at })]);
    expect(stream.map((e) => e.id)).toEqual(stream.map((_, i) => i + 1));
    for (let i = 0; i < 100 && !followed.includes('"awaits-caller"'); i++) await new Promise((done) => setTimeout(done, 100));
    expect(followed.split('\n').filter(Boolean).map((line) => JSON.parse(line).event)).toContain('awaits-caller');
  });
});
