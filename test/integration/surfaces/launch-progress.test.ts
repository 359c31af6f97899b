import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, remove, tempDir } from '../../helpers/repo.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { launchedRecord } from '../../helpers/result-schema.js';

let current: AgentRepo | undefined;
let socket: string | undefined;
afterEach(async () => {
  if (socket) {
    await killTmuxServer(socket);
    remove(dirname(socket));
    socket = undefined;
  }
  await current?.cleanup();
  current = undefined;
});

describe('launch progress', () => {
  it('ticks each step on a terminal, writes plain lines to a pipe, and nothing extra with --json', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 30_000 }] }] }, { ready: { setup: [{ name: 'install', run: 'true' }] } });
    const dir = tempDir('flume-tty-');
    socket = join(dir, 'sock');
    const host = tmuxHost({ socket });
    const { pane } = await host.open({ title: 'launch', cwd: current.repo, argv: ['sh', '-c', `'${process.execPath}' '${FLUME_BIN}' launch --kind fix --name tty --brief go --no-watch; sleep 30`], env: { ...current.env, TERM: 'xterm-256color' } });
    const screen = await waitFor(async () => {
      const text = (await host.capture(pane!)) ?? '';
      return text.includes('prompt: taken') ? text : undefined;
    }, 'the launch to finish');
    for (const step of ['✓ making', '✓ readying: install', '✓ starting stage 1', '✓ prompt: taken']) expect(screen).toContain(step);

    const plain = await current.flume(['launch', '--kind', 'fix', '--name', 'pipe', '--brief', 'go', '--no-watch']);
    expect(plain.stdout).not.toContain('\x1b[');
    expect(plain.stdout.split('\n')).toEqual(expect.arrayContaining([expect.stringMatching(/^readying: install$/), 'prompt: taken']));

    const json = await current.flume(['launch', '--kind', 'fix', '--name', 'json', '--brief', 'go', '--no-watch', '--json']);
    expect(launchedRecord(json.stdout).stage.delivery).toBe('taken');
  });

  it('marks a failed step ✗ and a held place ‖ on a narrow terminal, redraws long and multi-line steps whole, and exits 3', async () => {
    current = agentRepo({}, { ready: { setup: [{ name: 'install', run: 'true' }, { name: 'breaks', run: 'echo first words; echo second words; exit 4' }] } });
    const dir = tempDir('flume-tty-');
    socket = join(dir, 'sock');
    const host = tmuxHost({ socket });
    const command = `sleep 1; '${process.execPath}' '${FLUME_BIN}' launch --kind question --name held --brief go --no-watch; echo "exit=$?"; sleep 30`;
    const { pane } = await host.open({ title: 'launch', cwd: current.repo, argv: ['sh', '-c', command], env: { ...current.env, TERM: 'xterm-256color' } });
    // 60 columns: the "made … at <path> on <branch> (from <commit>)" step is wider than the terminal.
    const resized = spawnSync('tmux', ['-S', socket, 'resize-window', '-t', pane!, '-x', '60', '-y', '40'], { encoding: 'utf8' });
    expect(resized.status, resized.stderr).toBe(0);
    const screen = await waitFor(async () => {
      const text = (await host.capture(pane!)) ?? '';
      return text.includes('exit=') ? text : undefined;
    }, 'the launch to finish');
    const rows = screen.split('\n');
    expect(screen).toContain('exit=3');
    expect(rows).toContain('✓ readying: install');
    expect(rows).toContain('✗ readying: breaks');
    expect(rows).toContain('✗ readying failed at breaks (exit 4)');
    expect(rows).toEqual(expect.arrayContaining(['  first words', '  second words']));
    expect(rows.some((row) => row.startsWith('‖ held: readying failed at "breaks"'))).toBe(true);
    // No row left over from a redraw: nothing still "under way", no tick on a failure.
    expect(rows.filter((row) => row.startsWith('…') || /^\S+ … /.test(row))).toEqual([]);
    expect(screen).not.toMatch(/✓ (ready: FAILED|readying failed|held)/);
    expect(screen).not.toContain('ready: FAILED');

    const piped = await current.flume(['launch', '--kind', 'question', '--name', 'held-pipe', '--brief', 'go', '--no-watch']);
    expect(piped.code).toBe(3);
    expect(piped.stdout).not.toContain('\x1b[');
    expect(piped.stdout).toContain('readying failed at breaks (exit 4)');
    const json = await current.flume(['launch', '--kind', 'question', '--name', 'held-json', '--brief', 'go', '--no-watch', '--json']);
    expect(json.code).toBe(3);
    // The place as status shows it; its record says why it is held.
    expect(launchedRecord(json.stdout).held.reason).toContain('breaks');
  });

  it('names the agent before what it did, and says in words what the stage waits on', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'I need the API key.' }] }] });
    const result = await current.flume(['launch', '--kind', 'fix', '--name', 'asks', '--brief', 'Call the API.', '--no-watch']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    const agent = lines.findIndex((line) => line.startsWith('agent: claude-code session '));
    const waits = lines.indexOf('the stage waits on you: I need the API key.');
    expect(agent, result.stdout).toBeGreaterThan(lines.indexOf('starting stage 1'));
    expect(waits, result.stdout).toBeGreaterThan(agent);
    expect(lines.filter((line) => line.startsWith('agent: '))).toHaveLength(1);
    // No line is an action's name (mark-waiting, stop-agent, finish, …).
    expect(result.stdout).not.toMatch(/^(?:[a-z]+-)+[a-z]+$|^finish$/m);
  });
});

