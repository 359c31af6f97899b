/**
 * Another host over real OpenSSH: an sshd of the test's own on 127.0.0.1 (a free port; the suite
 * runs in a network namespace with only loopback), a key the test makes, and `ForceCommand` giving
 * the "remote" another HOME, XDG_STATE_HOME and PATH on this machine under the same account, so it
 * has its own flume state (and tmux socket) and its own flume: the package `npm pack` makes of this
 * checkout, unpacked there. The local flume runs in-process; every remote flume is a real process
 * reached through sshd, its agent the fake Claude Code in a real tmux on the remote state's socket.
 * The local ssh is the machine's own, on a PATH whose `ssh` adds `-F` with the test's client config
 * (ssh reads its config from the account's home, never `$HOME`). A second port of the same sshd
 * takes passwords alone.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { killTmuxServer } from '../../../agents/panes/tmux.js';
import { agentRepo, stopSupervisor, type AgentRepo } from '../../helpers/agent-repo.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { watchArgv } from '../../helpers/proc.js';
import { validResult } from '../../helpers/result-schema.js';
import { startTestSshd } from '../../helpers/sshd.js';
import { hasPodman, HOST_PROGRAMS, podmanForTests } from '../../helpers/podman.js';
import { flume, FLUME_BIN, remove, PROJECT, tempDir, trustMade, type CliResult } from '../../helpers/repo.js';
import { signalQuietly, waitGone } from '../../../core/support/process.js';
import { lastEventId } from '../../../core/state/events.js';
import { controlPath } from '../../../core/hosts/held.js';

const made: string[] = [];
let box: string;
let remoteRepo: AgentRepo;
let localRepo: AgentRepo;
let remoteState: string;
let localEnv: Record<string, string>;
/** The tests' podman (its containers.conf handed to the remote), when this machine has one. */
const podman = hasPodman() ? podmanForTests() : undefined;

/** The processes whose argv `match` takes (and whose parent is `parent`, when given), by pid. */
function processes(match: (argv: string[]) => boolean, parent?: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      if (parent !== undefined && Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]) !== parent) return [];
      return match(readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')) ? [Number(name)] : [];
    } catch {
      return [];
    }
  });
}

/** The local ssh of each relay (its remote command the relay's entry). */
const sshRelays = (parent?: number) => processes((argv) => argv[0].endsWith('ssh') && argv.some((arg) => arg.endsWith('flume __relay')), parent);
/** The remote flume of each relay. */
const remoteRelays = () => processes((argv) => argv.some((arg) => arg.endsWith('flume.js')) && argv.includes('__relay'));
/** True once the process watches files (an inotify descriptor): a follow or a wait has begun. */
const watching = (pid: number) => readdirSync(`/proc/${pid}/fd`).some((fd) => {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
  } catch {
    return false;
  }
});

/** What relayedHere started, killed after each test. */
const started: number[] = [];

/**
 * The local flume as a process of its own, relaying `args`; answers once the remote flume of its
 * relay follows or waits, with both ends' processes: the remote flume and the local ssh.
 */
async function relayedHere(args: string[]) {
  const before = new Set(remoteRelays());
  const child = spawn(process.execPath, [FLUME_BIN, ...args], { env: localEnv, cwd: localRepo.repo, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child.pid!);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? String(signal))));
  const remote = await waitFor(async () => remoteRelays().find((pid) => !before.has(pid) && watching(pid)), `the remote's ${args.join(' ')}`);
  const [ssh] = sshRelays(child.pid);
  started.push(remote, ssh);
  expect(ssh, output).toBeDefined();
  return { child, remote, ssh, exit, output: () => output };
}

/** The sshd's listener and every session it forked (by pid: their parent is the listener). */
async function stopSshd(): Promise<void> {
  const pidFile = join(box, 'sshd.pid');
  if (!existsSync(pidFile)) return;
  const listener = Number(readFileSync(pidFile, 'utf8').trim());
  const children = (pid: number): number[] => processes(() => true, pid);
  const sessions = children(listener).flatMap((pid) => [pid, ...children(pid)]);
  for (const pid of [listener, ...sessions]) signalQuietly(pid, 'SIGKILL');
  for (const pid of [listener, ...sessions]) await waitGone(pid, 5000);
}

