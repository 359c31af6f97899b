/**
 * `flume status --watch`: a live view of every place for a terminal without herdr. It redraws only
 * when what it shows changed, and is quiet otherwise; woken by file-system events (records, refs,
 * transcripts) with a slow poll behind them. On a TTY it redraws in place with plain ANSI (fine over
 * ssh); otherwise it prints a new block each time the view changes.
 */
import { existsSync, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Io } from './output.js';
import { rewatch } from '../engine/files.js';
import type { PlaceStatus, StatusReport } from '../engine/status.js';
import { hostStateDir } from '../state/host.js';

/** Runs the view until `signal` aborts. `read` takes one status reading. */
export async function watchStatus(io: Io, read: () => Promise<StatusReport>, options: { signal: AbortSignal; pollMs?: number }): Promise<void> {
  let shown = '';
  const watchers = new Map<string, FSWatcher>();
  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  options.signal.addEventListener('abort', poke);
  try {
    while (!options.signal.aborted) {
      const report = await read();
      const view = render(report);
      if (view !== shown) {
        io.stdout(io.isTTY ? `\x1b[H\x1b[2J${view}` : `${view}\n`);
        shown = view;
      }
      rewatch(watchers, pathsOf(report), poke);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, options.pollMs ?? 2000);
        wake = () => {
          clearTimeout(timer);
          setTimeout(done, 100);
        };
      });
      wake = undefined;
    }
  } finally {
    for (const watcher of watchers.values()) watcher.close();
  }
}

/** The view: one line per place with its kind, stage, agent, tasks and what it needs. */
export function render(report: StatusReport): string {
  const rows = report.places.map(row);
  const header = ['PLACE', 'STATE', 'STAGE', 'AGENT', 'TASKS', 'NOTE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd();
  const title = `flume: ${report.places.length} place${report.places.length === 1 ? '' : 's'}`;
  if (rows.length === 0) return `${title}\nno places\n`;
  const none = report.supervisor && !report.supervisor.running ? [`supervisor: none running; ${report.supervisor.note}`] : [];
  return [title, line(header), ...rows.map(line), ...none].join('\n') + '\n';
}

function row(p: PlaceStatus): string[] {
  const s = p.stage;
  const stage = s ? `${s.index + 1}/${s.of} ${s.name} ${s.state}` : 'not started';
  const agent = s?.agent ? s.agent.state : '-';
  const tasks = s?.progress ? `${s.progress.done} of ${s.progress.total}` : '';
  // A deliverable that cannot be read is why the stage cannot end: it comes before the agent's words.
  const note = s?.deliverableProblem ? oneLine(s.deliverableProblem) : s?.needs ? `needs: ${oneLine(s.needs)}` : s?.overBudget ? `over budget: ${s.overBudget.tokens} of ${s.overBudget.limit} tokens` : s?.stuckSince ? `stuck since ${s.stuckSince}` : p.kept ? `kept: ${oneLine(p.kept.reason)}` : p.ready.state === 'failed' ? `ready failed: ${p.ready.failed?.step}` : (p.problems[0] ?? '');
  return [p.id, p.state, stage, agent, tasks, note];
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}…` : flat;
}

function pathsOf(report: StatusReport): Set<string> {
  const paths = new Set<string>([hostStateDir()]);
  for (const p of report.places) {
    const common = join(p.repo, '.git');
    if (existsSync(join(common, 'flume', 'places'))) paths.add(join(common, 'flume', 'places'));
    if (existsSync(join(common, 'refs', 'heads', p.kind))) paths.add(join(common, 'refs', 'heads', p.kind));
    if (existsSync(p.path)) paths.add(p.path);
    const transcript = p.stage?.agent?.transcript;
    if (transcript && existsSync(dirname(transcript))) paths.add(dirname(transcript));
  }
  return paths;
}
