/**
 * Another host over real OpenSSH, for a test: an sshd of the test's own on 127.0.0.1 (a free port;
 * the suite runs in a network namespace with only loopback), a host key and a user key the test
 * makes, every command through the test's `ForceCommand`, and a client config naming the host
 * `build-1`. ssh reads its config from the account's home, never `$HOME`, so `localBin` holds an
 * `ssh` that adds `-F` with the test's client config: put it first on PATH.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const SSHD = existsSync('/usr/sbin/sshd') ? '/usr/sbin/sshd' : 'sshd';

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A test's sshd, started. */
export interface TestSshd {
  /** The folder of `ssh` with the test's client config. */
  localBin: string;
  /** Its listener's pid file. */
  pidFile: string;
}

/**
 * Starts an sshd in `box` whose every session runs `force`. With `passwordOnly`, a second port of
 * the same sshd takes passwords alone, named `password-only` in the client config.
 */
export async function startTestSshd(box: string, force: string, options: { passwordOnly?: boolean } = {}): Promise<TestSshd> {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(box, 'host_key')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(box, 'user_key')]);
  writeFileSync(join(box, 'authorized_keys'), readFileSync(join(box, 'user_key.pub')));
  const port = await freePort();
  const passwordPort = options.passwordOnly ? await freePort() : undefined;
  const pidFile = join(box, 'sshd.pid');
  const config = join(box, 'sshd_config');
  writeFileSync(config, [
    `Port ${port}`,
    ...(passwordPort ? [`Port ${passwordPort}`] : []),
    'ListenAddress 127.0.0.1',
    `HostKey ${join(box, 'host_key')}`,
    `AuthorizedKeysFile ${join(box, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin yes',
    'StrictModes no',
    'UsePAM no',
    `PidFile ${pidFile}`,
    `ForceCommand ${force}`,
    ...(passwordPort ? [`Match LocalPort ${passwordPort}`, '  PubkeyAuthentication no', '  PasswordAuthentication yes'] : []),
    '',
  ].join('\n'));
  const user = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
  const entry = (alias: string, at: number) => `Host ${alias}
  HostName 127.0.0.1
  Port ${at}
  User ${user}
  IdentityFile ${join(box, 'user_key')}
  IdentitiesOnly yes
  UserKnownHostsFile ${join(box, 'known_hosts')}
  StrictHostKeyChecking accept-new
`;
  const client = join(box, 'ssh_config');
  writeFileSync(client, entry('build-1', port) + (passwordPort ? entry('password-only', passwordPort) : ''));
  const localBin = join(box, 'local-bin');
  mkdirSync(localBin);
  writeFileSync(join(localBin, 'ssh'), `#!/bin/sh\nexec /usr/bin/ssh -F '${client}' "$@"\n`);
  chmodSync(join(localBin, 'ssh'), 0o755);
  mkdirSync('/run/sshd', { recursive: true });
  execFileSync(SSHD, ['-f', config, '-E', join(box, 'sshd.log')]);
  return { localBin, pidFile };
}
