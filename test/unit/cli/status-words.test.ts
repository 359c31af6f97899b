import { describe, it, expect } from 'vitest';
import { describePlace } from '../../../core/cli/status.js';
import { render } from '../../../core/cli/status-watch.js';
import type { PlaceStatus } from '../../../core/engine/status.js';

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
});
