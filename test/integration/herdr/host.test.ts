import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { herdrHost } from '../../../plugins/herdr/index.js';
import { lookAtPane, splitBursts, type AgentHandle } from '../../../core/index.js';
import { isFlumeError } from '../../../core/api/errors.js';
import { which } from '../../../core/support/exec.js';
import { fakeHerdr, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { remove, tempDir } from '../../helpers/repo.js';

const hasTmux = which('tmux') !== undefined;
/** The kernel's last pid handed out, which root may set: the next process gets the next free pid after it. */
const LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canSetLastPid = (() => {
  try {
    accessSync(LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

/** A program for a pane: dumps its env and cwd, records raw input, or dies, as the mode says. */
const PROGRAM = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
const [mode, out] = process.argv.slice(2);
if (mode === 'env') writeFileSync(out, JSON.stringify({ env: process.env, cwd: process.cwd(), args: process.argv.slice(4) }));
// Dies when told (a file beside its output), not on a timer a loaded machine can outrun.
if (mode === 'die') setInterval(() => existsSync(out + '.die') && process.exit(3), 50);
// Runs a command in its foreground when told (as an agent runs a tool), and names its pid.
if (mode === 'child') {
  const timer = setInterval(async () => {
    if (!existsSync(out + '.spawn')) return;
    clearInterval(timer);
    const { spawn } = await import('node:child_process');
    writeFileSync(out + '.child', String(spawn('sleep', ['300'], { stdio: 'ignore' }).pid));
  }, 50);
}
writeFileSync(out + '.in', '');
process.stdin.setRawMode(true);
if (mode === 'stubborn') {
  process.on('SIGHUP', () => {});
  process.stdin.on('error', () => {});
  process.stdout.on('error', () => {});
  setInterval(() => {}, 1000);
}
process.stdin.on('data', (data) => appendFileSync(out + '.in', data));
process.stdout.write('READY ' + mode + '\\r\\n');
`;

/** True when the process is gone, or a zombie its parent (the fake's tmux server) has not reaped yet. */
function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
}

describe.skipIf(!hasTmux)('herdr pane host, against a fake herdr', () => {
  let dir: string;
  let program: string;
  let herdr: FakeHerdr;
  let undo: () => void;
  let host: ReturnType<typeof herdrHost>;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', FLUME_ODD: `a;b 'q' "$HOME" \\ $(no)\nline two` };

  async function start(mode: string, cwd = dir, argv: string[] = [process.execPath, program], extra: string[] = [], startEnv: Record<string, string> = env) {
    const out = join(dir, `${mode}-${Math.random().toString(36).slice(2)}`);
    const { pane, pid, identity } = await host.open({ title: `fix/t:${mode}`, cwd, argv: [...argv, mode, out, ...extra], env: startEnv });
    await waitFor(async () => (await host.capture(pane!))?.includes(`READY ${mode}`), `${mode} ready`);
    return { pane: pane!, pid: pid!, identity, out, input: () => readFileSync(`${out}.in`, 'utf8') };
  }

  beforeAll(() => {
    dir = tempDir('flume-herdr-host-');
    program = join(dir, 'program.mjs');
    writeFileSync(program, PROGRAM);
    herdr = fakeHerdr();
    undo = herdr.install();
    host = herdrHost({ stateDir: join(dir, 'state') });
  });

  afterAll(() => {
    undo();
    herdr.cleanup();
    remove(dir);
  });

  it('is available while herdr on PATH says its server runs, and not otherwise', async () => {
    expect(host.key).toBe('herdr');
    expect(await host.available()).toBe(true);
    herdr.setRunning(false);
    expect(await host.available()).toBe(false);
    herdr.setRunning(true);
    expect(await herdrHost({ binary: join(dir, 'no-such-herdr') }).available()).toBe(false);
    expect(herdr.callsOf('status', 'server', '--json').length).toBeGreaterThanOrEqual(2);
  });

  it('opens a herdr workspace whose program has exactly the env and cwd given, with herdr and its shell adding nothing', async () => {
    const cwd = join(dir, "odd 'dir' $x");
    mkdirSync(cwd);
    herdr.clearLog();
    const { pane, pid, out } = await start('env', cwd);
    expect(pane).toMatch(/^w\d+:p\d+$/);
    const seen = JSON.parse(readFileSync(out, 'utf8'));
    expect(seen.env).toEqual(env);
    expect(seen.cwd).toBe(cwd);
    expect(pid).toBeGreaterThan(0);
    // The shell exec'd the program: the pane's root pid is the program's own.
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain(program);
    // A program herdr knows no kind of: a tab with no --env, and the shell execs it with exactly flume's env.
    const workspace = herdr.callsOf('workspace', 'create')[0];
    expect(workspace.argv).toEqual(['workspace', 'create', '--cwd', cwd, '--label', "odd 'dir' $x", '--no-focus']);
    const created = herdr.callsOf('tab', 'create')[0];
    expect(created.argv).toEqual(['tab', 'create', '--workspace', pane.split(':')[0], '--cwd', cwd, '--label', 'fix/t:env', '--no-focus']);
    const typed = herdr.callsOf('pane', 'run')[0].argv;
    expect(typed[2]).toBe(pane);
    expect(typed[3]).toMatch(/^ exec env -i \/bin\/sh '[^']+\.sh'$/);
    // Nothing of the env or argv was typed into herdr's shell, and the launch script is gone.
    expect(typed.join(' ')).not.toContain('FLUME_ODD');
    expect(readdirSync(join(dir, 'state')).filter((name) => name.startsWith('launch-'))).toEqual([]);
    await host.close(pane);
  });

  it("starts a program herdr knows (claude) with agent start: flume's arguments unchanged, the environment by --env and secrets by a sourced script, a tab per place under its repository's workspace", async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'claude'), `#!${process.execPath}\n${PROGRAM}`, { mode: 0o755 });
    const project = join(dir, 'project');
    for (const place of ['fix--a', 'fix--b']) mkdirSync(join(project, 'places', place), { recursive: true });
    const secret = `sk-ant-flume-${Math.random().toString(36).slice(2)}`;
    const agentEnv = { ...env, ANTHROPIC_API_KEY: secret };
    herdr.clearLog();
    const args = ['--append-system-prompt', "it's \"odd\" $HOME; --help", '-x'];
    const a = await start('env', join(project, 'places', 'fix--a'), [join(bin, 'claude')], args, agentEnv);
    const b = await start('raw', join(project, 'places', 'fix--b'), [join(bin, 'claude')], [], agentEnv);
    const seen = JSON.parse(readFileSync(a.out, 'utf8'));
    expect(seen.args).toEqual(args);
    expect(seen.cwd).toBe(join(project, 'places', 'fix--a'));
    // flume's environment, its program's folder first on PATH, and herdr's pane variables kept.
    expect(seen.env).toMatchObject({ ...agentEnv, PATH: `${bin}:${env.PATH}`, HERDR_PANE_ID: a.pane });
    const started = herdr.callsOf('agent', 'start').map((call) => call.argv);
    expect(started[0]).toEqual(['agent', 'start', 'fix-t-env', '--kind', 'claude', '--pane', a.pane, '--', 'env', a.out, ...args]);
    expect(started[1].slice(0, 7)).toEqual(['agent', 'start', 'fix-t-raw', '--kind', 'claude', '--pane', b.pane]);
    // One workspace for the repository, a tab in it for each place.
    expect(herdr.callsOf('workspace', 'create').map((call) => call.argv)).toEqual([['workspace', 'create', '--cwd', project, '--label', 'project', '--no-focus']]);
    const tabs = herdr.callsOf('tab', 'create').map((call) => call.argv);
    expect(tabs.map((argv) => argv.slice(0, 4))).toEqual([['tab', 'create', '--workspace', a.pane.split(':')[0]], ['tab', 'create', '--workspace', a.pane.split(':')[0]]]);
    const envs = tabs[0].flatMap((word, i) => (tabs[0][i - 1] === '--env' ? [word] : []));
    expect(envs).toEqual(expect.arrayContaining([`PATH=${bin}:${env.PATH}`, `TERM=xterm-256color`, `FLUME_ODD=${env.FLUME_ODD}`]));
    // The secret is in no argv: not in --env, not in the line typed (only the script's path), and the script is gone.
    for (const call of herdr.calls()) expect(call.argv.join(' ')).not.toContain(secret);
    expect(herdr.callsOf('pane', 'run').map((call) => call.argv[3])).toEqual([expect.stringMatching(/^ \. '[^']+\.sh'$/), expect.stringMatching(/^ \. '[^']+\.sh'$/)]);
    expect(readdirSync(join(dir, 'state')).filter((name) => name.startsWith('launch-'))).toEqual([]);
    expect(await host.alive(a.pane)).toBe(true);
    await host.close(a.pane);
    expect(exited(a.pid)).toBe(true);
    await host.close(b.pane);
  });

  it.skipIf(!canSetLastPid)('knows the program by its foreground group, not its lowest pid: a command it runs under a wrapped-around pid leaves it alive and its own', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'claude'), `#!${process.execPath}\n${PROGRAM}`, { mode: 0o755 });
    // Both ways a program starts: exec'd by the pane's shell, and typed by herdr's `agent start` as a job of the shell.
    for (const argv of [[process.execPath, program], [join(bin, 'claude')]]) {
      const { pane, pid, identity, out } = await start('child', dir, argv);
      expect(identity).toMatch(new RegExp(`^${pid}@\\d+$`));
      // The kernel hands out pids from 1000 again, as it does once they pass pid_max.
      writeFileSync(LAST_PID, '1000');
      writeFileSync(`${out}.spawn`, '');
      await waitFor(() => existsSync(`${out}.child`) && readFileSync(`${out}.child`, 'utf8') !== '', 'the command');
      const child = Number(readFileSync(`${out}.child`, 'utf8'));
      expect(child).toBeLessThan(pid);
      expect(await host.alive(pane)).toBe(true);
      expect(await host.identity(pane)).toBe(identity);
      await host.close(pane);
      expect(exited(pid)).toBe(true);
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // Gone with its terminal.
      }
    }
  });

  it('types literal text in bursts of 200, and presses keys by herdr name', async () => {
    const { pane, input } = await start('raw');
    herdr.clearLog();
    const text = `${'x'.repeat(198)}a;-y "$HOME" \\; --help ${'é日本❯'.repeat(60)}-x;`;
    await host.type(pane, text);
    await waitFor(() => input().endsWith('-x;'), 'typed text');
    expect(input()).toBe(text);
    expect(herdr.callsOf('pane', 'send-text').map((call) => call.argv[3])).toEqual(splitBursts(text, 200));
    await host.keys(pane, ['Enter', 'C-u', 'Escape', 'C-c']);
    await waitFor(() => input().endsWith('\x03'), 'keys');
    expect(input().slice(-4)).toBe('\r\x15\x1b\x03');
    expect(herdr.callsOf('pane', 'send-keys').map((call) => call.argv[3])).toEqual(['enter', 'ctrl+u', 'esc', 'ctrl+c']);
    await host.close(pane);
  });

  it('sends text as one bracketed paste it frames itself when asked, whatever the text', async () => {
    const { pane, input } = await start('raw');
    herdr.clearLog();
    const text = `!${'x'.repeat(250)} ? é日本`;
    await host.type(pane, text, { paste: true });
    await waitFor(() => input().endsWith('\x1b[201~'), 'the paste');
    expect(input()).toBe(`\x1b[200~${text}\x1b[201~`);
    expect(herdr.callsOf('pane', 'send-text').map((call) => call.argv[3])).toEqual([`\x1b[200~${text}\x1b[201~`]);
    await host.close(pane);
  });

  it('sends text with newlines as one bracketed paste, so no newline submits', async () => {
    const { pane, input } = await start('paste');
    await host.type(pane, 'line one\nline two\x1b[201~\tend');
    await waitFor(() => input().includes('\x1b[201~'), 'paste');
    expect(input()).toBe('\x1b[200~line one\nline two\tend\x1b[201~');
    await host.close(pane);
  });

  it('captures the screen, and once the program exits the pane is not alive, reads as nothing and refuses text', async () => {
    const { pane, out, identity } = await start('die');
    expect(await host.capture(pane)).toContain('READY die');
    // One look answers identity, alive and the screen, in two herdr commands.
    herdr.clearLog();
    expect(await host.look!(pane)).toEqual({ identity, alive: true, screen: expect.stringContaining('READY die') });
    expect(herdr.calls().map((call) => call.argv.slice(0, 2))).toEqual([['pane', 'process-info'], ['pane', 'read']]);
    writeFileSync(`${out}.die`, '');
    await waitFor(async () => !(await host.alive(pane)), 'death');
    // The pane went with its program (its shell exec'd it): no pane to look at.
    expect(await host.look!(pane)).toBeUndefined();
    expect(await host.capture(pane)).toBeUndefined();
    await expect(host.type(pane, 'hello')).rejects.toSatisfy((error) => isFlumeError(error, 'AGENT_NOT_UP'));
    await expect(host.keys(pane, ['Enter'])).rejects.toSatisfy((error) => isFlumeError(error, 'AGENT_NOT_UP'));
    await host.close(pane);
  });

  it('closes a pane and its program, even one that ignores SIGHUP', async () => {
    for (const mode of ['raw', 'stubborn']) {
      const { pane, pid } = await start(mode);
      expect(await host.alive(pane)).toBe(true);
      await host.close(pane);
      expect(exited(pid)).toBe(true);
      expect(await host.alive(pane)).toBe(false);
      expect(herdr.callsOf('pane', 'close').some((call) => call.argv[2] === pane)).toBe(true);
    }
  });

  it('takes herdr failing to answer a look as an error, never as the pane gone, so the agent reads by its process instead', async () => {
    const { pane, pid, identity } = await start('raw');
    /** A herdr whose `pane process-info` fails with `code`, and which answers all else as the fake does. */
    const failing = (code: string) => {
      const file = join(dir, `herdr-${code}`);
      writeFileSync(file, `#!/bin/sh\nif [ "$1 $2" = "pane process-info" ]; then echo '{"id":"cli:pane:process-info","error":{"code":"${code}","message":"${code}"}}' >&2; exit 1; fi\nexec ${which('herdr')} "$@"\n`, { mode: 0o755 });
      return herdrHost({ binary: file, stateDir: join(dir, 'state') });
    };
    const handle = { sessionId: 's', driver: 'claude-code', host: 'herdr', cwd: dir, pane, pid, paneIdentity: identity } as AgentHandle;
    const unanswering = failing('request_timeout');
    await expect(unanswering.look!(pane)).rejects.toSatisfy((error) => isFlumeError(error, 'IO_FAILED'));
    expect(await lookAtPane(unanswering, handle)).toEqual({ own: true, alive: true });
    // Once the program is gone, the same failure reads as gone: the process table says so.
    await host.close(pane);
    expect(await lookAtPane(unanswering, handle)).toEqual({ own: false, alive: false });
    // herdr saying the pane is not there is an answer: no pane.
    expect(await failing('pane_not_found').look!(pane)).toBeUndefined();
  });

  it('refuses a bad program or env before asking herdr for anything', async () => {
    herdr.clearLog();
    await expect(host.open({ title: 't', cwd: dir, argv: ['A=b'], env: {} })).rejects.toSatisfy((error) => isFlumeError(error, 'BAD_USAGE'));
    await expect(host.open({ title: 't', cwd: dir, argv: ['true'], env: { '-u': 'x' } })).rejects.toSatisfy((error) => isFlumeError(error, 'BAD_USAGE'));
    expect(herdr.calls()).toEqual([]);
  });

  it('fails to open, leaving no pane, when the server is gone', async () => {
    herdr.setRunning(false);
    try {
      await expect(host.open({ title: 't', cwd: dir, argv: ['true'], env: {} })).rejects.toSatisfy((error) => isFlumeError(error, 'AGENT_START_FAILED'));
      expect((existsSync(join(dir, 'state')) ? readdirSync(join(dir, 'state')) : []).filter((name) => name.startsWith('launch-'))).toEqual([]);
    } finally {
      herdr.setRunning(true);
    }
  });
});
