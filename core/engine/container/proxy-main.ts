/**
 * The proxy of one place's container, as its own process (proxy.ts): `node proxy-main.js SOCKET LOG
 * INIT ALLOWED…`. Started before its container, it listens on SOCKET (600, in a folder of 700) at
 * once. It ends by itself once its socket was removed (flume removes it with the container), once
 * the container's init named in the file INIT (`PID START`, written when the container is made) is
 * gone, or when no INIT came within a minute (the container was never made). Checked every second.
 */
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { parseAllowed, proxyServer, type Allowed } from './proxy.js';

const [socket, log, init, ...entries] = process.argv.slice(2);
const allow = entries.map(parseAllowed).filter((entry): entry is Allowed => entry !== undefined);

/** The start time of a process (field 22 of /proc/PID/stat), undefined when there is none. */
function startOf(pid: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** True while the container's init runs, or (before INIT is written) for a minute from the start. */
const began = Date.now();
function containerRuns(): boolean {
  let named: string;
  try {
    named = readFileSync(init!, 'utf8').trim();
  } catch {
    return Date.now() - began < 60_000;
  }
  const [pid, start] = named.split(' ');
  return pid !== undefined && start !== undefined && startOf(pid) === start;
}

if (!socket || !log || !init) process.exit(2);
rmSync(socket, { force: true });
/** The most the log holds: refusals an agent repeats for ever do not fill the disk. */
const MAX_LOG = 1024 * 1024;
let logged = 0;
const server = proxyServer(allow, (line) => {
  if (logged > MAX_LOG) return;
  const text = logged + line.length + 1 > MAX_LOG ? `${line}\n… further refusals not noted (the log holds ${MAX_LOG} bytes)\n` : `${line}\n`;
  logged += text.length;
  try {
    appendFileSync(log!, text, { mode: 0o600 });
  } catch {
    // a log that cannot be written is no reason to stop carrying what is allowed
  }
});
server.listen(socket, () => chmodSync(socket!, 0o600));
setInterval(() => {
  // Ended without closing: a socket of the same folder made by a later start is never touched.
  if (!existsSync(socket!) || !containerRuns()) process.exit(0);
}, 1000);
