/**
 * Waits, not clocks. A test waits for the event it is about (a record written, a line in a log or a
 * transcript, a screen showing it, a process gone); the time limit of a wait is a hang guard far above
 * how long the event takes on a loaded machine, never the assertion. A test that means to bound a time
 * or count what happens within one belongs in `bench/`, or asserts the rule itself (a count of passes,
 * not of seconds).
 *
 * - `waitFor(probe, what)`: polls `probe` until it returns something truthy, and returns that.
 * - `waitUntil(check, what)`: the same for a check that returns a boolean.
 * - `waitForFile(path, test)`: woken by the file's folder's events (and a slow poll behind them) until
 *   the file's text passes `test`.
 * - `HANG_MS`: the guard every wait uses unless it names a longer one.
 */
import { readFileSync, statSync, watch } from 'node:fs';
import { dirname } from 'node:path';

/**
 * How long a wait goes on before it is called a hang: under the test's own timeout (120 s for the
 * suite, 90 s for some tests), so a hang names what it waited for rather than timing the test out.
 */
export const HANG_MS = 60_000;

/** `FLUME_TEST_POLL=fixed` polls every 50 ms whatever a probe costs (bench/test-suite.bench.mjs compares the two). */
const FIXED_POLL = process.env.FLUME_TEST_POLL === 'fixed';

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Polls until `probe` returns a truthy value and returns it; throws only when the wait hangs
 * (`hangMs`, at least `HANG_MS`: a shorter guard would be an assertion on time). Between two probes it
 * waits 50 ms, or as long as the last probe took when that was longer (up to a second): a probe that
 * runs `flume status` costs half a second of CPU, and back to back such probes kept a core busy.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, what: string, hangMs = HANG_MS): Promise<NonNullable<T>> {
  const guard = Math.max(hangMs, HANG_MS);
  const until = Date.now() + guard;
  for (;;) {
    const started = Date.now();
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`no sign after ${Math.round(guard / 1000)} s (a hang) of ${what}`);
    await sleep(FIXED_POLL ? 50 : Math.min(1000, Math.max(50, Date.now() - started)));
  }
}

/** Waits until `check` holds (see `waitFor`). */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, hangMs = HANG_MS): Promise<void> {
  await waitFor(check, what, hangMs);
}

/**
 * Waits until the file at `path` exists and its text passes `test` (any text, by default; a socket or
 * folder has the text ''), woken by
 * the events of the file's folder; a poll of a second stands behind them for a folder made later.
 * Returns the text.
 */
export async function waitForFile(path: string, what: string, test: (text: string) => boolean = () => true, hangMs = HANG_MS): Promise<string> {
  const read = () => {
    try {
      // A socket or a folder has no text to read: being there is what is waited for.
      const text = statSync(path).isFile() ? readFileSync(path, 'utf8') : '';
      return test(text) ? text : undefined;
    } catch {
      return undefined;
    }
  };
  const now = read();
  if (now !== undefined) return now;
  const guard = Math.max(hangMs, HANG_MS);
  return new Promise<string>((resolve, reject) => {
    let watcher: ReturnType<typeof watch> | undefined;
    const finish = (text: string | undefined, error?: Error) => {
      clearInterval(poll);
      clearTimeout(hang);
      watcher?.close();
      if (error) reject(error);
      else resolve(text!);
    };
    const look = () => {
      const text = read();
      if (text !== undefined) finish(text);
    };
    const poll = setInterval(() => {
      if (!watcher) watcher = watchFolder(dirname(path), look);
      look();
    }, 1000);
    const hang = setTimeout(() => finish(undefined, new Error(`no sign after ${Math.round(guard / 1000)} s (a hang) of ${what} (${path})`)), guard);
    watcher = watchFolder(dirname(path), look);
    look();
  });
}

function watchFolder(folder: string, onChange: () => void): ReturnType<typeof watch> | undefined {
  try {
    const watcher = watch(folder, { persistent: false }, onChange);
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return undefined; // the folder is not there yet: the poll watches it once it is
  }
}
