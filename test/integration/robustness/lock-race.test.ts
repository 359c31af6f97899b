/**
 * Two takers of one stale lock, their steps ordered by hand: taker A reads the stale token and is held
 * there; taker B breaks the stale lock and takes it; then A goes on to break what it read. A must
 * break only the stale token it read, never B's live lock, so B keeps it and A waits its turn.
 *
 * A is held inside its read with a FIFO standing where the lock file is: A's `link` finds the name
 * taken, and its read of the holder blocks until the test writes into the FIFO. Meanwhile the test
 * puts the stale lock file in its place for B; what A finally reads is that stale token.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../../../core/state/lock.js';
import { remove, tempDir } from '../../helpers/repo.js';

const dir = tempDir('flume-lock-race-');
afterAll(() => remove(dir));

const deadPid = () =>
  new Promise<number>((done) => {
    const child = spawn(process.execPath, ['-e', '0']);
    child.on('exit', () => done(child.pid!));
  });

describe('a stale lock broken by two takers at once', () => {
  it('loses only the stale token: the taker that read it late leaves the live holder its lock, and waits', async () => {
    const path = join(dir, 'the.lock');
    const stale = `${await deadPid()} ${hostname()} ${randomUUID()}`;
    execFileSync('mkfifo', [path]);
    // A: finds the name taken and starts reading the holder's token; the FIFO holds it there.
    let aHeld = false;
    const a = acquireLock(path, { timeoutMs: 20_000 }).then((lock) => ((aHeld = true), lock));
    // Opening the FIFO for writing returns once A has it open for reading.
    const fifo = await open(path, 'w');
    renameSync(path, `${path}.fifo`);
    writeFileSync(path, stale);
    // B: finds the stale lock, breaks it and takes the lock.
    const b = await acquireLock(path, { timeoutMs: 5_000 });
    const live = readFileSync(path, 'utf8');
    expect(live).not.toBe(stale);
    expect(existsSync(`${path}.break`)).toBe(false);
    // A reads the stale token at last and goes on to break it.
    await fifo.writeFile(stale);
    await fifo.close();
    await sleep(500);
    expect(readFileSync(path, 'utf8')).toBe(live);
    expect(aHeld).toBe(false);
    // Released by B, the lock is A's.
    await b.release();
    const taken = await a;
    expect(readFileSync(path, 'utf8')).not.toBe(live);
    await taken.release();
    expect(existsSync(path)).toBe(false);
  });
});
