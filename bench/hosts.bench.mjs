// `status --host H --json` over a held ssh connection against what it cannot do without: the same
// `status --json` run on that host directly plus one bare round trip over the same connection
// (`ssh H true`). The "host" is an sshd of the bench's own on 127.0.0.1 inside a network namespace
// with only loopback (the bench starts itself again under `unshare -n`), whose ForceCommand gives it
// another HOME and flume state on this machine, as the tests do; its flume is this checkout's build.
// Timed interleaved, medians of ROUNDS (default 15); also the relayed status with its handshake run
// each time (the note removed first), as every command ran it before the handshake was held, and a
// bare `node -e 0`: the start of this host's own flume process, which no relay can save.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { FLUME, fmt, sideBySide, temp } from './lib.mjs';

if (process.env.FLUME_BENCH_NETNS !== '1') {
  const inside = ['sh', '-c', `ip link set lo up && exec '${process.execPath}' '${process.argv[1]}'`];
  for (const flags of [['-n'], ['-rn']]) {
    if (spawnSync('unshare', [...flags, 'true']).status !== 0) continue;
    const run = spawnSync('unshare', [...flags, ...inside], { stdio: 'inherit', env: { ...process.env, FLUME_BENCH_NETNS: '1' } });
    process.exit(run.status ?? 1);
  }
  console.error('hosts.bench.mjs needs a network namespace (unshare -n as root, or unshare -rn); none can be made here.');
  process.exit(1);
}

const rounds = Number(process.env.ROUNDS ?? 15);
const SSHD = ['/usr/sbin/sshd', 'sshd'].find((file) => spawnSync('sh', ['-c', `command -v ${file}`]).status === 0);
const box = temp('flume-bench-hosts-');
const port = 2200 + Math.floor(Math.random() * 700);

// The other host: its own HOME, state and PATH, its flume this checkout's build.
const remoteHome = join(box, 'remote-home');
const remoteBin = join(box, 'remote-bin');
mkdirSync(join(remoteHome, 'state', 'flume'), { recursive: true, mode: 0o700 });
mkdirSync(remoteBin);
writeFileSync(join(remoteBin, 'flume'), `#!/bin/sh\nexec '${process.execPath}' '${FLUME}' "$@"\n`);
chmodSync(join(remoteBin, 'flume'), 0o755);
const remoteEnv = { HOME: remoteHome, XDG_STATE_HOME: join(remoteHome, 'state'), PATH: `${remoteBin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, LANG: 'C.UTF-8' };
const force = join(box, 'force-command');
writeFileSync(force, `#!/bin/bash\nexport ${Object.entries(remoteEnv).map(([k, v]) => `${k}='${v}'`).join(' ')}\ncd "$HOME"\nexec bash -c "$SSH_ORIGINAL_COMMAND"\n`);
chmodSync(force, 0o755);

execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(box, 'host_key')]);
execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(box, 'user_key')]);
writeFileSync(join(box, 'authorized_keys'), readFileSync(join(box, 'user_key.pub')));
writeFileSync(join(box, 'sshd_config'), [`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${join(box, 'host_key')}`, `AuthorizedKeysFile ${join(box, 'authorized_keys')}`, 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PermitRootLogin yes', 'StrictModes no', 'UsePAM no', `PidFile ${join(box, 'sshd.pid')}`, `ForceCommand ${force}`, ''].join('\n'));
const user = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
const client = join(box, 'ssh_config');
writeFileSync(client, `Host build-1\n  HostName 127.0.0.1\n  Port ${port}\n  User ${user}\n  IdentityFile ${join(box, 'user_key')}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${join(box, 'known_hosts')}\n  StrictHostKeyChecking accept-new\n`);
const localBin = join(box, 'local-bin');
mkdirSync(localBin);
writeFileSync(join(localBin, 'ssh'), `#!/bin/sh\nexec /usr/bin/ssh -F '${client}' "$@"\n`);
chmodSync(join(localBin, 'ssh'), 0o755);
mkdirSync('/run/sshd', { recursive: true });
execFileSync(SSHD, ['-f', join(box, 'sshd_config'), '-E', join(box, 'sshd.log')]);

const state = join(box, 'local-state');
const env = { ...process.env, FLUME_STATE_DIR: state, PATH: `${localBin}:${process.env.PATH}` };
// The socket flume names for the host's target (core/hosts/held.ts), so `ssh true` rides the same connection.
const socket = join(state, 'ssh', createHash('sha256').update('build-1').digest('hex').slice(0, 24));
try {
  execFileSync(process.execPath, [FLUME, 'hosts', 'add', 'remote', 'build-1'], { env, stdio: 'pipe' });
  const sshArgs = ['-o', 'BatchMode=yes', '-o', 'ControlMaster=auto', '-o', `ControlPath=${socket}`, '-o', 'ControlPersist=60', '-T', 'build-1', 'true'];
  const forget = `rm -f '${socket}.handshake' && exec '${process.execPath}' '${FLUME}' status --host remote --json`;
  const commands = {
    'status --host remote --json': [process.execPath, [FLUME, 'status', '--host', 'remote', '--json'], env],
    'status --json on the host': [process.execPath, [FLUME, 'status', '--json'], { ...process.env, ...remoteEnv }],
    'ssh build-1 true (held)': ['ssh', sshArgs, env],
    'status --host, handshake each time': ['sh', ['-c', forget], env],
    'node -e 0': [process.execPath, ['-e', '0'], env],
  };
  // One untimed round first: the connection made and held, each command's files in the page cache.
  sideBySide(commands, 1);
  const medians = sideBySide(commands, rounds);
  const [relayed, direct, ssh, every, node] = Object.values(medians);
  console.log(`median of ${rounds} interleaved runs (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}):`);
  for (const [name, ms] of Object.entries(medians)) console.log(`  ${name.padEnd(36)} ${fmt(ms).padStart(10)}`);
  console.log(`  status --host / (status there + ssh true)  ${(relayed / (direct + ssh)).toFixed(2)}x  (goal 1.3x)`);
  console.log(`  handshake each time / (status there + ssh true)  ${(every / (direct + ssh)).toFixed(2)}x`);
  console.log(`  one handshake skipped saves ${fmt(every - relayed)}`);
  // This host's own flume is a node process the direct status does not start: no relay is cheaper.
  console.log(`  floor, (status there + ssh true + node -e 0) / (status there + ssh true)  ${((direct + ssh + node) / (direct + ssh)).toFixed(2)}x`);
} finally {
  spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${socket}`, 'build-1'], { env, stdio: 'ignore' });
  const pid = Number(readFileSync(join(box, 'sshd.pid'), 'utf8').trim());
  const sessions = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((name) => {
    try {
      return Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
  for (const target of [pid, ...sessions.map(Number)]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  rmSync(box, { recursive: true, force: true });
}
