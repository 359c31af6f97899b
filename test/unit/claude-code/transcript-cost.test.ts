/**
 * readState's cost follows the tail of a transcript, not its length: the 3 MB real transcript reads
 * in about the time of the 10 KB one, and a window of 128 KiB from the end gives the same answer as
 * the whole file. Prints the medians (bench/transcript-state.mjs prints the same for the built code).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { readState } from '../../../agents/claude-code/transcript.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/claude-transcripts');
const BIG = join(FIXTURES, 'spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl'); // 3.0 MB, 1512 lines
const SMALL = join(FIXTURES, 'spotter_short.jsonl'); // 10 KB, 15 lines

/** Median times of readState on each file, their runs interleaved so a change of load falls on both alike. */
async function medians(paths: string[], runs: number): Promise<number[]> {
  for (let i = 0; i < 5; i++) for (const path of paths) await readState(path); // warm the page cache and the JIT
  const times: number[][] = paths.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [j, path] of paths.entries()) {
      const start = performance.now();
      await readState(path);
      times[j]!.push(performance.now() - start);
    }
  }
  return times.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)]!);
}

describe('readState cost', () => {
  it('answers from the last 128 KiB of a 3 MB transcript exactly as from the whole file', async () => {
    expect(await readState(BIG, { maxBytes: 128 * 1024 })).toEqual(await readState(BIG));
    expect(await readState(BIG, { maxBytes: 128 * 1024 })).toMatchObject({ state: 'idle', turnEnded: true });
  });

  it('costs about the same on 3 MB as on 10 KB', async () => {
    const [small, big] = (await medians([SMALL, BIG], 200)) as [number, number];
    const ratio = big / small;
    console.log(
      `readState median: 10 KB ${small.toFixed(3)} ms, 3 MB ${big.toFixed(3)} ms, ratio ${ratio.toFixed(2)}`,
    );
    // A whole-file read of 3 MB costs ~300x the 10 KB one; the bound leaves room for a loaded host.
    expect(ratio).toBeLessThan(5);
  });
});
