/**
 * The supervisor's warm answer (core/cli/warm.ts) is the command run afresh each time it is asked:
 * asked the same command line again after what it reads changed, it answers what the command says
 * now, never what it said before. The runner here prints a value the test changes between asks.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { askWarm, serveWarm } from '../../../core/cli/warm.js';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('a warm answer', () => {
  it('is the command run again for each ask: the same command line after a change answers the change', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'flume-warm-'));
    cleanup.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const self = join(stateDir, 'flume.js');
    writeFileSync(self, '');
    let now = 'one place';
    const runs: string[][] = [];
    const server = await serveWarm(stateDir, self, async (argv, io) => {
      runs.push(argv);
      io.stdout(`${argv.join(' ')}: ${now}\n`);
      return now === 'no place' ? 1 : 0;
    });
    expect(server).toBeDefined();
    cleanup.push(() => server!.close());
    const ask = (argv: string[]) => askWarm(argv, { stateDir, self, cwd: '/w', env: process.env });

    expect(await ask(['status', '--json'])).toEqual({ stdout: 'status --json: one place\n', stderr: '', code: 0 });
    now = 'two places';
    expect(await ask(['status', '--json'])).toEqual({ stdout: 'status --json: two places\n', stderr: '', code: 0 });
    // Another command line, then the first again: each is run as asked, with its own arguments.
    expect(await ask(['kinds'])).toEqual({ stdout: 'kinds --repo /w: two places\n', stderr: '', code: 0 });
    now = 'no place';
    expect(await ask(['status', '--json'])).toEqual({ stdout: 'status --json: no place\n', stderr: '', code: 1 });
    expect(runs).toEqual([['status', '--json'], ['status', '--json'], ['kinds', '--repo', '/w'], ['status', '--json']]);
  });
});