/** The local flume (in-process), in the local repository with the local state and the test's ssh. */
const here = (args: string[]): Promise<CliResult> => flume(args, { env: localEnv, cwd: localRepo.repo });
const json = (result: CliResult) => JSON.parse(result.stdout);
const remoteStatus = async (id: string) => {
  const result = await here(['status', `remote:${id}`, '--repo', remoteRepo.repo, '--json']);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return json(result).places[0];
};
const prompts = (path: string) => readRecords(path).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content as string);

beforeAll(async () => {
  box = tempDir('flume-hosts-');
  made.push(box);
  // The remote's flume: the packed package, unpacked, its dependencies linked from this checkout's.
  const packs = join(box, 'packs');
  mkdirSync(packs);
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs], { cwd: PROJECT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  const installed = join(box, 'remote-lib', 'node_modules', 'flume');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(packs, filename), '-C', installed, '--strip-components=1']);
  for (const dep of Object.keys(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).dependencies)) {
    mkdirSync(join(box, 'remote-lib', 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(PROJECT, 'node_modules', dep), join(box, 'remote-lib', 'node_modules', dep), 'dir');
  }
  const remoteBin = join(box, 'remote-bin');
  mkdirSync(remoteBin);
  writeFileSync(join(remoteBin, 'flume'), `#!/bin/sh\nexec '${process.execPath}' '${join(installed, 'dist', 'bin', 'flume.js')}' "$@"\n`);
  chmodSync(join(remoteBin, 'flume'), 0o755);
  // A flume of another minor version, for the handshake to refuse.
  writeFileSync(join(remoteBin, 'flume-old'), `#!/bin/sh\necho '{"flume":"0.0.9","node":"20"}'\n`);
  chmodSync(join(remoteBin, 'flume-old'), 0o755);

  // The remote's repository and its fake agent; its state is the remote HOME's XDG_STATE_HOME.
  remoteRepo = agentRepo({ onPrompt: [{ match: '^Answer', actions: [{ say: 'Thanks.' }] }, { actions: [{ say: 'Which colour should it be?' }] }] });
  const remoteHome = join(box, 'remote-home');
  mkdirSync(remoteHome);
  remoteState = join(remoteHome, 'state', 'flume');
  mkdirSync(remoteState, { recursive: true, mode: 0o700 });
  await trustMade(remoteState);
  const given: Record<string, string | undefined> = { ...process.env, ...podman?.env };
  const passed = ['FLUME_CONFIG_TIMEOUT_MS', 'FLUME_STATUS_CONFIG_WAIT_MS', 'GIT_CONFIG_NOSYSTEM', 'CONTAINERS_CONF'].filter((name) => given[name]).map((name) => `export ${name}='${given[name]}'\n`).join('');
  const force = join(box, 'force-command');
  writeFileSync(force, `#!/bin/bash
# The other host: another HOME, state and PATH on this machine, the same account.
unset FLUME_STATE_DIR FLUME_HOST
export HOME='${remoteHome}' XDG_STATE_HOME='${join(remoteHome, 'state')}' PATH='${remoteBin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin' LANG=C.UTF-8
${passed}cd "$HOME"
exec bash -c "$SSH_ORIGINAL_COMMAND"
`);
  chmodSync(force, 0o755);

  // The sshd: a host key and a user key of the test's own; a second port that takes passwords only.
  const { localBin } = await startTestSshd(box, force, { passwordOnly: true });

  localRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'ok' }] }] });
  localEnv = localRepo.env;
  localEnv.PATH = `${localBin}:${process.env.PATH}`;
  // Each host's reading within a minute: the machine running the suite is loaded (the test of the limit sets its own).
  localEnv.FLUME_HOST_READ_MS = '60000';
}, 240_000);

