// readState on the real 3 MB transcript against the 10 KB one: the medians and their ratio.
// Build first (npx tsc -p tsconfig.json), then: node bench/transcript-state.mjs [runs]
// (FLUME_DIST=<folder> reads a build made elsewhere, e.g. tsc --outDir /tmp/flume-dist.)
// It also times a whole-file read and parse, the cost readState avoids by reading from the end.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = process.env.FLUME_DIST ?? `${root}dist`;
const { readState } = await import(`${dist}/agents/claude-code/transcript.js`);
const fixtures = `${root}test/fixtures/claude-transcripts/`;
const cases = [
  ['10 KB', `${fixtures}spotter_short.jsonl`],
  ['3 MB', `${fixtures}spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl`],
];
const runs = Number(process.argv[2] ?? 500);

async function median(fn) {
  for (let i = 0; i < 20; i++) await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const wholeFile = async (path) => (await readFile(path, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const results = {};
for (const [label, path] of cases) {
  results[label] = { readState: await median(() => readState(path)), wholeFile: await median(() => wholeFile(path)) };
}
for (const [label, r] of Object.entries(results)) {
  console.log(`${label.padEnd(6)} readState ${r.readState.toFixed(3)} ms   whole-file parse ${r.wholeFile.toFixed(3)} ms`);
}
const ratio = results['3 MB'].readState / results['10 KB'].readState;
const wholeRatio = results['3 MB'].wholeFile / results['10 KB'].wholeFile;
console.log(`ratio 3 MB / 10 KB: readState ${ratio.toFixed(2)}x, whole-file parse ${wholeRatio.toFixed(1)}x (median of ${runs})`);
