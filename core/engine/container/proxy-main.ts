/**
 * The proxy of one place's container, as its own process (proxy.ts): `node proxy-main.js SOCKET LOG
 * INIT-PID INIT-START ALLOWED…`. It listens on SOCKET (600, its folder 700 before it is mounted) and
 * ends by itself once the container's init is gone (the process INIT-PID that started at
 * INIT-START, checked every 2 s) or its socket was removed; flume removes it with the container.
 */
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { parseAllowed, proxyServer, type Allowed } from './proxy.js';

const [socket, log, pid, start, ...entries] = process.argv.slice(2);
const allow = entries.map(parseAllowed).filter((entry): entry is Allowed => entry !== undefined);

/** The start time of a process (field 22 of /proc/PID/stat), undefined when there is none. */
function startOf(process: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${process}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

if (!socket || !log || !pid || !start) process.exit(2);
rmSync(socket, { force: true });
const server = proxyServer(allow, (line) => {
  try {
    appendFileSync(log!, `${line}\n`, { mode: 0o600 });
  } catch {
    // a log that cannot be written is no reason to stop carrying what is allowed
  }
});
server.listen(socket, () => chmodSync(socket!, 0o600));
const watch = setInterval(() => {
  if (startOf(pid!) !== start || !existsSync(socket!)) {
    clearInterval(watch);
    server.close();
    process.exit(0);
  }
}, 2000);
