/**
 * `flume status --watch` on a terminal: an interactive view, as claude-squad's. The places in a table
 * (↑/↓ or j/k move), the selected one's stage, needs, diff against its base and the tail of its
 * agent's pane below, and keys that act on it through the CLI's own engine calls (so it refuses as
 * the CLI does, with flume's code and fix on the status line): a attach, t tell, s stop (S even while
 * it works), r retry, g go on, n next (where a place waits at a gate), d drop, q or Ctrl-C quit. It
 * draws on the alternate screen, each line cut to the width, and redraws whole on a resize; a place
 * starting to wait (on the operator, at a gate or for its caller) rings the bell once.
 */
import type { CliContext } from '../command.js';
import { asFlumeError, cliLogger } from '../output.js';
import { awaitingWords, describePlace } from './place-words.js';
import { followStatus } from './status-follow.js';
import { fit, table, title } from './status-watch.js';
import type { Key, Terminal } from './terminal.js';
import { hereActions, type Detail, type PlaceActions, type ViewAction } from './view-actions.js';
import type { Repository } from '../../config/repository.js';
import { runAttached } from '../../support/exec.js';
import type { PlaceStatus, StatusReport } from '../../engine/status/status.js';
import { waitingTracker, type Waiting } from '../../engine/stage/waiting.js';

/** What the view is doing with the keys: moving, typing text for an action, or asking y/n. */
type Mode = { kind: 'list' } | { kind: 'text'; action: 'tell' | 'go-on' | 'next'; text: string } | { kind: 'confirm'; action: 'drop' | 'force-stop' };

/** Options of the view. `notify` is called for each new wait (besides the bell): a host's notifications hook in here. */
export interface ViewOptions {
  signal: AbortSignal;
  place?: string;
  pollMs?: number;
  notify?(waiting: Waiting): void;
  /** What the keys do to a place and what is read of it, made with the view's own context (default: this host's engine). */
  actions?(context: CliContext): PlaceActions;
}

/**
 * Runs the view on `terminal` until q, Ctrl-C or `signal`; the terminal is handed back whatever
 * happens. Answers 'gone' when the one place watched was tidied.
 */
