import { describe, expect, it } from 'vitest';
import { interactiveStatus } from '../../../core/cli/view/status-view.js';
import type { Key, Terminal } from '../../../core/cli/view/terminal.js';
import type { Detail, PlaceActions } from '../../../core/cli/view/view-actions.js';
import type { CliContext } from '../../../core/cli/command.js';
import type { PlaceStatus, StatusReport } from '../../../core/engine/status/status.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A place whose agent works: the view looks at its pane's tail again every 2 s while it does. */
function working(): PlaceStatus {
  return {
    id: 'fix/keys', kind: 'fix', name: 'keys', repo: '/r', path: '/r/places/fix--keys', branch: 'fix/keys', target: 'main', base: 'a'.repeat(40),
    brief: 'b', createdAt: '2026-12-01T00:00:00.000Z', state: 'active', worktree: { present: true, locked: true, head: 'a'.repeat(40) },
    ready: { state: 'none', at: '2026-12-01T00:00:00.000Z' }, stages: ['code', 'review'],
    stage: { name: 'code', index: 0, of: 2, state: 'running', startedAt: '2026-12-01T00:00:00.000Z', attempt: 1, delivery: 'taken', deliverable: 'commit', agent: { state: 'working' } },
    landing: { state: 'not-landed', missing: 1 }, problems: [],
  } as unknown as PlaceStatus;
}

/** A terminal that records what is written after it was handed back, and lets the test press keys. */
function fakeTerminal() {
  let onKey: ((key: Key) => void) | undefined;
  let stopped = false;
  const afterStop: string[] = [];
  const terminal: Terminal = {
    columns: () => 100,
    rows: () => 24,
    write: (text) => void (stopped && afterStop.push(text)),
    start: (keys) => void (onKey = keys),
    suspend() {},
    resume() {},
    stop: () => void (stopped = true),
  };
  return { terminal, afterStop, press: (key: Key) => onKey?.(key) };
}

describe('the interactive view ending', () => {
  it('ends on Ctrl-C for good, even with a look at a working pane under way: nothing drawn after, nothing looked at again', async () => {
    const report: StatusReport = { version: 1, generatedAt: '', repositories: [], places: [working()] } as unknown as StatusReport;
    const { terminal, afterStop, press } = fakeTerminal();
    const looks: Array<(detail: Detail) => void> = [];
    const actions: PlaceActions = {
      act: async () => '',
      attach: async () => ({ file: 'true', args: [] }) as never,
      detail: () => new Promise<Detail>((done) => looks.push(done)),
    };
    const context = { io: { stdout() {}, stderr() {}, isTTY: true } } as unknown as CliContext;
    const view = interactiveStatus(context, terminal, async () => report, { signal: new AbortController().signal, actions: () => actions, pollMs: 60_000 });
    // The first look at the pane is under way (a slow read, as on a loaded machine) when Ctrl-C comes.
    while (looks.length === 0) await sleep(10);
    press({ name: 'c', sequence: '\x03', ctrl: true, shift: false });
    expect(await view).toBe('aborted');
    looks[0]!({ diff: [], tail: ['Busy.'] });
    // The view would look again 2 s after a look at a working agent; wait past that.
    await sleep(2500);
    expect(looks).toHaveLength(1);
    expect(afterStop).toEqual([]);
  }, 10_000);
});
