// Loaded into a supervisor by bench/supervisor-memory.bench.mjs (MEM_PROBE=1: `node --import
// <this> <flume.js> watch`): every MEM_PROBE_MS (default 2000) it appends one line of what the
// process holds to <MEM_PROBE_DIR>/<pid>.jsonl: process.memoryUsage() (rss, V8's heap committed and
// used, external and array buffers), V8's heap spaces, and the size of each of flume's kept caches
// (core/support/kept.ts, the same module instance the supervisor uses).
import { appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

const dir = process.env.MEM_PROBE_DIR;
if (dir && process.argv.includes('watch')) {
  const file = join(dir, `${process.pid}.jsonl`);
  let kept;
  import(pathToFileURL(join(dirname(process.argv[1]), '..', 'core', 'support', 'kept.js')).href).then((m) => (kept = m), () => undefined);
  const timer = setInterval(() => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.physical_space_size / 1024)]));
    const caches = kept ? Object.fromEntries(kept.keptCaches().map((c) => [c.name, c.size])) : undefined;
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), ...process.memoryUsage(), spaces, caches, handles: process.getActiveResourcesInfo?.().length })}\n`);
  }, Number(process.env.MEM_PROBE_MS ?? 2000));
  timer.unref();
}
