/**
 * Waiting on the file system: resolves on the first change under any of the given paths (or their
 * nearest existing parent), or when the time runs out. flume reads on events, never on a fast poll.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

/** Waits until something under `paths` changes, at most `timeoutMs`. */
export function waitForChange(paths: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const watchers: FSWatcher[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
      resolve();
    };
    const timer = setTimeout(finish, Math.max(0, timeoutMs));
    for (const path of new Set(paths.map(nearestExisting))) {
      try {
        watchers.push(watch(path, { persistent: false }, finish));
      } catch {
        // a folder that vanished between the check and the watch: the timer still ends the wait
      }
    }
  });
}

function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

/**
 * Keeps one watcher per path in `paths`: closes those no longer wanted, opens the new ones, and
 * skips a path that is gone (the caller's slow poll covers it). Every watcher calls `poke`.
 */
export function rewatch(watchers: Map<string, FSWatcher>, paths: Set<string>, poke: () => void): void {
  for (const [path, watcher] of watchers) {
    if (!paths.has(path)) {
      watcher.close();
      watchers.delete(path);
    }
  }
  for (const path of paths) {
    if (watchers.has(path) || !existsSync(path)) continue;
    try {
      watchers.set(path, watch(path, { persistent: false }, poke));
    } catch {
      // gone between the check and the watch; the slow poll covers it
    }
  }
}