afterAll(async () => {
  if (localEnv) spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${await controlPath({ target: 'build-1' }, localEnv)}`, 'build-1'], { env: localEnv });
  if (box) await stopSshd();
  if (remoteState) {
    await stopSupervisor(remoteState);
    await killTmuxServer(join(remoteState, 'tmux', 'flume.sock'));
  }
  await remoteRepo?.cleanup();
  await localRepo?.cleanup();
  made.forEach(remove);
}, 60_000);

describe('other hosts, over a real sshd', { timeout: 360_000 }, () => {
  afterEach(() => {
    for (const pid of started.splice(0)) signalQuietly(pid, 'SIGKILL');
  });

  it('adds a host it reaches with the same flume, and refuses one it cannot reach, a password-only one, and another version', async () => {
    const added = await here(['hosts', 'add', 'remote', 'build-1', '--json']);
    expect(added.code, added.stdout + added.stderr).toBe(0);
    expect(validResult('hosts', json(added))).toMatchObject({ hosts: [{ name: 'remote', target: 'build-1', flume: 'flume' }], flume: JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version });

    // A password is never asked for: an askpass program ssh would run in its place notes that it was.
    const asked = join(box, 'askpass-was-asked');
    writeFileSync(join(box, 'askpass'), `#!/bin/sh\ntouch '${asked}'\necho wrong\n`);
    chmodSync(join(box, 'askpass'), 0o755);
    const password = await flume(['hosts', 'add', 'pw', 'password-only', '--json'], { env: { ...localEnv, SSH_ASKPASS: join(box, 'askpass'), SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' }, cwd: localRepo.repo });
    // Never asked (the askpass never ran), so nothing waited on an answer.
    expect(existsSync(asked)).toBe(false);
    expect(json(password).error).toMatchObject({ code: 'HOST_UNREACHABLE', details: { host: 'pw', target: 'password-only' } });
    expect(json(password).error.message).toMatch(/Permission denied/);

    const old = await here(['hosts', 'add', 'old', 'build-1', '--flume', 'flume-old', '--json']);
    expect(json(old).error).toMatchObject({ code: 'HOST_VERSION_MISMATCH', details: { remote: '0.0.9' } });
    const none = await here(['hosts', 'add', 'none', 'build-1', '--flume', 'no-flume-here']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^HOST_VERSION_MISMATCH .*no-flume-here --version --json/);

    const spare = await here(['hosts', 'add', 'spare', 'build-1']);
    expect(spare.stdout, spare.stderr).toMatch(/^added spare \(build-1\): flume /);
    const removed = await here(['hosts', 'remove', 'spare', '--json']);
    expect(validResult('hosts', json(removed)).hosts.map((h: { name: string }) => h.name)).toEqual(['remote']);
    // The host options may come before the command too.
    const first = await here(['--host', 'remote', 'status', '--json']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(json(first).places).toEqual([]);
    const listed = await here(['hosts', '--json']);
    expect(validResult('hosts', json(listed)).hosts.map((h: { name: string }) => h.name)).toEqual(['remote']);
    // The list is the user's own state here, never the repository's.
    expect(existsSync(join(localRepo.state, 'hosts.json'))).toBe(true);
    expect(readdirSync(localRepo.repo)).not.toContain('hosts.json');
  });

  it('launches on the remote with the fake agent, its prompt taken there, and nothing made here', async () => {
    const launched = await here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'far', '--brief', 'Work far away.', '--no-watch', '--json']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(json(launched).place).toMatchObject({ id: 'fix/far', repo: remoteRepo.repo });
    const place = await remoteStatus('fix/far');
    expect(place.stage).toMatchObject({ delivery: 'taken', agent: { driver: 'claude-code', host: 'tmux' } });
    expect(prompts(place.stage.agent.transcript).join('\n')).toContain('Work far away.');
    // The remote's own state holds it; this host's knows no repository.
    expect(readFileSync(join(remoteState, 'repositories.json'), 'utf8')).toContain(remoteRepo.repo);
    expect(existsSync(join(localRepo.state, 'repositories.json'))).toBe(false);
    // The remote's own doctor, of the remote's repository.
    const doctor = await here(['doctor', '--host', 'remote', '--repo', remoteRepo.repo, '--json']);
    expect(json(doctor), doctor.stderr).toMatchObject({ version: 1, repo: remoteRepo.repo, checks: expect.any(Array) });
    expect(doctor.code).toBe(json(doctor).ok ? 0 : 1);
  });

  it('reads both hosts in one schema-valid status, each place and repository with its host', async () => {
    const local = await here(['launch', '--kind', 'fix', '--name', 'near', '--brief', 'Work here.', '--no-start', '--no-watch']);
    expect(local.code, local.stderr).toBe(0);
    // runFlume validates every status --json against status.schema.json.
    const all = await here(['status', '--all-hosts', '--json']);
    expect(all.code, all.stdout + all.stderr).toBe(0);
    const report = json(all);
    expect(report.places.map((p: { host: string; id: string }) => `${p.host}:${p.id}`).sort()).toEqual(['local:fix/near', 'remote:fix/far']);
    expect(report.repositories.map((r: { host: string; root: string }) => `${r.host} ${r.root}`).sort()).toEqual([`local ${localRepo.repo}`, `remote ${remoteRepo.repo}`].sort());
    expect(report.hosts).toEqual([expect.objectContaining({ name: 'local', state: 'answered' }), expect.objectContaining({ name: 'remote', target: 'build-1', state: 'answered' })]);
    const named = await here(['status', '--host', 'local', '--host', 'remote', '--json']);
    expect(json(named).places.length).toBe(2);
    // The live view of every host, as plain blocks (not a terminal): each place named as commands take it.
    const watched = await flume(['status', '--watch', '--all-hosts'], { env: localEnv, cwd: localRepo.repo, timeoutMs: 25_000 });
    expect(watched.stdout, watched.stderr).toMatch(/^flume: 2 places\n/m);
    expect(watched.stdout).toMatch(/^fix\/near +active/m);
    expect(watched.stdout).toMatch(/^remote:fix\/far +active/m);
    // On a terminal (a tmux pane of the test's own), `status --watch --host` is the remote's own interactive view, under ssh -t.
    const socket = join(box, 'view.sock');
    const line = [process.execPath, join(PROJECT, 'dist', 'bin', 'flume.js'), 'status', '--watch', '--host', 'remote', '--repo', remoteRepo.repo].map((w) => `'${w}'`).join(' ');
    execFileSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '150', '-y', '30', line], { env: { ...localEnv, TMUX: '' }, cwd: localRepo.repo });
    try {
      const screen = () => execFileSync('tmux', ['-S', socket, 'capture-pane', '-p'], { encoding: 'utf8' });
      await waitFor(async () => /fix\/far/.test(screen()), 'the remote\'s view on the terminal');
      expect(screen()).not.toMatch(/fix\/near/);
      expect(screen()).toMatch(/^flume: 1 place/m);
      // Interactive: its keys, which act on that host.
      expect(screen()).toMatch(/a attach {2}t tell/);
    } finally {
      spawnSync('tmux', ['-S', socket, 'kill-server']);
    }
    // On a terminal, `status --watch --all-hosts` is the interactive view of both hosts: its keys act on each place's own host.
    const allSocket = join(box, 'all-view.sock');
    const allLine = [process.execPath, join(PROJECT, 'dist', 'bin', 'flume.js'), 'status', '--watch', '--all-hosts'].map((w) => `'${w}'`).join(' ');
    execFileSync('tmux', ['-S', allSocket, '-f', '/dev/null', 'new-session', '-d', '-x', '150', '-y', '30', allLine], { env: { ...localEnv, TMUX: '', TERM: 'xterm-256color', LANG: 'C.UTF-8' }, cwd: localRepo.repo });
    try {
      const tmux = (...args: string[]) => execFileSync('tmux', ['-S', allSocket, ...args], { encoding: 'utf8' });
      const screen = () => tmux('capture-pane', '-p');
      const until = (what: string, test: RegExp) => waitFor(async () => test.test(screen()), what).catch((error: Error) => {
        throw new Error(`${error.message}; the screen:\n${screen()}`);
      });
      await until('both hosts in the interactive view', /^flume: 2 places[\s\S]*remote:fix\/far/m);
      expect(screen()).toMatch(/a attach {2}t tell/);
      const row = screen().split('\n').find((l) => /remote:fix\/far/.test(l))!;
      if (!row.startsWith('>')) tmux('send-keys', '-t', '0', 'j');
      await until('the remote place selected', /^> remote:fix\/far/m);
      tmux('send-keys', '-t', '0', 't');
      tmux('send-keys', '-t', '0', '-l', 'Answer from the view');
      tmux('send-keys', '-t', '0', 'Enter');
      await until('the tell answered', /told remote:fix\/far on remote/);
      await waitFor(async () => prompts((await remoteStatus('fix/far')).stage.agent.transcript).includes('Answer from the view'), 'the remote agent to take the tell');
      // Attaching is ssh -t to that host, its own tmux pane on this terminal (C-b d leaves it).
      await waitFor(async () => (await remoteStatus('fix/far')).stage.agent.state === 'idle', 'the remote agent to end its turn');
      tmux('send-keys', '-t', '0', 'a');
      await until('the remote pane on this terminal', /Thanks\./);
      tmux('send-keys', '-t', '0', 'C-b', 'd');
      await until('the view back from the remote pane', /back from remote:fix\/far's pane/);
    } finally {
      spawnSync('tmux', ['-S', allSocket, 'kill-server']);
    }
    const text = await here(['status', '--all-hosts']);
    expect(text.stdout).toMatch(/^host local\n {2}fix\/near/m);
    expect(text.stdout, text.stderr).toMatch(/^host remote \(build-1\)\n {2}fix\/far/m);
  });

  it('hands the remote every text exactly: quotes, $(…), a leading "-", 100 KB, from a file here and as an argument', async () => {
    const brief = `-rf "quoted" 'single' $(touch /tmp/flume-hosts-pwned) \`id\` ; | & \\ é\n${'x'.repeat(100 * 1024)}\nend`;
    // Named relative to this command's folder: a file here, which the remote (in its own home) could not open by that name.
    writeFileSync(join(box, 'brief.md'), brief);
    const launched = await flume(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'exact', '--brief-file', 'brief.md', '--no-start', '--no-watch'], { env: localEnv, cwd: box });
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect((await remoteStatus('fix/exact')).brief).toBe(brief);
    const odd = `it's "$(echo no)" and \`no\` and $HOME`;
    const asArgument = await here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'argued', `--brief=${odd}`, '--no-start', '--no-watch']);
    expect(asArgument.code, asArgument.stdout + asArgument.stderr).toBe(0);
    expect((await remoteStatus('fix/argued')).brief).toBe(odd);
    expect(existsSync('/tmp/flume-hosts-pwned')).toBe(false);
    for (const id of ['fix/exact', 'fix/argued']) expect((await here(['drop', `remote:${id}`, '--repo', remoteRepo.repo, '--no-watch'])).code).toBe(0);
  });

  it('tells, stops, retries, drops and tidies the remote place, with no secret in any argv on either side', async () => {
    const secret = `Answer: the secret ${'s3cr3t'}-${Date.now()}`;
    const told = join(box, 'tell.md');
    writeFileSync(told, `${secret}\nand a second line`);
    const seen = watchArgv(['s3cr3t']);
    const tell = await here(['tell', 'remote:fix/far', '--repo', remoteRepo.repo, '--file', told, '--no-watch', '--json']);
    expect(tell.code, tell.stdout + tell.stderr).toBe(0);
    expect(json(tell)).toMatchObject({ taken: true });
    // The MCP tools take a host: the call runs on that host's flume, its text as a value ("--…" stays text).
    const client = new Client({ name: 'flume-test', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(PROJECT, 'plugins/claude/bin/flume-mcp.mjs')], env: localEnv, cwd: localRepo.repo }));
    try {
      const read: any = await client.callTool({ name: 'status', arguments: { place: 'fix/far', repo: remoteRepo.repo, host: 'remote' } });
      expect(read.isError, JSON.stringify(read)).toBeFalsy();
      expect(read.structuredContent.places.map((p: { id: string }) => p.id)).toEqual(['fix/far']);
      await waitFor(async () => (await remoteStatus('fix/far')).stage.agent.state === 'idle', 'the remote agent to end its turn');
      const mcpTell: any = await client.callTool({ name: 'tell', arguments: { place: 'fix/far', text: '--Answer by MCP', repo: remoteRepo.repo, host: 'remote' } });
      expect(mcpTell.isError, JSON.stringify(mcpTell)).toBeFalsy();
      expect(mcpTell.structuredContent).toMatchObject({ taken: true });
      const unknown: any = await client.callTool({ name: 'status', arguments: { host: 'nowhere' } });
      expect(unknown.isError).toBe(true);
      expect(unknown.content[0].text).toMatch(/^UNKNOWN_HOST /);
    } finally {
      await client.close();
    }
    const launched = await here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'hush', '--brief', `${secret}\nin the brief`, '--no-watch']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(seen()).toEqual([]);
    const place = await remoteStatus('fix/far');
    expect(prompts(place.stage.agent.transcript)).toContain(`${secret}\nand a second line`);
    expect(prompts(place.stage.agent.transcript)).toContain('--Answer by MCP');

    const stopped = await here(['stop', '--host', 'remote', 'fix/far', '--repo', remoteRepo.repo, '--force', '--no-watch']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect((await remoteStatus('fix/far')).stage.agent?.state ?? 'exited').toMatch(/exited|not-up/);
    const retried = await here(['retry', 'remote:fix/far', '--repo', remoteRepo.repo, '--no-watch', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect((await remoteStatus('fix/far')).stage).toMatchObject({ attempt: 2, delivery: 'taken' });
    for (const id of ['fix/far', 'fix/hush']) {
      const dropped = await here(['drop', `remote:${id}`, '--repo', remoteRepo.repo, '--reason', 'done here', '--no-watch']);
      expect(dropped.code, dropped.stdout + dropped.stderr).toBe(0);
    }
    expect((await remoteStatus('fix/far')).state).toBe('dropped');
    const tidied = await here(['tidy', '--host', 'remote', '--repo', remoteRepo.repo, '--json']);
    expect(tidied.code, tidied.stdout + tidied.stderr).toBe(0);
    // The remote's own tidy decided, by its own rules: the place removed, or kept with its reason.
    const outcome = json(tidied).outcomes.find((o: { id: string }) => o.id === 'fix/far');
    expect(outcome?.action, tidied.stdout).toMatch(/^(removed|kept)$/);
    const after = json(await here(['status', '--host', 'remote', '--repo', remoteRepo.repo, '--json'])).places.find((p: { id: string }) => p.id === 'fix/far');
    if (outcome.action === 'removed') expect(after).toBeUndefined();
    else expect(after.state, tidied.stdout).toBe('kept');
  });

  it.skipIf(!podman)("launches into a container of the remote's engine, reads it there, tells its agent and stops it inside", async () => {
    // A repository on the remote whose agents run in containers of the tests' image.
    const boxed = agentRepo({ onPrompt: [{ match: '^Answer', actions: [{ say: 'Noted.' }, { hang: true }] }, { actions: [{ say: 'Which colour should it be?' }] }] });
    made.push(boxed.state);
    const { agents } = JSON.parse(readFileSync(join(boxed.repo, '.flumerc.json'), 'utf8'));
    const config = {
      kinds: [{ name: 'one', stages: [{ name: 'code', prompt: 'Make the change: {brief}', deliverable: 'commit' }] }],
      agent: { host: 'tmux', container: { engine: 'podman', image: podman!.image, mounts: [...HOST_PROGRAMS, `${PROJECT}:ro`, `${boxed.configDir}:ro`], network: 'none' } },
      // No config folder of the operator's inside: the agent's is in the place's home.
      agents: { 'claude-code': { ...agents['claude-code'], configDir: undefined } },
      limits: { promptTimeout: '10s', startTimeout: '30s' },
    };
    writeFileSync(join(boxed.repo, '.flumerc.json'), `${JSON.stringify(config, null, 2)}\n`);
    execFileSync('git', ['-C', boxed.repo, 'commit', '-qam', 'containers'], { stdio: 'ignore' });
    await trustMade(remoteState);
    let name = '';
    try {
      const launched = await here(['launch', '--host', 'remote', '--repo', boxed.repo, '--kind', 'one', '--name', 'boxed', '--brief', 'Paint it.', '--no-watch', '--json']);
      expect(launched.code, launched.stdout + launched.stderr).toBe(0);
      const read = async () => {
        const result = await here(['status', 'remote:one/boxed', '--repo', boxed.repo, '--json']);
        expect(result.code, result.stdout + result.stderr).toBe(0);
        return json(result).places[0];
      };
      const place = await read();
      name = place.container.name;
      // The remote's engine made it (on this machine, the same engine): status reads its state there.
      expect(place.container).toEqual({ engine: 'podman', image: podman!.image, name: expect.stringMatching(/^flume-one--boxed-/), state: 'running' });
      expect(place.stage).toMatchObject({ delivery: 'taken', agent: { host: 'container', pane: expect.stringMatching(new RegExp(`^podman\\|${name}\\|tmux\\|`)) } });
      expect(prompts(place.stage.agent.transcript)[0]).toMatch(/^Make the change: Paint it\./);
      expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8', env: { ...process.env, ...podman!.env } })).toContain('fake-claude.mjs');

      await waitFor(async () => (await read()).stage.agent.state === 'idle', 'the agent in the container to end its turn');
      const told = await here(['tell', 'remote:one/boxed', '--repo', boxed.repo, 'Answer: blue', '--no-watch', '--json']);
      expect(told.code, told.stdout + told.stderr).toBe(0);
      expect(json(told)).toMatchObject({ taken: true });
      expect(prompts(place.stage.agent.transcript)).toContain('Answer: blue');

      const stopped = await here(['stop', '--host', 'remote', 'one/boxed', '--repo', boxed.repo, '--force', '--no-watch']);
      expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
      expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8', env: { ...process.env, ...podman!.env } }).trim().split('\n').slice(1).map((l) => l.trim())).toEqual(['/run/podman-init -- sleep infinity', 'sleep infinity']);
      expect((await read()).stage.agent?.state ?? 'exited').toBe('exited');
    } finally {
      if (name) spawnSync('podman', ['rm', '-f', '-t', '0', name], { env: { ...process.env, ...podman!.env } });
      await boxed.cleanup();
    }
  });

  it('converges on the remote\'s next command after ssh is killed in the middle of a remote launch', async () => {
    remoteRepo.script({ startDelayMs: 3000, onPrompt: [{ actions: [{ say: 'ok' }] }] });
    const launch = here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'cut', '--brief', 'Cut off.', '--no-watch', '--json']);
    // The relay's ssh, once the remote has begun the place: killed as a dropped connection would end it.
    const record = join(remoteRepo.repo, '.git', 'flume', 'places', 'fix--cut.json');
    await waitFor(async () => existsSync(record), 'the remote launch to begin');
    const relays = sshRelays();
    expect(relays.length).toBeGreaterThan(0);
    for (const pid of relays) signalQuietly(pid, 'SIGKILL');
    const cut = await launch;
    expect(cut.code).toBe(1);
    expect(json(cut).error).toMatchObject({ code: 'HOST_UNREACHABLE', details: { host: 'remote' } });
    expect(json(cut).error.fix).toContain('flume status --host remote');
    // The remote goes on as after any crash: its next commands find the place and bring it to its stage.
    let place = await remoteStatus('fix/cut');
    for (const until = Date.now() + 60_000; place.stage?.delivery !== 'taken' && Date.now() < until; await sleep(1000)) place = await remoteStatus('fix/cut');
    if (place.stage?.delivery !== 'taken') {
      const retried = await here(['retry', 'remote:fix/cut', '--repo', remoteRepo.repo, '--no-watch']);
      expect(retried.code, retried.stdout + retried.stderr).toBe(0);
      place = await remoteStatus('fix/cut');
    }
    expect(place).toMatchObject({ state: 'active', stage: { delivery: 'taken' } });
    expect(place.problems).toEqual([]);
    expect((await here(['drop', 'remote:fix/cut', '--repo', remoteRepo.repo, '--no-watch'])).code).toBe(0);
  });

  it('ends a relayed follow on both hosts at once when SIGTERM ends it here, with no event to wake it', async () => {
    const launched = await here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'held', '--brief', 'Held.', '--no-start', '--no-watch']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const events = await lastEventId(join(remoteRepo.repo, '.git'));
    const follow = await relayedHere(['--host', 'remote', 'events', '--follow', '--repo', remoteRepo.repo]);
    await waitFor(async () => follow.output().includes('fix/held'), 'the events so far');
    follow.child.kill('SIGTERM');
    expect(await waitGone(follow.ssh, 5000), 'the local ssh').toBe(true);
    expect(await waitGone(follow.remote, 5000), 'the remote flume').toBe(true);
    expect(await follow.exit, follow.output()).toBe(143);
    expect(await lastEventId(join(remoteRepo.repo, '.git'))).toBe(events);
  });

  it('ends a relayed follow on both hosts at once when its reader here has gone, at the next event written', async () => {
    const follow = await relayedHere(['--host', 'remote', 'events', '--follow', '--repo', remoteRepo.repo]);
    follow.child.stdout.destroy();
    const another = await here(['launch', '--host', 'remote', '--repo', remoteRepo.repo, '--kind', 'fix', '--name', 'piped', '--brief', 'Piped.', '--no-start', '--no-watch']);
    expect(another.code, another.stdout + another.stderr).toBe(0);
    expect(await waitGone(follow.ssh, 10_000), 'the local ssh').toBe(true);
    expect(await waitGone(follow.remote, 5000), 'the remote flume').toBe(true);
    expect(await follow.exit).toBe(141);
  });

  it('ends the remote\'s relayed wait when its ssh is killed, as a dropped connection ends it', async () => {
    const waited = await relayedHere(['--host', 'remote', 'wait', 'fix/held', '--repo', remoteRepo.repo, '--for', 'gone', '--no-watch']);
    signalQuietly(waited.ssh, 'SIGKILL');
    expect(await waitGone(waited.remote, 5000), 'the remote flume').toBe(true);
    expect(await waited.exit).toBe(1);
    expect(waited.output()).toMatch(/^HOST_UNREACHABLE /m);
  });

  it('refuses a host whose sshd is gone, doing nothing here, and still reads every host within its limit', async () => {
    await stopSshd();
    const before = json(await here(['status', '--json'])).places.map((p: { id: string }) => p.id);
    const refused = await here(['tell', 'remote:fix/cut', '--repo', remoteRepo.repo, 'hello', '--json']);
    expect(refused.code).toBe(1);
    expect(json(refused).error).toMatchObject({ code: 'HOST_UNREACHABLE', details: { host: 'remote', target: 'build-1' } });
    expect(json(refused).error.message).toMatch(/Connection refused/);
    expect(json(await here(['status', '--json'])).places.map((p: { id: string }) => p.id)).toEqual(before);
    // Within its limit: the host that does not answer is named unreachable, beside the places read here.
    const all = await flume(['status', '--all-hosts', '--json'], { env: { ...localEnv, FLUME_HOST_READ_MS: '5000' }, cwd: localRepo.repo });
    expect(all.code, all.stdout + all.stderr).toBe(0);
    const report = json(all);
    expect(report.places.map((p: { host: string; id: string }) => `${p.host}:${p.id}`)).toEqual(['local:fix/near']);
    const remote = report.hosts.find((h: { name: string }) => h.name === 'remote');
    expect(remote).toMatchObject({ state: 'unreachable', error: { code: 'HOST_UNREACHABLE' } });
    expect(Date.parse(remote.lastReadingAt)).toBeGreaterThan(0);
  });
});
