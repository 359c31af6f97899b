/**
 * What the herdr host knows of a pane's program from the process table. herdr runs on this host
 * (its socket is local), so the pid `pane process-info` gives is a pid here.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processExists } from '../../core/index.js';

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

/** Sends a signal, ignoring a process already gone. */
export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Waits until the process is gone; false when it still runs after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (processRunning(pid)) {
    if (Date.now() >= until) return false;
    await sleep(50);
  }
  return true;
}

