/**
 * Waiting on the file system: resolves on the first change under any of the given paths (or their
 * nearest existing parent), or when the time runs out. flume reads on events, never on a fast poll.
 */
import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
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

/** A watcher of one path, and which file it watches (a path removed and made again is another). */
export interface Watched {
  watcher: FSWatcher;
  identity: string;
}

/**
 * Keeps one watcher per path in `paths`: closes those no longer wanted, opens the new ones, watches
 * again a path that now names another file (a folder removed and made again: a branch folder when
 * its last branch went and a new one came, a tmux socket's folder), and skips a path that is gone
 * (the caller's slow poll covers it). Every watcher calls `poke`.
 *
 * Returns how many watchers it opened. A change made to a newly watched path after the caller read it
 * and before its watcher opened wakes nothing: a caller that opened any reads once more.
 */
export function rewatch(watchers: Map<string, Watched>, paths: Set<string>, poke: (event?: string, filename?: string | null, path?: string) => void): number {
  let opened = 0;
  for (const [path, watched] of watchers) {
    if (!paths.has(path) || identityOf(path) !== watched.identity) {
      watched.watcher.close();
      watchers.delete(path);
    }
  }
  for (const path of paths) {
    const identity = identityOf(path);
    if (watchers.has(path) || !identity) continue;
    try {
      // A watcher whose file went away (removed, renamed; or an error) is dropped at once, and the
      // pass its end wakes watches afresh whatever stands at the path then: a folder made again may
      // even have the old one's inode.
      const drop = () => {
        watcher.close();
        if (watchers.get(path)?.watcher === watcher) watchers.delete(path);
      };
      const watcher = watch(path, { persistent: false }, (event, name) => {
        if (event === 'rename' && identityOf(path) !== identity) drop();
        poke(event, name, path);
      });
      watcher.on('error', () => {
        drop();
        poke(undefined, undefined, path);
      });
      watchers.set(path, { watcher, identity });
      opened++;
    } catch {
      // gone between the check and the watch; the slow poll covers it
    }
  }
  return opened;
}

/** Which file a path names now (device and inode), or undefined where there is none. */
function identityOf(path: string): string | undefined {
  try {
    const info = statSync(path);
    return `${info.dev}:${info.ino}:${info.birthtimeMs}`;
  } catch {
    return undefined;
  }
}
