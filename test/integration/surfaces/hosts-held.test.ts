/**
 * The handshake once per held ssh connection, over real OpenSSH: an sshd of the test's own on
 * 127.0.0.1 (the suite runs in a network namespace with only loopback) whose `ForceCommand` logs
 * each remote command line (`SSH_ORIGINAL_COMMAND`) and runs it as the "remote", with another HOME
 * and state on this machine. The remote's flume is this checkout's build; for a remote upgraded while
 * the connection was held, the same build with another minor version in its package.json. The local
 * flume runs in-process with an `ssh` first on PATH that adds `-F` with the test's client config.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { controlPath } from '../../../core/hosts/held.js';
import { signalQuietly, waitGone } from '../../../core/support/process.js';
import { flume, flumeEnv, git, makeRepo, PROJECT, remove, tempDir, trustMade, type CliResult } from '../../helpers/repo.js';
import { startTestSshd } from '../../helpers/sshd.js';

const VERSION = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version as string;
const made: string[] = [];
let box: string;
let remoteBin: string;
let log: string;
let socket: string;
let localEnv: Record<string, string>;

/** The remote's flume: `root`'s build. */
function remoteFlume(root: string): void {
  writeFileSync(join(remoteBin, 'flume'), `#!/bin/sh\nexec '${process.execPath}' '${join(root, 'dist', 'bin', 'flume.js')}' "$@"\n`);
  chmodSync(join(remoteBin, 'flume'), 0o755);
}

/** The remote command lines sshd ran since the log was last cleared. */
const remoteLines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
const handshakes = () => remoteLines().filter((line) => line.endsWith(' --version --json')).length;
const relays = () => remoteLines().filter((line) => line.endsWith(' __relay')).length;
const here = (args: string[]): Promise<CliResult> => flume(args, { env: localEnv, cwd: box });
const json = (result: CliResult) => JSON.parse(result.stdout);
const ssh = (...args: string[]) => spawnSync('ssh', ['-o', `ControlPath=${socket}`, ...(args.includes('--') ? args : [...args, 'build-1'])], { env: localEnv, encoding: 'utf8' });

