/**
 * Everything flume keeps from one reading to the next, named, in one place. A kept value is a fact read
 * from a source that says when it changed, and it is keyed by that: a file's identity, size and times
 * (a repository's refs, a transcript), a full commit id (what a path holds there), the two heads a
 * landing was judged at, a program's path and PATH (its version). A changed source is then a
 * different key, or a stamp that no longer matches, and never a stale answer; what cannot be keyed
 * so is not kept.
 *
 * Lifetime: the process's (one command, or the supervisor's whole run), with no clock; each cache is
 * bounded by a count of entries (and, where values are large, their bytes), the oldest going first.
 * `forgetKept()` empties every one, so code that runs flume's commands in one process (tests) can start
 * each as a fresh process would. `keptCaches()` lists them, for a reader or a test.
 */

/** What a cache declares: what it holds (for a reader) and its bounds. */
export interface KeptOptions<V> {
  /** What it holds and what keys it, in a few words. */
  holds: string;
  /** At most this many entries; the oldest goes first. */
  entries: number;
  /** At most this many bytes, as `of` weighs a value. */
  bytes?: { max: number; of: (value: V) => number };
}

/** One named cache: a bounded map, oldest entries out first. */
export class Kept<K, V> {
  readonly #entries = new Map<K, V>();
  #bytes = 0;

  constructor(
    readonly name: string,
    readonly options: KeptOptions<V>,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Keeps `value` under `key`, making room first. */
  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.options.bytes?.of(value) ?? 0;
    while (this.#entries.size > 0 && (this.#entries.size >= this.options.entries || (this.options.bytes && this.#bytes + weight > this.options.bytes.max))) {
      this.delete(this.#entries.keys().next().value as K);
    }
    this.#entries.set(key, value);
    this.#bytes += weight;
  }

  delete(key: K): void {
    if (!this.#entries.has(key)) return;
    if (this.options.bytes) this.#bytes -= this.options.bytes.of(this.#entries.get(key) as V);
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}

const CACHES: Array<Kept<unknown, unknown>> = [];

/** A named cache of this process, listed by `keptCaches()` and emptied by `forgetKept()`. */
export function keptCache<K, V>(name: string, options: KeptOptions<V>): Kept<K, V> {
  if (CACHES.some((cache) => cache.name === name)) throw new Error(`A kept cache named ${name} exists already.`);
  const cache = new Kept<K, V>(name, options);
  CACHES.push(cache as Kept<unknown, unknown>);
  return cache;
}

/** Every cache this process keeps: its name, what it holds and how many entries it has. */
export function keptCaches(): Array<{ name: string; holds: string; size: number }> {
  return CACHES.map((cache) => ({ name: cache.name, holds: cache.options.holds, size: cache.size }));
}

/** Empties every cache this process keeps. */
export function forgetKept(): void {
  for (const cache of CACHES) cache.clear();
}
