// The supervisor as `flume watch --poll 30s --linger 0 --quiet` runs it, but with each pass waiting for
// the steps it starts (its `afterStep` option), as passes once did: supervisor.bench.mjs runs it beside
// `flume watch` for its side-by-side figure. Needs the build (`npm run build`).
import { supervise } from '../dist/core/engine/supervisor/supervisor.js';
import { defaultPreset } from '../dist/plugins/defaults.js';

const controller = new AbortController();
process.once('SIGTERM', () => controller.abort());
process.once('SIGINT', () => controller.abort());
await supervise(async () => defaultPreset(), { pollMs: 30_000, lingerMs: 0, signal: controller.signal, afterStep: (step) => step });
