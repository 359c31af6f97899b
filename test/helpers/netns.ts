/**
 * The end-to-end suite runs the real Claude Code, which must never reach past this machine. The
 * whole run is started inside a network namespace that has only loopback:
 *
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e'
 *
 * (root; `e2eCommand()` builds that line). Every e2e file calls `assertIsolated()` first so a run
 * started any other way fails at once instead of talking to the network.
 *
 * Interfaces are read from `/proc/net/dev` and `os.networkInterfaces()`, which follow the calling
 * process's namespace; `/sys/class/net` does not (it keeps showing the host's interfaces after
 * `unshare -n` unless sysfs is mounted again), so it is not used.
 */
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

/** What {@link isolation} found. */
export interface Isolation {
  isolated: boolean;
  /** Interfaces in this namespace other than `lo`. */
  others: string[];
  /** Whether `lo` is up with 127.0.0.1 (the scripted API listens there). */
  loopbackUp: boolean;
}

/** Reads this process's network namespace. */
export function isolation(): Isolation {
  const others = readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name !== '' && name !== 'lo');
  const addresses = networkInterfaces();
  for (const [name, list] of Object.entries(addresses)) {
    if (list?.some((a) => !a.internal) && !others.includes(name)) others.push(name);
  }
  const loopbackUp = Boolean(addresses.lo?.some((a) => a.address === '127.0.0.1'));
  return { isolated: others.length === 0 && loopbackUp, others, loopbackUp };
}

/** Throws unless this process is in a network namespace with only loopback, and loopback is up. */
export function assertIsolated(): void {
  const found = isolation();
  if (found.isolated) return;
  const why = found.others.length > 0
    ? `network interfaces other than lo are present (${found.others.join(', ')})`
    : 'lo is down (no 127.0.0.1)';
  throw new Error(
    `E2E_NOT_ISOLATED: ${why}. The e2e tests run the real Claude Code and must not reach the network; ` +
      `run them as: ${e2eCommand()}`,
  );
}

/** The shell line that runs `vitestArgs` inside a fresh loopback-only network namespace (needs root). */
export function e2eCommand(vitestArgs = 'test/e2e'): string {
  return `unshare -n sh -c 'ip link set lo up && npx vitest run ${vitestArgs}'`;
}
