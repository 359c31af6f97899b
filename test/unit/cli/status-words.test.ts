import { describe, it, expect } from 'vitest';
import { describePlace } from '../../../core/cli/view/place-words.js';
import { render } from '../../../core/cli/view/status-watch.js';
import type { PlaceStatus } from '../../../core/engine/status/status.js';

const problem = 'verify.md has no verdict flume can read: its last verdict line "Verdict: passed" says neither pass nor fix';

function place(over: Partial<PlaceStatus> = {}): PlaceStatus {
  return {
    id: 'change/x', kind: 'change', name: 'x', repo: '/r', path: '/r/places/change--x', branch: 'change/x', target: 'main', base: 'a'.repeat(40),
    brief: 'b', createdAt: '2026-11-30T00:00:00.000Z', state: 'active', worktree: { present: true, locked: true, head: 'b'.repeat(40) },
    ready: { state: 'none', at: '2026-11-30T00:00:00.000Z' }, stages: ['construct', 'code', 'verify', 'submission'],
    stage: { name: 'verify', index: 2, of: 4, state: 'waiting', startedAt: '2026-11-30T00:00:00.000Z', attempt: 1, delivery: 'taken', deliverable: 'report', needs: 'Verified.', deliverableProblem: problem },
    landing: { state: 'not-landed', missing: 1 }, problems: [], ...over,
  };
}

describe('status in words', () => {
  it('shows why a deliverable that stands there does not end the stage, beside what the agent said', () => {
    const text = describePlace(place());
    expect(text).toContain(`  deliverable: ${problem}\n`);
    expect(text).toContain('  needs: Verified.\n');
    // The live view puts the deliverable's problem first: it is why the stage cannot end.
    expect(render({ version: 1, generatedAt: '', repositories: [], places: [place()] })).toContain('verify.md has no verdict flume can read');
  });

  it('says 1 patch, 2 patches', () => {
    expect(describePlace(place())).toContain('landing: not-landed (1 patch not on main)');
    expect(describePlace(place({ landing: { state: 'not-landed', missing: 2 } }))).toContain('(2 patches not on main)');
  });

  it('shows what a stage and its place cost, and a stage over budget', () => {
    const counts = { input: 1200, output: 3400, cacheRead: 1_500_000, cacheWrite: 25_000 };
    const usage = { ...counts, total: 1_529_600, replies: 12, models: { 'claude-sonnet-4-5': counts }, cost: 0.56, costSource: 'pricing' as const };
    const unknown = { ...usage, cost: null, costSource: undefined, costNote: 'no price for claude-sonnet-4-5' };
    const stage = { ...place().stage!, state: 'over-budget' as const, needs: undefined, deliverableProblem: undefined, usage, overBudget: { tokens: 1_529_600, limit: 1_000_000 } };
    const text = describePlace(place({ stage, usage: { ...unknown, complete: false, stages: [{ name: 'code', startedAt: '', usage: null }, { name: 'verify', startedAt: '', usage }] } }));
    expect(text).toContain('  over budget: 1529600 tokens of 1000000 (limits.tokens); it waits for you');
    expect(text).toContain('  cost: 1.5M tokens (1.2k in, 3.4k out, 1.5M cache read, 25k cache write; claude-sonnet-4-5), $0.5600\n');
    expect(text).toContain('  place cost: 1.5M tokens (1.2k in, 3.4k out, 1.5M cache read, 25k cache write; claude-sonnet-4-5), cost unknown over 2 stage runs (some unknown)\n');
    expect(render({ version: 1, generatedAt: '', repositories: [], places: [place({ stage })] })).toContain('over budget: 1529600 of 1000000 tokens');
  });
});
