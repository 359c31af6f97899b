/**
 * flume's rows in herdr's sidebar. herdr renders an Agent row from tokens a plugin reports on the
 * agent's pane (`herdr pane report-metadata <pane> --source … --token NAME=VALUE`), shown where the
 * user's `ui.sidebar.agents.rows` names `$NAME` (README.md has a layout). Each place whose agent runs
 * in a herdr pane gets its kind, stage i/n, stage state (or that it waits at a gate or for its
 * caller), agent state, a change's tasks ticked, and what it needs, since when it is stuck, or how
 * it goes on from a gate. Places with no herdr pane have no Agent row to carry them.
 *
 * Tokens are normalised as herdr stores them (whitespace collapsed, control characters dropped, 80
 * characters at most), so a row is re-reported only when what herdr would show changes.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { followStreams, type PlaceStatus, type StatusReport } from '../../core/index.js';
import { herdrCli, type Herdr } from './herdr.js';

/** Every token flume reports, in the order a layout would show them. */
export const SIDEBAR_TOKENS = ['flume_place', 'flume_kind', 'flume_stage', 'flume_state', 'flume_agent', 'flume_tasks', 'flume_needs'] as const;

/** The metadata source flume reports under (herdr: letters, digits, `:._-`, at most 80). */
export const SIDEBAR_SOURCE = 'flume:sidebar';

/** One place's row: the pane it is reported on and the tokens it shows. */
export interface SidebarRow {
  pane: string;
  place: string;
  /** The flume host the place is on, when it is another host's (a reading of `status --all-hosts`): its pane is on that host's herdr. */
  host?: string;
  tokens: Partial<Record<(typeof SIDEBAR_TOKENS)[number], string>>;
}

/** What one refresh reported on a pane. */
export interface SidebarReport {
  pane: string;
  place?: string;
  host?: string;
  set: Record<string, string>;
  cleared: string[];
  ok: boolean;
}

/**
 * The rows of a status report: one per place whose current agent runs in a herdr pane. In a reading
 * of every host (`status --all-hosts`), another host's place is named `HOST:kind/name` and carries
 * its host.
 */
export function sidebarRows(report: StatusReport): SidebarRow[] {
  const rows: SidebarRow[] = [];
  for (const listed of report.places) {
    const host = (listed as PlaceStatus & { host?: string }).host;
    const elsewhere = host !== undefined && host !== THIS_HOST ? host : undefined;
    const place = elsewhere ? { ...listed, id: `${elsewhere}:${listed.id}` } : listed;
    const agent = place.stage?.agent;
    if (agent?.host === 'herdr' && agent.pane) rows.push({ pane: agent.pane, place: place.id, ...(elsewhere ? { host: elsewhere } : {}), tokens: rowTokens(place) });
  }
  return rows;
}

/** How a merged reading names this host. */
const THIS_HOST = 'local';

/** What a refresher remembers a row by: its pane, and its host when another's (two hosts' herdr may number panes alike). */
function rowKey(row: { pane: string; host?: string }): string {
  return row.host ? `${row.host}\t${row.pane}` : row.pane;
}

/** A place's tokens, each normalised as herdr would store it; absent ones are left out. */
export function rowTokens(place: PlaceStatus): SidebarRow['tokens'] {
  const stage = place.stage;
  const raw: Record<string, string | undefined> = {
    flume_place: place.id,
    flume_kind: place.kind,
    flume_stage: stage ? `${stage.name} ${stage.index + 1}/${stage.of}` : undefined,
    flume_state: place.state !== 'active' ? place.state : place.awaiting ? (place.awaiting.gate ? 'at-gate' : 'awaits-caller') : stage?.state,
    flume_agent: stage?.agent?.state,
    flume_tasks: stage?.progress ? `${stage.progress.done} of ${stage.progress.total}` : undefined,
    flume_needs: stage?.needs ? `needs: ${stage.needs}` : stage?.overBudget ? `over budget: ${stage.overBudget.tokens} of ${stage.overBudget.limit} tokens` : stage?.stuckSince ? `stuck since ${clock(stage.stuckSince)}` : stage?.state === 'never-started' ? 'prompt never taken' : place.awaiting ? awaitingNeeds(place.awaiting) : undefined,
  };
  const tokens: SidebarRow['tokens'] = {};
  for (const name of SIDEBAR_TOKENS) {
    const value = normalise(raw[name]);
    if (value) tokens[name] = value;
  }
  return tokens;
}