beforeAll(async () => {
  box = tempDir('flume-held-');
  made.push(box);
  remoteBin = join(box, 'remote-bin');
  mkdirSync(remoteBin);
  remoteFlume(PROJECT);
  const remoteHome = join(box, 'remote-home');
  mkdirSync(join(remoteHome, 'state', 'flume'), { recursive: true, mode: 0o700 });
  await trustMade(join(remoteHome, 'state', 'flume'));
  log = join(box, 'remote-commands.log');
  const force = join(box, 'force-command');
  writeFileSync(force, `#!/bin/bash
# The other host: another HOME, state and PATH on this machine, the same account; each command logged.
unset FLUME_STATE_DIR FLUME_HOST
printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >> '${log}'
export HOME='${remoteHome}' XDG_STATE_HOME='${join(remoteHome, 'state')}' PATH='${remoteBin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin' LANG=C.UTF-8
cd "$HOME"
exec bash -c "$SSH_ORIGINAL_COMMAND"
`);
  chmodSync(force, 0o755);
  const { localBin } = await startTestSshd(box, force);

  const localState = tempDir('flume-held-state-');
  made.push(localState);
  localEnv = flumeEnv(localState, { PATH: `${localBin}:${process.env.PATH}`, FLUME_HOST_READ_MS: '60000' });
  socket = await controlPath({ target: 'build-1' }, localEnv);
  const added = await here(['hosts', 'add', 'remote', 'build-1', '--json']);
  expect(added.code, added.stdout + added.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  if (localEnv) ssh('-O', 'exit');
  const pidFile = box && join(box, 'sshd.pid');
  if (pidFile && existsSync(pidFile)) {
    const listener = Number(readFileSync(pidFile, 'utf8').trim());
    signalQuietly(listener, 'SIGKILL');
    await waitGone(listener, 5000);
  }
  made.forEach(remove);
}, 60_000);

describe('the handshake, once per held ssh connection', { timeout: 180_000 }, () => {
  beforeEach(() => {
    remoteFlume(PROJECT);
    ssh('-O', 'exit');
    rmSync(log, { force: true });
  });

  it('runs one handshake for relayed commands in a row over one connection, an all-hosts read among them', async () => {
    for (const args of [['status', '--host', 'remote', '--json'], ['status', '--host', 'remote', '--json'], ['status', '--all-hosts', '--json']]) {
      const result = await here(args);
      expect(result.code, result.stdout + result.stderr).toBe(0);
    }
    expect(relays()).toBe(3);
    expect(handshakes(), remoteLines().join('\n')).toBe(1);
    expect(json(await here(['status', '--all-hosts', '--json'])).hosts).toContainEqual(expect.objectContaining({ name: 'remote', state: 'answered' }));
    expect(handshakes()).toBe(1);
  });

  it('runs the handshake again once the connection is another: its master ended, or killed and its socket left behind', async () => {
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    expect(handshakes()).toBe(1);
    expect(ssh('-O', 'exit').status).toBe(0);
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    expect(handshakes()).toBe(2);
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    expect(handshakes()).toBe(2);
    // Killed outright, the master leaves its socket file, which nothing answers on any more.
    const master = Number(/pid=(\d+)/.exec(ssh('-O', 'check').stderr)?.[1]);
    expect(master).toBeGreaterThan(0);
    signalQuietly(master, 'SIGKILL');
    expect(await waitGone(master, 5000)).toBe(true);
    expect(existsSync(socket)).toBe(true);
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    expect(handshakes()).toBe(3);
    // A master flume did not start (here a bare ssh's) is a socket the note does not name.
    expect(ssh('-O', 'exit').status).toBe(0);
    expect(ssh('-o', 'ControlMaster=auto', '-o', 'ControlPersist=60', '-T', '--', 'build-1', 'true').status).toBe(0);
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    expect(handshakes()).toBe(4);
    expect(relays()).toBe(5);
  });

  it('is refused with HOST_VERSION_MISMATCH, nothing run, by a remote upgraded to another minor version while the connection was held', async () => {
    expect((await here(['status', '--host', 'remote', '--json'])).code).toBe(0);
    // The same build as another minor version, now the remote's flume; the connection stays held.
    const next = join(box, 'next');
    const [major, minor] = VERSION.split('.').map(Number);
    const upgraded = `${major}.${minor + 1}.0`;
    mkdirSync(next, { recursive: true });
    cpSync(join(PROJECT, 'dist'), join(next, 'dist'), { recursive: true });
    cpSync(join(PROJECT, 'schemas'), join(next, 'schemas'), { recursive: true });
    writeFileSync(join(next, 'package.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')), version: upgraded }));
    if (!existsSync(join(next, 'node_modules'))) symlinkSync(join(PROJECT, 'node_modules'), join(next, 'node_modules'), 'dir');
    remoteFlume(next);
    const repo = makeRepo();
    made.push(repo);
    const refused = await here(['launch', '--host', 'remote', '--repo', repo, '--kind', 'fix', '--name', 'stale', '--brief', 'Not to run.', '--no-start', '--no-watch', '--json']);
    expect(refused.code).toBe(1);
    expect(json(refused).error).toMatchObject({ code: 'HOST_VERSION_MISMATCH', details: { remote: upgraded, local: VERSION } });
    expect(existsSync(join(repo, '.git', 'flume'))).toBe(false);
    expect(git(repo, 'branch', '--list')).not.toContain('stale');
    // The request reached the remote's relay entry over the held connection: no handshake ran.
    expect(handshakes()).toBe(1);
    expect(relays()).toBe(2);
    // Text too, for a caller that did not ask for JSON.
    const plain = await here(['launch', '--host', 'remote', '--repo', repo, '--kind', 'fix', '--name', 'stale', '--brief', 'Not to run.', '--no-start', '--no-watch']);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^HOST_VERSION_MISMATCH /);
    // A new connection's handshake refuses it in its own words.
    ssh('-O', 'exit');
    const fresh = await here(['status', '--host', 'remote', '--json']);
    expect(json(fresh).error).toMatchObject({ code: 'HOST_VERSION_MISMATCH', details: { remote: upgraded, host: 'remote' } });
    expect(handshakes()).toBe(2);
  });
});
