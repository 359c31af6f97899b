/**
 * What flume asks of the process table, in one place: whether a pid exists, whether it still runs
 * (a zombie waiting to be reaped does not), a signal that does not care if the process is gone, and
 * a wait until it is. The drivers, the pane hosts and the lock all use these; none keeps its own.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** True while a process of that pid exists (one owned by another user counts: EPERM). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function processRunning(pid: number): boolean {
  if (!processExists(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    // No /proc (macOS): existence is all there is to read.
    return true;
  }
}

/**
 * When the process of `pid` started, as the kernel counts it (clock ticks since boot, the 22nd field
 * of `/proc/<pid>/stat`, which Claude Code records as `procStart`); undefined when there is no such
 * process, or no /proc (macOS). A pid alone names a process only while it runs: once it ends, the
 * kernel gives its pid to a later process when its count wraps (at 32768 on many machines, minutes
 * on a busy one). A pid kept for later is kept with its start, and checked with {@link sameProcess}.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let procTable: boolean | undefined;

/**
 * True while the process of `pid` runs and is the one that started at `start` (see processStart),
 * not a later process given its pid; any running process of that pid when `start` is unknown. A
 * zombie has ended, whoever is yet to reap it (a parent that never waits, a slow tmux): it holds no
 * lock and is no agent at work. Where there is no /proc to ask (macOS), existence is all there is.
 */
export function sameProcess(pid: number, start: string | undefined): boolean {
  if (!processExists(pid)) return false;
  if (!(procTable ??= existsSync('/proc/self/stat'))) return true;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // Gone between the two looks.
    return false;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] !== 'Z' && (start === undefined || fields[19] === start);
}

/** Sends a signal, ignoring a process already gone. */
export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Waits until the process no longer runs; false when it still runs after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (processRunning(pid)) {
    if (Date.now() >= until) return false;
    await sleep(50);
  }
  return true;
}

/** Every descendant of `pid` now, children before theirs (Linux `/proc`; [] elsewhere). */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}