/** What a refresher remembers of each pane it reported on: the place and the tokens it shows (and, for another host's, the pane and host). */
export type SidebarMemory = Record<string, { place: string; tokens: Record<string, string>; pane?: string; host?: string }>;

/** How long a reported token lives in herdr when nothing reports it again: an event-driven refresh's TTL. */
export const SIDEBAR_TTL_MS = 30 * 60_000;

/**
 * Reports rows to herdr, remembering what each pane shows, so only a changed row is sent again. With
 * `ttlMs` every row is sent each time with `--ttl-ms` (herdr expires what no refresh renews), which is
 * how a one-shot refresh per herdr event keeps rows alive; `memory` carries what an earlier process
 * showed, so a place that left is still cleared.
 */
export function sidebarRefresher(options: { herdr?: Herdr; source?: string; ttlMs?: number; memory?: SidebarMemory } = {}) {
  const herdr = options.herdr ?? herdrCli();
  const source = options.source ?? SIDEBAR_SOURCE;
  const shown = new Map<string, SidebarMemory[string]>(Object.entries(options.memory ?? {}));
  let lastSeq = 0;

  async function report(pane: string, place: string | undefined, set: Record<string, string>, cleared: string[], host?: string): Promise<SidebarReport> {
    // A sequence number makes herdr drop a report that arrives after a newer one.
    lastSeq = Math.max(Date.now(), lastSeq + 1);
    // Another host's pane is on that host's herdr: reached as herdr's saved machine of the same name.
    const args = [...(host ? ['--machine', host] : []), 'pane', 'report-metadata', pane, '--source', source, '--seq', String(lastSeq), ...(options.ttlMs && Object.keys(set).length ? ['--ttl-ms', String(options.ttlMs)] : [])];
    for (const [name, value] of Object.entries(set)) args.push('--token', `${name}=${value}`);
    for (const name of cleared) args.push('--clear-token', name);
    const reply = await herdr(args);
    return { pane, ...(place ? { place } : {}), ...(host ? { host } : {}), set, cleared, ok: reply.ok || reply.code === 'pane_not_found' };
  }

  return {
    /** Brings herdr's rows in line with the report; returns the panes it reported on. */
    async refresh(status: StatusReport): Promise<SidebarReport[]> {
      const rows = sidebarRows(status);
      const done: SidebarReport[] = [];
      for (const row of rows) {
        const before = shown.get(rowKey(row))?.tokens ?? {};
        const tokens = row.tokens as Record<string, string>;
        const set = options.ttlMs ? { ...tokens } : Object.fromEntries(Object.entries(tokens).filter(([name, value]) => before[name] !== value));
        const cleared = Object.keys(before).filter((name) => !(name in tokens));
        if (Object.keys(set).length === 0 && cleared.length === 0) continue;
        const result = await report(row.pane, row.place, set, cleared, row.host);
        // A failed report is forgotten, so the next refresh sends it again.
        if (result.ok) shown.set(rowKey(row), { place: row.place, tokens, ...(row.host ? { pane: row.pane, host: row.host } : {}) });
        done.push(result);
      }
      const live = new Set(rows.map(rowKey));
      for (const [key, row] of shown) {
        if (live.has(key)) continue;
        // The place moved on (its agent ended, or it left status): clear what its pane showed.
        const result = await report(row.pane ?? key, row.place, {}, Object.keys(row.tokens), row.host);
        if (result.ok) shown.delete(key);
        done.push(result);
      }
      return done;
    },
    /** What the panes show now, for the next process's `memory`. */
    memory(): SidebarMemory {
      return Object.fromEntries(shown);
    },
  };
}

/** States in which a place waits on the operator (an agent asking, a stage stopped short, stuck). */
const WAITING = ['waiting', 'stuck', 'never-started'];

