/**
 * `flume status --watch` when it cannot be interactive (stdout or stdin not a terminal): a new block
 * each time the view changes, and quiet otherwise. The loop is status-follow.ts; the interactive view
 * on a terminal is status-view.ts. Both draw the same table (`table`).
 */
import type { Io } from '../output.js';
import { followStatus } from './status-follow.js';
import type { PlaceStatus, StatusReport } from '../../engine/status/status.js';

/**
 * Runs the plain view until `signal` aborts, or until the one place watched (`place`) is gone: then it
 * prints `<place>: gone (tidied)` and returns.
 */
export async function watchStatus(io: Io, read: () => Promise<StatusReport>, options: { signal: AbortSignal; pollMs?: number; place?: string }): Promise<void> {
  let shown = '';
  const ended = await followStatus(read, options, ({ report, gone }) => {
    const view = render(report, { gone });
    if (view === shown) return;
    io.stdout(`${view}\n`);
    shown = view;
  });
  if (ended === 'gone') io.stdout(`${options.place}: gone (tidied)\n`);
}

/** The view in plain lines: a title, then the table of places (and those gone since the view began). */
export function render(report: StatusReport, options: { gone?: string[]; width?: number } = {}): string {
  return [title(report), ...table(report, { gone: options.gone ?? [], width: options.width }).lines].join('\n') + '\n';
}

/** `flume: N places`. */
export function title(report: StatusReport): string {
  return `flume: ${report.places.length} place${report.places.length === 1 ? '' : 's'}`;
}

/**
 * The table: a header, one row per place, then one per place gone, then a supervisor line when none
 * runs; with `width`, each line cut to it with `…` (a row that wraps would break the table). `rows`
 * maps each place's id to its line's index.
 */
export function table(report: StatusReport, options: { gone: string[]; width?: number; mark?: (id: string) => string }): { lines: string[]; rows: string[] } {
  const cells = [...report.places.map(row), ...options.gone.map((id) => [id, 'gone', 'tidied', '-', '', ''])];
  if (cells.length === 0) return { lines: ['no places'], rows: [] };
  const header = ['PLACE', 'STATE', 'STAGE', 'AGENT', 'TASKS', 'NOTE'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const mark = options.mark ?? (() => '');
  const markWidth = options.mark ? 2 : 0;
  const line = (prefix: string, r: string[]) => fit(prefix + r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd(), options.width);
  const none = report.supervisor && !report.supervisor.running ? [fit(`supervisor: none running; ${report.supervisor.note}`, options.width)] : [];
  return {
    lines: [line(' '.repeat(markWidth), header), ...cells.map((r) => line(mark(r[0]).padEnd(markWidth), r)), ...none],
    rows: cells.map((r) => r[0]),
  };
}

/** The line cut to `width` characters, its last one `…` when cut; tabs read as spaces. */
export function fit(text: string, width?: number): string {
  const flat = text.replace(/\t/g, '  ');
  if (width === undefined) return flat;
  const chars = Array.from(flat);
  return chars.length <= width ? flat : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

function row(p: PlaceStatus): string[] {
  const s = p.stage;
  const stage = s ? `${s.index + 1}/${s.of} ${s.name} ${s.state}` : 'not started';
  const agent = s?.agent ? s.agent.state : '-';
  const tasks = s?.progress ? `${s.progress.done} of ${s.progress.total}` : '';
  // A deliverable that cannot be read is why the stage cannot end: it comes before the agent's words.
  const note = s?.deliverableProblem ? oneLine(s.deliverableProblem) : s?.needs ? `needs: ${oneLine(s.needs)}` : s?.overBudget ? `over budget: ${s.overBudget.tokens} of ${s.overBudget.limit} tokens` : s?.stuckSince ? `stuck since ${s.stuckSince}` : p.awaiting ? awaitingNote(p.awaiting) : p.kept ? `kept: ${oneLine(p.kept.reason)}` : p.ready.state === 'failed' ? `ready failed: ${p.ready.failed?.step}` : (p.problems[0] ?? '');
  return [p.id, p.state, stage, agent, tasks, note];
}

/** Where a place waits for its caller, in a few words: the line below the table (awaitingWords) says how to go on. */
function awaitingNote(awaiting: NonNullable<PlaceStatus['awaiting']>): string {
  if (awaiting.gate) return `at the gate after ${awaiting.after}`;
  return awaiting.after ? `awaits its caller after ${awaiting.after}` : 'awaits its caller';
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}…` : flat;
}
