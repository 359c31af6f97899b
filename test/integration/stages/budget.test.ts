/**
 * What each stage cost, on scripted runs of the fake agent (which writes `message.usage` on every
 * block line of a reply, as Claude Code does): status's figures equal the transcript's usage counted
 * once per reply (counted here by a pass of the test's own), an ended stage's figures stay with the
 * place, and a stage past `limits.tokens` is reported over budget and waits, or, with the kind's
 * `onBudget: 'stop'`, has its agent stopped.
 */
import { readFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import { LONG, repoFor, running } from './helpers.js';

// Each test has its own repository, state, tmux server and supervisor: they run at once.

/** One reply's usage as the fake writes it: 110 tokens, of every kind. */
const USAGE = { input_tokens: 40, output_tokens: 30, cache_read_input_tokens: 25, cache_creation_input_tokens: 15 };
const PRICING = { 'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };

/** The transcript's usage by a pass of the test's own: distinct message ids, each reply's usage once. */
function counted(path: string): { replies: number; lines: number; input: number; output: number; cacheRead: number; cacheWrite: number } {
  const replies = new Map<string, any>();
  let lines = 0;
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    const rec = JSON.parse(line);
    if (rec.type !== 'assistant') continue;
    lines++;
    replies.set(rec.message.id, rec.message.usage);
  }
  const sum = (key: string) => [...replies.values()].reduce((total, usage) => total + usage[key], 0);
  return { replies: replies.size, lines, input: sum('input_tokens'), output: sum('output_tokens'), cacheRead: sum('cache_read_input_tokens'), cacheWrite: sum('cache_creation_input_tokens') };
}

const TWO = {
  name: 'unit',
  stages: [
    { name: 'settle', prompt: 'Settle {name}: make the one commit it needs.', deliverable: 'commit' },
    { name: 'merge', prompt: 'Merge {branch} into {target}.', deliverable: 'landing', limits: { tokens: 300 } },
  ],
};

describe.concurrent('a stage past its token budget', { timeout: LONG }, () => {
  it('is reported over budget with its figures and waits; the place keeps its ended stage\'s figures', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { usage: USAGE }, { kinds: [TWO], pricing: PRICING });
    t.script({
      usage: USAGE,
      onPrompt: [
        { match: '^Settle', actions: [{ say: 'Settling.' }, { run: [t.commit, 'unit.txt'] }, { say: 'Committed.' }] },
        // Three replies (the first of two lines): 330 tokens, over the merge stage's 300 only at the third.
        { match: '^Merge', actions: [{ say: 'Merging.' }, { run: ['true'] }, { run: ['true'] }, { run: ['true'] }, { sleepMs: 60_000 }] },
      ],
    });
    await t.launch('unit', 'u', 'A unit.');
    t.watch({}, { poll: '500ms' });
    const over = await t.until('unit/u', (p) => p?.stage?.state === 'over-budget' && p, 'the merge stage to read over budget');
    const stage = over.stage;
    const mine = counted(stage.agent.transcript);
    expect(mine).toMatchObject({ replies: 3, lines: 4 });
    const { replies: _r, lines: _l, ...tokens } = mine;
    expect(stage.usage).toMatchObject({ ...tokens, total: 330, replies: 3, models: { 'claude-sonnet-4-5': tokens }, costSource: 'pricing' });
    // 120 × $3 + 90 × $15 + 75 × $0.30 + 45 × $3.75, per million
    expect(stage.usage.cost).toBeCloseTo((120 * 3 + 90 * 15 + 75 * 0.3 + 45 * 3.75) / 1e6, 9);
    expect(stage.overBudget).toEqual({ tokens: 330, limit: 300 });
    expect(stage.agent.state).toBe('working');

    // The settle stage's figures were kept when it ended; the place sums both.
    const settle = t.record('unit--u').history[0];
    // (Its agent is ended once its commit lands: its last words may or may not have been written.)
    expect(settle.usage.replies).toBeGreaterThanOrEqual(1);
    expect(over.usage.stages.map((s: any) => [s.name, s.usage?.replies])).toEqual([['settle', settle.usage.replies], ['merge', 3]]);
    expect(over.usage).toMatchObject({ complete: true, replies: settle.usage.replies + 3, total: 110 * (settle.usage.replies + 3) });

    // Passes that read it over budget end nothing and start nothing: it waits for the operator.
    await t.quiet(3);
    expect((await t.view('unit/u')).stage).toMatchObject({ name: 'merge', state: 'over-budget', overBudget: { tokens: 330, limit: 300 }, agent: { state: 'working' } });
    expect(running(t.record('unit--u').stage.agent.pid)).toBe(true);
    // (The settle stage's agent was stopped when it delivered; the merge stage's never is.)
    const events = t.events('unit--u').map((e) => e.event);
    const merge = events.slice(events.lastIndexOf('stage-started'));
    expect(merge).toContain('mark-over-budget');
    expect(merge).not.toContain('agent-stopped');
    const human = await t.flume(['status', 'unit/u']);
    expect(human.stdout).toMatch(/over budget: 330 tokens of 300/);
    expect(human.stdout).toMatch(/cost: 330 tokens \(120 in, 90 out, 75 cache read, 45 cache write; claude-sonnet-4-5\), \$0\.0019/);
  });

  it("has its agent stopped when its kind says onBudget: 'stop', and says why", async ({ expect, onTestFinished }) => {
    const tight = { name: 'tight', onBudget: 'stop', limits: { tokens: 200 }, stages: [{ name: 'code', prompt: 'Build {name}.', deliverable: 'commit' }] };
    // Two replies, 220 tokens, over 200 only once the second is written.
    const t = repoFor({ onTestFinished }, { usage: USAGE, onPrompt: [{ actions: [{ say: 'Building.' }, { run: ['true'] }, { run: ['true'] }, { sleepMs: 60_000 }] }] }, { kinds: [tight] });
    const place = await t.launch('tight', 'b', 'Build it.');
    t.watch({}, { poll: '500ms' });
    const stopped = await t.until('tight/b', (p) => p?.stage?.overBudget?.stopped && p.stage.agent.state === 'exited' && p.stage, 'the agent to be stopped over budget');
    expect(stopped).toMatchObject({ state: 'waiting', overBudget: { tokens: 220, limit: 200, stopped: true }, usage: { total: 220, replies: 2, cost: null } });
    expect(stopped.usage.costNote).toContain('claude-sonnet-4-5');
    expect(stopped.needs).toMatch(/stopped: code used 220 tokens, over its budget of 200/);
    expect(running(place.stage.agent.pid)).toBe(false);
    expect(t.events('tight--b').filter((e) => e.event === 'agent-stopped')).toHaveLength(1);
  });
});