/**
 * The rows that started to wait since `before` (a refresher's memory): each is worth one notification,
 * and no more until it works again and waits anew.
 */
export function startedWaiting(before: SidebarMemory, rows: SidebarRow[]): SidebarRow[] {
  const was = new Map(Object.values(before).map((row) => [row.place, row.tokens.flume_state]));
  return rows.filter((row) => WAITING.includes(row.tokens.flume_state ?? '') && row.tokens.flume_state !== was.get(row.place));
}

/**
 * The places that came to wait for their caller (at a gate, or a caller's kind between stages) since
 * the waits in `before` (what an earlier call answered as `now`): each is worth one notification.
 * Their agent has ended, so they have no row: they are read from the report. A wait is new for each
 * stage run that delivered.
 */
export function startedAwaiting(before: string[], report: StatusReport): { now: string[]; fresh: PlaceStatus[] } {
  const known = new Set(before);
  const awaiting = report.places.filter((place) => place.awaiting).map((place) => ({ place, key: `${place.id}\t${place.awaiting!.after ?? ''}\t${place.stage?.startedAt ?? ''}\t${place.stage?.attempt ?? ''}` }));
  return { now: awaiting.map((a) => a.key), fresh: awaiting.filter((a) => !known.has(a.key)).map((a) => a.place) };
}

/** How a place that waits for its caller goes on, as a notification says it. */
export function awaitingNeeds(awaiting: NonNullable<PlaceStatus['awaiting']>): string {
  if (awaiting.gate) return `at the gate after ${awaiting.after}: next goes on`;
  return awaiting.after ? `${awaiting.after} delivered: its caller goes on` : 'its caller starts a stage';
}

/** The refresher's type. */
export type SidebarRefresher = ReturnType<typeof sidebarRefresher>;

/** The slow poll behind the event streams a sidebar loop follows. */
export const SIDEBAR_POLL_MS = 30_000;

/**
 * Refreshes the sidebar from a fresh status report each time a repository of the last report
 * writes its event stream or place records, and every `intervalMs` behind those, until aborted, or
 * until `running` (asked before each refresh) says herdr's server is gone. A failed reading is
 * handed to `onError` and tried again.
 */
export async function watchSidebar(options: {
  readStatus: () => Promise<StatusReport>;
  refresher?: SidebarRefresher;
  intervalMs?: number;
  signal?: AbortSignal;
  running?: () => Promise<boolean>;
  onError?: (error: unknown) => void;
}): Promise<void> {
  const refresher = options.refresher ?? sidebarRefresher();
  const streams = new Map<string, () => void>();
  let changed = false;
  let wake = () => {};
  const poke = () => {
    changed = true;
    wake();
  };
  try {
    while (!options.signal?.aborted) {
      if (options.running && !(await options.running())) return;
      changed = false;
      try {
        const report = await options.readStatus();
        follow(streams, report, poke);
        await refresher.refresh(report);
      } catch (error) {
        options.onError?.(error);
      }
      if (options.signal?.aborted) return;
      if (changed) continue;
      await new Promise<void>((done) => {
        const finish = () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', finish);
          wake = () => {};
          done();
        };
        const timer = setTimeout(finish, options.intervalMs ?? SIDEBAR_POLL_MS);
        // A burst of writes (a record and its event line) settles into one reading.
        wake = () => setTimeout(finish, 100);
        options.signal?.addEventListener('abort', finish, { once: true });
      });
    }
  } finally {
    for (const stop of streams.values()) stop();
  }
}

/** Follows the event stream of each repository of the report that has one, and no other. */
function follow(streams: Map<string, () => void>, report: StatusReport, poke: () => void): void {
  followStreams(streams, [...report.repositories.map((r) => r.root), ...report.places.map((p) => p.repo)], poke);
}


/** A token value as herdr stores it: whitespace runs made one space, control characters dropped, 80 at most. */
export function normalise(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.from(value.replace(/\s+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim()).slice(0, 80).join('').trim();
  return text === '' ? undefined : text;
}

/** A time of day, HH:MM, local to this host. */
function clock(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}