export async function interactiveStatus(context: CliContext, terminal: Terminal, read: () => Promise<StatusReport>, options: ViewOptions): Promise<'aborted' | 'gone'> {
  const quit = new AbortController();
  options.signal.addEventListener('abort', () => quit.abort());
  // Plugins' warnings would write over the screen: they go to the status line.
  const view: CliContext = { ...context, logger: { ...cliLogger(context.io), warn: (message) => say(`warn: ${message}`) } };
  const repositories = new Map<string, Promise<Repository>>();
  const actions = options.actions?.(view) ?? hereActions(view, repositories);
  const waits = waitingTracker();
  const awaits = awaitingTracker();
  let report: StatusReport | undefined;
  let gone: string[] = [];
  let selected: string | undefined;
  let mode: Mode = { kind: 'list' };
  let message: string[] = [];
  let busy = false;
  let attached = false;
  let detail: { id: string; detail: Detail } | undefined;
  let detailRun = 0;
  let poke = () => {};
  let tailTimer: NodeJS.Timeout | undefined;
  // Once the view has ended, nothing it started may draw or look again: a detail read still under way
  // would otherwise write over the shell's screen and set a timer that keeps the process alive.
  let ended = false;

  function say(...lines: string[]): void {
    message = lines;
    draw();
  }

  function rows(): string[] {
    return report ? [...report.places.map((p) => p.id), ...gone] : [];
  }

  function current(): PlaceStatus | undefined {
    return report?.places.find((p) => p.id === selected);
  }

  function draw(): void {
    if (attached || ended) return;
    const width = terminal.columns();
    const height = terminal.rows();
    const lines = frame(width, height);
    // Line by line from the top, each cleared to its end, then everything below: no flicker, no frame left behind.
    terminal.write(`\x1b[H${lines.map((line) => `${line}\x1b[K`).join('\r\n')}\x1b[J`);
  }

  function frame(width: number, height: number): string[] {
    if (!report) return [fit('flume: reading…', width)];
    const keys = mode.kind === 'text' ? `${TEXT_ASKS[mode.action]} ${selected}: ${mode.text}▏` : mode.kind === 'confirm' ? `${mode.action === 'drop' ? 'drop' : 'stop, even while it works,'} ${selected}? y/n` : '↑↓ move  a attach  t tell  s stop  r retry  g go on  n next  d drop  q quit';
    const { lines: list, rows: ids } = table(report, { gone, width, mark: (id) => (id === selected ? '>' : ' ') });
    const status = message.flatMap((line) => wrap(line, width)).slice(0, 3);
    const head = [fit(title(report), width), ...list];
    const foot = [fit(keys, width), ...status];
    const room = height - head.length - foot.length - 1;
    // A list longer than the screen keeps the selected row in sight.
    if (room < 2 && list.length > 1) {
      const at = 1 + Math.max(0, ids.indexOf(selected ?? ''));
      const keep = Math.max(1, height - foot.length - 2);
      const from = Math.min(Math.max(1, at - Math.floor(keep / 2)), Math.max(1, list.length - keep));
      return [...[head[0], list[0], ...list.slice(from, from + keep - 1)].slice(0, height - foot.length), ...foot];
    }
    const below = room > 0 ? details(width, room) : [];
    return [...head, ...below, ...Array(Math.max(0, room + 1 - below.length)).fill(''), ...foot].slice(0, height);
  }

  function details(width: number, room: number): string[] {
    const place = current();
    if (!place) return selected ? [fit(`── ${selected}: gone (tidied) `.padEnd(width, '─'), width)] : [];
    const words = describePlace(place).split('\n').filter(Boolean).slice(1).map((line) => fit(line.trimStart(), width));
    const own = detail?.id === place.id ? detail.detail : undefined;
    const diff = own?.diff.length ? [fit(`diff against ${place.base.slice(0, 7)}:`, width), ...own.diff.map((line) => fit(line, width))] : [];
    const lines = [fit(`── ${place.id} `.padEnd(width, '─'), width), ...words, ...diff.slice(0, Math.max(0, Math.floor(room / 3)))];
    const left = room - lines.length - 1;
    if (own?.tail.length && left > 0) lines.push(fit(`── pane ${place.stage?.agent?.pane ?? ''} `.padEnd(width, '─'), width), ...own.tail.slice(-left).map((line) => fit(line, width)));
    return lines.slice(0, room);
  }

  async function refreshDetail(): Promise<void> {
    const place = current();
    const run = ++detailRun;
    if (!place || ended) return;
    const read = await actions.detail(place, terminal.columns()).catch(() => ({ diff: [], tail: [] }));
    if (run !== detailRun || ended) return;
    detail = { id: place.id, detail: read };
    draw();
    // A working agent's screen moves without a file of flume's changing: its tail is looked at again
    // while it works, and never while it idles (the view then sleeps).
    clearTimeout(tailTimer);
    const state = place.stage?.agent?.state;
    if (state === 'working' || state === 'starting') tailTimer = setTimeout(() => void refreshDetail(), 2000);
  }

  function move(by: number): void {
    const ids = rows();
    if (!ids.length) return;
    const at = Math.max(0, ids.indexOf(selected ?? ''));
    selected = ids[Math.min(ids.length - 1, Math.max(0, at + by))];
    message = [];
    draw();
    void refreshDetail();
  }

  async function run(action: ViewAction, text?: string): Promise<void> {
    const place = current();
    if (!place || busy) {
      if (!place) say(`${selected ?? 'nothing'} is gone: there is nothing to act on.`);
      return;
    }
    busy = true;
    say(`${action === 'force-stop' ? 'stop --force' : action} ${place.id}…`);
    try {
      say(await actions.act(place, action, text));
    } catch (error) {
      const failure = asFlumeError(error);
      say(`${failure.code} ${failure.message}`, ...(failure.fix ? [`fix: ${failure.fix}`] : []));
    } finally {
      busy = false;
      poke();
    }
  }

  async function attach(): Promise<void> {
    const place = current();
    if (!place) return;
    try {
      const command = await actions.attach(place);
      attached = true;
      terminal.suspend();
      terminal.write(`\x1b[H\x1b[2J`);
      await runAttached(command.file, command.args, { env: command.env });
      say(`back from ${place.id}'s pane`);
    } catch (error) {
      const failure = asFlumeError(error);
      say(`${failure.code} ${failure.message}`, ...(failure.fix ? [`fix: ${failure.fix}`] : []));
    } finally {
      if (attached) {
        attached = false;
        // A view ended (by a signal) while the pane was attached leaves the terminal as it is.
        if (!ended) terminal.resume();
        draw();
        poke();
      }
    }
  }

  function onKey(key: Key): void {
    if (attached) return;
    if (key.ctrl && key.name === 'c') return quit.abort();
    if (mode.kind === 'text') return typing(mode, key);
    if (mode.kind === 'confirm') {
      const action = mode.action;
      mode = { kind: 'list' };
      if (key.name === 'y') void run(action);
      else say('nothing done');
      return;
    }
    const name = key.name ?? key.sequence;
    if (name === 'q') quit.abort();
    else if (name === 'up' || name === 'k') move(-1);
    else if (name === 'down' || name === 'j') move(1);
    else if (busy) say('an action is under way; wait for its answer');
    else if (name === 'a' || name === 'return') void attach();
    else if (name === 't') (mode = { kind: 'text', action: 'tell', text: '' }), draw();
    else if (name === 'g') (mode = { kind: 'text', action: 'go-on', text: '' }), draw();
    else if (name === 'n') (mode = { kind: 'text', action: 'next', text: '' }), draw();
    else if (name === 's' && key.shift) (mode = { kind: 'confirm', action: 'force-stop' }), draw();
    else if (name === 's') void run('stop');
    else if (name === 'r') void run('retry');
    else if (name === 'd') (mode = { kind: 'confirm', action: 'drop' }), draw();
  }

  function typing(text: Extract<Mode, { kind: 'text' }>, key: Key): void {
    if (key.name === 'escape') mode = { kind: 'list' };
    else if (key.name === 'return' || key.name === 'enter') {
      mode = { kind: 'list' };
      if (text.action === 'tell' && !text.text.trim()) say('nothing told (the text was empty)');
      else void run(text.action, text.text);
    } else if (key.name === 'backspace') text.text = Array.from(text.text).slice(0, -1).join('');
    else if (key.sequence && !key.ctrl && !/[\u0000-\u001f\u007f]/.test(key.sequence)) text.text += key.sequence;
    draw();
  }

  terminal.start(onKey, () => {
    // The old frame was drawn for another size: clear it all and draw anew.
    terminal.write('\x1b[H\x1b[2J');
    draw();
  });
  try {
    draw();
    return await followStatus(read, { signal: quit.signal, pollMs: options.pollMs, place: options.place, onPoke: (wake) => (poke = wake) }, (followed) => {
      report = followed.report;
      gone = followed.gone;
      if (!selected || !rows().includes(selected)) selected = rows()[0];
      // Both trackers are asked every reading, so each knows what the last one showed.
      const fresh = [...waits.next(followed.report), ...awaits.next(followed.report)];
      if (fresh.length) {
        terminal.write('\x07');
        for (const waiting of fresh) options.notify?.(waiting);
      }
      draw();
      void refreshDetail();
    });
  } finally {
    ended = true;
    clearTimeout(tailTimer);
    terminal.stop();
  }
}

/** What the status line asks for while text is typed for an action. */
const TEXT_ASKS: Record<Extract<Mode, { kind: 'text' }>['action'], string> = {
  tell: 'tell',
  'go-on': 'go on, a note (Enter: none)',
  next: 'next, a note (Enter: none)',
};

/**
 * Tracks where places wait for their caller (at a gate, or a caller's kind between stages) as
 * `waitingTracker` tracks waits on the operator: `next(report)` answers those not there at the
 * previous reading, none at the first. A wait is new for each stage run that delivered; it is the
 * same wait whether status derives it from the delivery or the supervisor has recorded it.
 */
function awaitingTracker(): { next(report: StatusReport): Waiting[] } {
  let known: Set<string> | undefined;
  return {
    next(report) {
      const now = report.places.flatMap((place) => (place.awaiting ? [{ place, why: awaitingWords(place), key: `${place.id}\t${place.awaiting.after ?? ''}\t${place.stage?.startedAt ?? ''}\t${place.stage?.attempt ?? ''}` }] : []));
      const fresh = known ? now.filter((w) => !known!.has(w.key)) : [];
      known = new Set(now.map((w) => w.key));
      return fresh;
    },
  };
}

/** A message cut into lines of at most `width` at spaces (a word longer than the width is cut with …). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && Array.from(line).length + 1 + Array.from(word).length > width) {
      lines.push(line);
      line = '';
    }
    line = fit(line ? `${line} ${word}` : word, width);
  }
  if (line) lines.push(line);
  return lines;
}
