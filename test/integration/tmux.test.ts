import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { splitBursts } from '../../core/index.js';
import { isFlumeError } from '../../core/api/errors.js';
import { lookAtPane, ownsPane } from '../../core/api/pane-host.js';
import { run, which } from '../../core/support/exec.js';
import { fakeClaude, readRecords, waitFor } from '../helpers/fake-claude/index.js';
import { remove } from '../helpers/repo.js';

const hasTmux = which('tmux') !== undefined;

/** A program for a pane: dumps its env and cwd, records raw input, or dies, as the mode says. */
const PROGRAM = `
import { appendFileSync, writeFileSync } from 'node:fs';
const [mode, out] = process.argv.slice(2);
if (mode === 'env') writeFileSync(out, JSON.stringify({ env: process.env, cwd: process.cwd() }));
if (mode === 'die') {
  setTimeout(() => process.stdout.write('dying now\\r\\n'), 100);
  setTimeout(() => process.exit(3), 300);
}
writeFileSync(out + '.in', '');
process.stdin.setRawMode(true);
if (mode === 'paste') process.stdout.write('\\x1b[?2004h');
if (mode === 'stubborn') {
  process.on('SIGHUP', () => {});
  process.stdin.on('error', () => {});
  process.stdout.on('error', () => {});
  setInterval(() => {}, 1000);
}
process.stdin.on('data', (data) => appendFileSync(out + '.in', data));
process.stdout.write('READY ' + mode + '\\r\\n');
`;

