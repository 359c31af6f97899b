/**
 * Status reads every agent at once (the driver's readMany, the tmux host's lookMany; panes and captureMany for a host without it):
 * each reading must be what reading the agent alone gives, and the number of tmux processes must not
 * grow with the number of agents.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { claudeCodeDriver } from '../../../agents/claude-code/driver.js';
import type { PaneHost } from '../../../core/api/pane-host.js';
import type { Flume } from '../../../core/api/plugin.js';
import type { AgentHandle } from '../../../core/api/agent.js';
import { which } from '../../../core/support/exec.js';
import { fakeClaude, waitFor, type FakeScript } from '../../helpers/fake-claude/index.js';
import { remove } from '../../helpers/repo.js';

const hasTmux = which('tmux') !== undefined;

/** A program that draws a fixed screen and waits, or draws one and exits. */
const PROGRAM = `
const [mode] = process.argv.slice(2);
process.stdout.write('SCREEN ' + mode + '\\r\\nsecond line\\r\\n');
if (mode === 'die') setTimeout(() => process.exit(3), 200);
else setInterval(() => {}, 1000);
`;

describe.skipIf(!hasTmux)('reading many agents at once', () => {
  let dir: string;
  let host: PaneHost;
  const calls: Record<string, number> = {};

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'flume-read-many-')));
    writeFileSync(join(dir, 'program.mjs'), PROGRAM);
    const real = tmuxHost({ socket: join(dir, 'state', 'tmux.sock') });
    // Every pane-host call counted, so a reading that goes pane by pane is seen.
    host = Object.fromEntries(
      Object.entries(real).map(([key, value]) => [key, typeof value === 'function' ? (...args: unknown[]) => ((calls[key] = (calls[key] ?? 0) + 1), value(...args)) : value]),
    ) as unknown as PaneHost;
  });

  afterAll(async () => {
    await killTmuxServer(join(dir, 'state', 'tmux.sock'));
    remove(dir);
  });

  const reset = () => Object.keys(calls).forEach((key) => delete calls[key]);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color' };
  const open = async (mode: string) => (await host.open({ title: mode, cwd: dir, argv: [process.execPath, join(dir, 'program.mjs'), mode], env })).pane!;

  it('the tmux host looks at all its panes, and many screens, as it would at each alone', async () => {
    const [a, b, dead] = [await open('a'), await open('b'), await open('die')];
    await waitFor(async () => !(await host.alive(dead)) && (await host.capture(b))?.includes('SCREEN b'), 'the panes drawn, one dead');
    const panes = await host.panes!();
    for (const pane of [a, b, dead]) {
      expect(panes.get(pane), pane).toEqual({ identity: await host.identity(pane), alive: await host.alive(pane) });
      expect(panes.get(pane)?.identity).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(panes.get(dead)?.alive).toBe(false);
    // A pane gone between the look and the capture stops tmux's command list: those after it are still read.
    const screens = await host.captureMany!([a, '%9999', b, dead]);
    expect(screens.has('%9999')).toBe(false);
    for (const pane of [a, b, dead]) expect(screens.get(pane), pane).toBe(await host.capture(pane));
    expect(screens.get(a)).toContain('SCREEN a');
    expect(screens.get(b)).toContain('SCREEN b');
    // Every look in one client, each what `look` says of the pane alone; a pane gone is absent and
    // those after it are still looked at.
    const looks = await host.lookMany!([a, '%9999', b, dead]);
    expect(looks.has('%9999')).toBe(false);
    for (const pane of [a, b, dead]) expect(looks.get(pane), pane).toEqual(await host.look!(pane));
    expect(looks.get(a)).toMatchObject({ alive: true, identity: panes.get(a)?.identity, screen: expect.stringContaining('SCREEN a') });
    expect(looks.get(dead)).toEqual({ identity: panes.get(dead)?.identity, alive: false });
  });

  it('a host with no server running has no panes', async () => {
    expect((await tmuxHost({ socket: join(dir, 'none', 'tmux.sock') }).panes!()).size).toBe(0);
  });

  it("the Claude Code driver's readMany reads each agent as read does, with one tmux call for all", async () => {
    const configDir = join(dir, 'claude');
    mkdirSync(configDir, { recursive: true });
    const flume = { hosts: new Map([['tmux', host]]) } as unknown as Flume;
    const driver = claudeCodeDriver(flume, { configDir });
    const scripts: Record<string, FakeScript> = {
      idle: { onPrompt: [{ actions: [{ say: 'Done; which branch next?' }] }] },
      working: { onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 600_000 }] }] },
      question: { onPrompt: [{ actions: [{ ask: { question: 'Which database?', options: ['sqlite', 'postgres'] } }] }] },
      // Seen only on its screen: no transcript line until it is answered.
      permission: { onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }] }] },
      exited: { onPrompt: [{ actions: [{ say: 'Bye.' }, { exit: 0 }] }] },
      // These two show only on their screens: no transcript exists before a first prompt.
      trust: { trust: true },
      fresh: {},
    };
    const handles: AgentHandle[] = [];
    for (const [name, script] of Object.entries(scripts)) {
      const cwd = join(dir, name);
      mkdirSync(cwd, { recursive: true });
      const fake = fakeClaude({ configDir, cwd, script, args: name === 'trust' || name === 'fresh' ? [] : [`${name}: begin`] });
      const opened = await host.open(fake.spec);
      handles.push({ driver: 'claude-code', sessionId: fake.sessionId, host: 'tmux', version: '2.1.332', pane: opened.pane, paneIdentity: opened.identity, pid: opened.pid, cwd: realpathSync(cwd), startedAt: new Date().toISOString(), data: { configDir } });
    }
    // One handle whose pane now holds another program: its agent reads as gone, its pane unnamed.
    handles.push({ ...handles[0], sessionId: '00000000-0000-4000-8000-000000000000', paneIdentity: 'not-this-pane' });
    const want = ['idle', 'working', 'asking', 'asking', 'exited', 'asking', 'idle', 'exited'];
    await waitFor(async () => (await Promise.all(handles.map((h) => driver.read(h)))).every((r, i) => r.state === want[i]), 'each agent in its state');
    const one = await Promise.all(handles.map((h) => driver.read(h)));
    reset();
    const many = await driver.readMany!(handles);
    expect(calls).toEqual({ lookMany: 1 });
    expect(many).toEqual(one);
    // A host without lookMany is read with panes and captureMany: two calls for all, the same readings.
    const { lookMany: _lookMany, ...older } = host;
    const olderDriver = claudeCodeDriver({ hosts: new Map([['tmux', older]]) } as unknown as Flume, { configDir });
    reset();
    expect(await olderDriver.readMany!(handles)).toEqual(one);
    expect(calls).toEqual({ panes: 1, captureMany: 1 });
    expect(many.map((r) => r?.state)).toEqual(want);
    expect(many[3]).toMatchObject({ dialog: 'permission' });
    expect(many[5]).toMatchObject({ dialog: 'trust' });
    expect(many[7]).toMatchObject({ paneGone: true });
  });
});
