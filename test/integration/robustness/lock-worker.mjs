// One contender for a lock, run as a process of its own by concurrency.test.ts:
//   node lock-worker.mjs <lock.js> <lock path> <folder> <rounds> <chance of dying while holding>
// Each round takes the lock, proves it is alone inside (a marker file made with O_EXCL, whose holder
// must be dead if it is there already), adds one to a counter with a plain read and write (a second
// holder would lose an update), and sometimes dies by SIGKILL while holding it, leaving a stale lock.
import { readFileSync } from 'node:fs';
import { appendFile, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [lockModule, lockPath, dir, rounds, dieChance] = process.argv.slice(2);
const { acquireLock } = await import(pathToFileURL(lockModule).href);
const marker = join(dir, 'inside');
const counter = join(dir, 'counter');
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
// A holder that died is a zombie until its parent (the test) reaps it: ended, as the lock reads it.
const alive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return error.code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

for (let round = 0; round < Number(rounds); round++) {
  const lock = await acquireLock(lockPath, { timeoutMs: 60_000 });
  try {
    await writeFile(marker, String(process.pid), { flag: 'wx' });
  } catch {
    const other = Number(await readFile(marker, 'utf8').catch(() => '0'));
    if (other && other !== process.pid && alive(other)) {
      await appendFile(join(dir, 'violations'), `${process.pid} found ${other} inside\n`);
    }
    await writeFile(marker, String(process.pid));
  }
  const count = Number(await readFile(counter, 'utf8').catch(() => '0'));
  await sleep(Math.random() * 3);
  await writeFile(counter, String(count + 1));
  await appendFile(join(dir, 'increments'), `${process.pid}\n`);
  if (Math.random() < Number(dieChance)) process.kill(process.pid, 'SIGKILL');
  await unlink(marker);
  await lock.release();
  await sleep(Math.random() * 2);
}