describe.skipIf(!hasTmux)('tmux pane host', () => {
  let dir: string;
  let socket: string;
  let program: string;
  let host: ReturnType<typeof tmuxHost>;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', FLUME_ODD: 'a;b #{pane_id} $HOME "q"' };
  const tmux = (...args: string[]) => run('tmux', ['-S', socket, ...args]);

  async function start(mode: string, cwd = dir) {
    const out = join(dir, `${mode}-${Math.random().toString(36).slice(2)}`);
    const { pane, pid, identity } = await host.open({ title: `t ${mode}`, cwd, argv: [process.execPath, program, mode, out], env });
    // A node program's start can take over 10 s on CI's loaded machine.
    if (mode !== 'env') await waitFor(async () => (await host.capture(pane!))?.includes('READY'), `${mode} ready`);
    return { pane: pane!, pid: pid!, identity: identity!, out, input: () => readFileSync(`${out}.in`, 'utf8') };
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flume-tmux-'));
    socket = join(dir, 'state', 'tmux.sock');
    program = join(dir, 'program.mjs');
    writeFileSync(program, PROGRAM);
    host = tmuxHost({ socket });
  });

  afterAll(async () => {
    await killTmuxServer(socket);
    remove(dir);
  });

  it('is available where tmux is installed', async () => {
    expect(host.key).toBe('tmux');
    expect(await host.available()).toBe(true);
  });

  it('opens panes on its own socket, 200x50, with exactly the env given and the cwd, even with # in names', async () => {
    const cwd = join(dir, 'odd #{pane_id} dir');
    mkdirSync(cwd);
    const first = await start('env', cwd);
    const second = await start('env', cwd);
    expect(first.pane).toMatch(/^%\d+$/);
    expect(second.pane).not.toBe(first.pane);
    for (const opened of [first, second]) {
      const seen = await waitFor(() => { try { return JSON.parse(readFileSync(opened.out, 'utf8')); } catch { return undefined; } }, 'env dump');
      expect(seen.env).toEqual(env);
      expect(seen.cwd).toBe(cwd);
    }
    const windows = await tmux('list-windows', '-t', '=flume', '-F', '#{window_name} #{window_width}x#{window_height}');
    expect(windows.stdout.trim().split('\n')).toEqual(['t env 200x50', 't env 200x50']);
  });

  it("hands the program its environment in a script only its owner can read, while the script exists", async () => {
    // Recorded by an env first on PATH, as tmux runs it: the mode of the script it is handed, and of its folder.
    const bin = join(dir, 'env-bin');
    mkdirSync(bin, { recursive: true });
    const log = join(bin, 'modes');
    const real = (await run('sh', ['-c', 'command -v env'])).stdout.trim();
    const stat = (await run('sh', ['-c', 'command -v stat'])).stdout.trim();
    writeFileSync(join(bin, 'env'), `#!/bin/sh\nfor f in "$@"; do case "$f" in *.sh) '${stat}' -c '%a %n' "$f" "\${f%/*}" >> '${log}';; esac; done\nexec '${real}' "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    let opened: Awaited<ReturnType<typeof start>>;
    try {
      opened = await start('env');
    } finally {
      process.env.PATH = path;
    }
    await waitFor(() => { try { return JSON.parse(readFileSync(opened.out, 'utf8')); } catch { return undefined; } }, 'env dump');
    const [file, folder] = readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' '));
    expect(file[1]).toMatch(/\/env-[^/]+\.sh$/);
    expect({ file: file[0], folder: folder[0] }).toEqual({ file: '600', folder: '700' });
    expect(existsSync(file[1])).toBe(false);
  });

  it('types literal text in bursts of 200, across ; and - and unicode, and presses keys by name', async () => {
    const { pane, input } = await start('raw');
    const text = `${'x'.repeat(198)}a;-y "$HOME" \\; ${'é日本❯'.repeat(60)}-x;`;
    const began = Date.now();
    await host.type(pane, text);
    expect(Date.now() - began).toBeGreaterThanOrEqual(splitBursts(text, 200).length * 100 - 100);
    await host.type(pane, `${'z'.repeat(200)};`);
    await waitFor(() => input().endsWith(';'), 'typed text');
    expect(input()).toBe(`${text}${'z'.repeat(200)};`);
    await host.keys(pane, ['Enter', 'C-u', 'Escape', 'C-c']);
    await waitFor(() => input().endsWith('\x03'), 'keys');
    expect(input().slice(-4)).toBe('\r\x15\x1b\x03');
  });

  it('types text as one bracketed paste it frames itself when asked, even where the program asked for none', async () => {
    // For a program that reads bracketed paste: typed key by key, `!` and `?` are keys to an agent (TypeOptions).
    const { pane, input } = await start('raw');
    const text = `!${'x'.repeat(250)} ? é日本 \x1b[201~end`;
    await host.type(pane, text, { paste: true });
    await waitFor(() => input().endsWith('end\x1b[201~'), 'the paste');
    expect(input()).toBe(`\x1b[200~!${'x'.repeat(250)} ? é日本 end\x1b[201~`);
  });

  it('pastes text with newlines as one bracketed paste, so no newline submits', async () => {
    const { pane, input } = await start('paste');
    await host.type(pane, 'line one\nline two\x1b[201~\tend');
    await waitFor(() => input().includes('\x1b[201~'), 'paste');
    expect(input()).toBe('\x1b[200~line one\rline two\tend\x1b[201~');
  });

  it('strips paste markers hidden inside one another, so the fake agent takes one prompt, not three', async () => {
    // One pass over ESC[20 ESC[200~ 1~ would leave ESC[201~, ending the paste early: the rest would
    // arrive typed, its newline submitting a prompt of its own.
    const cwd = join(dir, 'nested-markers');
    mkdirSync(cwd);
    const session = fakeClaude({ configDir: join(dir, 'nested-config'), cwd, script: { onPrompt: [{ actions: [{ say: 'ok' }] }] } });
    const { pane } = await host.open(session.spec);
    await waitFor(async () => (await host.capture(pane!))?.includes('❯'), 'the input box');
    const text = 'first\x1b[20\x1b[200~1~\nsecond\x1b[20\x1b[20\x1b[200~0~1~\nthird';
    await host.type(pane!, text);
    await new Promise((done) => setTimeout(done, 300));
    await host.keys(pane!, ['Enter']);
    const prompts = () => readRecords(session.transcriptPath).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content);
    await waitFor(() => prompts().length > 0, 'a prompt');
    await new Promise((done) => setTimeout(done, 500));
    expect(prompts()).toEqual(['first\nsecond\nthird']);
    await host.close(pane!);
  });

  it("keeps a dead program's screen readable, reports it not alive, and refuses to type into it", async () => {
    const { pane } = await start('die');
    await waitFor(async () => !(await host.alive(pane)), 'death');
    expect(await host.capture(pane)).toContain('dying now');
    // Each look through the host nudges a tmux that missed its pane's SIGCHLD (tmux/tmux#311) into recording the status.
    await waitFor(async () => (await host.alive(pane), (await tmux('display-message', '-p', '-t', pane, '#{pane_dead_status}')).stdout.trim() === '3'), 'exit status 3');
    await expect(host.type(pane, 'hello')).rejects.toSatisfy((error) => isFlumeError(error, 'AGENT_NOT_UP'));
    await host.close(pane);
    expect(await host.capture(pane)).toBeUndefined();
  });

  it('closes a pane and its program, even one that ignores SIGHUP and a closed terminal', async () => {
    for (const mode of ['raw', 'stubborn']) {
      const { pane, pid } = await start(mode);
      expect(await host.alive(pane)).toBe(true);
      await host.close(pane);
      expect(() => process.kill(pid, 0)).toThrow();
      expect(await host.alive(pane)).toBe(false);
      expect(await host.capture(pane)).toBeUndefined();
      await host.close(pane);
    }
  });

  it('gives each pane an identity no later pane at the same id carries, even while the first program outlives its server', async () => {
    const handle = (opened: { pane: string; pid: number; identity: string }) => ({ driver: 'x', sessionId: 's', host: 'tmux', cwd: dir, startedAt: '', pane: opened.pane, pid: opened.pid, paneIdentity: opened.identity });
    await killTmuxServer(socket);
    const first = await start('stubborn');
    expect(first.pane).toBe('%0');
    expect(await host.identity(first.pane)).toBe(first.identity);
    expect(await ownsPane(host, handle(first))).toBe(true);
    // The stubborn program ignores the hang-up: its pid still runs once the server is gone.
    await killTmuxServer(socket);
    try {
      const second = await start('raw');
      expect(second.pane).toBe(first.pane);
      expect(() => process.kill(first.pid, 0)).not.toThrow();
      expect(second.identity).not.toBe(first.identity);
      expect(await ownsPane(host, handle(first))).toBe(false);
      expect(await ownsPane(host, handle(second))).toBe(true);
      // By its pid alone, the old handle would still read as this pane's.
      expect(await ownsPane(host, { ...handle(first), paneIdentity: undefined })).toBe(true);
      await host.close(second.pane);
      expect(await host.identity(second.pane)).toBeUndefined();
    } finally {
      process.kill(first.pid, 'SIGKILL');
    }
  });

  it('looks at a pane in one tmux client: what identity, alive and capture say one by one, and nothing for a closed pane', async () => {
    const { pane, pid, identity } = await start('raw');
    const handle = { driver: 'x', sessionId: 's', host: 'tmux', cwd: dir, startedAt: '', pane, pid, paneIdentity: identity };
    expect(await host.look!(pane)).toEqual({ identity: await host.identity(pane), alive: await host.alive(pane), screen: await host.capture(pane) });
    expect((await host.look!(pane))?.screen).toContain('READY raw');
    // Counted by a tmux first on PATH: one client a look, where identity, alive and capture take three.
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const log = join(bin, 'calls');
    const real = (await run('sh', ['-c', 'command -v tmux'])).stdout.trim();
    writeFileSync(join(bin, 'tmux'), `#!/bin/sh\necho x >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    process.env.PATH = `${bin}:${path}`;
    try {
      writeFileSync(log, '');
      const looked = await lookAtPane(host, handle);
      expect(calls()).toBe(1);
      writeFileSync(log, '');
      const { look: _look, ...withoutLook } = host;
      expect(await lookAtPane(withoutLook, handle)).toEqual(looked);
      expect(calls()).toBe(3);
    } finally {
      process.env.PATH = path;
    }
    expect(seesIt(await lookAtPane(host, handle))).toBe(true);
    expect(await lookAtPane(host, { ...handle, paneIdentity: 'another pane' })).toEqual({ own: false, alive: false });
    await host.close(pane);
    expect(await host.look!(pane)).toBeUndefined();
    expect(await lookAtPane(host, handle)).toEqual({ own: false, alive: false });

    function seesIt(value: { own: boolean; alive: boolean; screen?: string }) {
      return value.own && value.alive && Boolean(value.screen?.includes('READY raw'));
    }
  });

  it('refuses a program named with = and env names that env(1) would misread', async () => {
    await expect(host.open({ title: 't', cwd: dir, argv: ['A=b'], env: {} })).rejects.toSatisfy((error) => isFlumeError(error, 'BAD_USAGE'));
    await expect(host.open({ title: 't', cwd: dir, argv: ['true'], env: { '-u': 'x' } })).rejects.toSatisfy((error) => isFlumeError(error, 'BAD_USAGE'));
  });
});
