/**
 * Sweeping the dead panes no place needs. A pane host keeps a pane whose program ended (tmux:
 * `remain-on-exit`), so that a stage whose agent exited still shows how it ended. One no place's
 * current stage names is of no use to anyone: an agent ended through its session file (a start cut
 * before its pane was noted), or one whose stage moved on without closing it. The supervisor closes
 * such panes at its slow poll.
 */
import type { PaneHost } from '../../api/pane-host.js';
import type { PlaceRecord } from '../../api/record.js';

/** What the sweep carries from one full look to the next. */
export interface PaneSweep {
  /** The pane identities the current stages of every place read in this look name (marks no other pane carries). */
  inUse: Set<string>;
  /** The dead, unneeded panes the last look saw, closed if this one sees them so again. */
  candidates: Set<string>;
}

export function paneSweep(): PaneSweep {
  return { inUse: new Set(), candidates: new Set() };
}

/** Notes the panes the places' current stages name. */
export function notePanes(sweep: PaneSweep, records: PlaceRecord[]): void {
  for (const record of records) {
    const handle = record.stage?.agent;
    // By identity alone: a host that wraps another (a container's) names the pane its inner host holds.
    if (handle?.paneIdentity) sweep.inUse.add(handle.paneIdentity);
    // A pane known by id alone (a host that gives no identity) keeps every pane of that id.
    else if (handle?.pane) sweep.inUse.add(`id\0${handle.pane}`);
  }
}

/**
 * Closes each dead pane of the hosts that no place needs, once two full looks in a row saw it so (a
 * start under way notes its pane a moment after opening it). A pane with no identity of flume's is
 * not flume's to judge, and is left. Returns how many were closed; starts the next look afresh.
 */
export async function sweepPanes(sweep: PaneSweep, hosts: PaneHost[], log: (line: string) => void): Promise<number> {
  const candidates = new Set<string>();
  let closed = 0;
  for (const host of hosts) {
    const panes = await host.panes?.().catch(() => undefined);
    if (!panes) continue;
    for (const [pane, state] of panes) {
      if (state.alive || state.identity === undefined) continue;
      if (sweep.inUse.has(state.identity) || sweep.inUse.has(`id\0${pane}`)) continue;
      const key = `${host.key}\0${pane}\0${state.identity}`;
      if (!sweep.candidates.has(key)) {
        candidates.add(key);
        continue;
      }
      try {
        await host.close(pane);
        closed++;
      } catch (error) {
        log(`${host.key} ${pane}: a dead pane no place needs could not be closed: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }
  sweep.candidates = candidates;
  sweep.inUse = new Set();
  return closed;
}
