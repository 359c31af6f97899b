import { describe, expect, it } from 'vitest';
import { notePanes, paneSweep, sweepPanes } from '../../../core/engine/supervisor/panes.js';
import type { PaneState } from '../../../core/api/pane-host.js';
import type { PlaceRecord } from '../../../core/api/record.js';
import { stubHost } from '../../helpers/stub-host.js';

/** A host holding `panes`; what it closes is recorded and gone from its next look. */
function host(key: string, panes: Record<string, PaneState>) {
  const closed: string[] = [];
  const held = new Map(Object.entries(panes));
  return {
    closed,
    host: stubHost({
      key,
      panes: async () => new Map(held),
      close: async (pane: string) => {
        closed.push(pane);
        held.delete(pane);
      },
    }),
  };
}

/** A record whose current stage's agent runs in `pane` with `identity`. */
const placeIn = (pane: string, identity?: string, hostKey = 'tmux') => ({ stage: { agent: { driver: 'claude-code', sessionId: 's', host: hostKey, cwd: '/p', startedAt: '', pane, ...(identity ? { paneIdentity: identity } : {}) } } }) as unknown as PlaceRecord;

describe('the sweep of dead panes', () => {
  it('closes a dead pane no place names once two full looks in a row saw it so; keeps live panes, named ones and ones with no identity', async () => {
    const tmux = host('tmux', {
      '%1': { alive: false, identity: 'orphan' },
      '%2': { alive: false, identity: 'exited-but-named' },
      '%3': { alive: true, identity: 'working' },
      '%4': { alive: false },
      '%5': { alive: false, identity: 'named-through-a-wrapping-host' },
    });
    const sweep = paneSweep();
    const look = async () => {
      notePanes(sweep, [placeIn('%2', 'exited-but-named'), placeIn('%3', 'working'), placeIn('%5', 'named-through-a-wrapping-host', 'container')]);
      return sweepPanes(sweep, [tmux.host], () => undefined);
    };
    expect(await look()).toBe(0);
    expect(tmux.closed).toEqual([]);
    expect(await look()).toBe(1);
    expect(tmux.closed).toEqual(['%1']);
    expect(await look()).toBe(0);
  });

  it('closes nothing whose place came to name it between the two looks', async () => {
    const tmux = host('tmux', { '%1': { alive: false, identity: 'a' }, '%2': { alive: false, identity: 'b' } });
    const sweep = paneSweep();
    await sweepPanes(sweep, [tmux.host], () => undefined);
    notePanes(sweep, [placeIn('%1', 'a')]);
    expect(await sweepPanes(sweep, [tmux.host], () => undefined)).toBe(1);
    expect(tmux.closed).toEqual(['%2']);
  });
});
