import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, remove, tempDir } from '../../helpers/repo.js';
import { promptsOf, stageRepo } from '../stages/helpers.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';

let current: AgentRepo | undefined;
let viewSocket: string | undefined;
afterEach(async () => {
  if (viewSocket) {
    await killTmuxServer(viewSocket);
    remove(dirname(viewSocket));
    viewSocket = undefined;
  }
  await current?.cleanup();
  current = undefined;
});

/**
 * `flume status --watch` in a pane of a tmux server of the test's own, resized to `width` × `height`:
 * the pane, tmux on that server, the host, the screen, keys, `until` (waits for the screen to pass a
 * test, naming the last screen when it does not) and `ended` (the view's exit, once it has exited).
 */
async function openView(repo: AgentRepo, width: number, height: number, waitMs: number) {
  const dir = tempDir('flume-view-');
  viewSocket = join(dir, 'sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', viewSocket!, ...args], { encoding: 'utf8' });
  const host = tmuxHost({ socket: viewSocket });
  const { pane } = await host.open({ title: 'view', cwd: repo.repo, argv: [process.execPath, FLUME_BIN, 'status', '--watch'], env: { ...repo.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' } });
  // flume's host opens wide windows; the view is looked at on a terminal of the size asked.
  tmux('resize-window', '-t', pane!, '-x', String(width), '-y', String(height));
  const screen = async () => (await host.capture(pane!)) ?? '';
  let last = '';
  const until = (what: string, test: (text: string) => boolean, timeoutMs = waitMs) =>
    waitFor(async () => ((text) => (test((last = text)) ? text : undefined))(await screen()), what, timeoutMs).catch((error: Error) => {
      throw new Error(`${error.message}; the screen:\n${last}`);
    });
  const keys = (...k: string[]) => tmux('send-keys', '-t', pane!, ...k);
  /** Once the view has exited: its exit status and whether the terminal is still on its alternate screen ("0 0": exit 0, main screen). */
  const ended = async () => {
    // A view ends its reading under way before it exits: on a loaded machine that takes seconds.
    await waitFor(async () => !(await host.alive(pane!)), 'the view to exit');
    // tmux records the exit status once it has reaped the program, which can come a little later.
    // Both fields: just after the program ends, tmux may say its status before it says the screen.
    // tmux built with libutempter can miss the program's SIGCHLD (tmux/tmux#311) and record no status
    // until signalled, as flume's own host nudges it.
    let seen = '';
    return waitFor(() => {
      seen = tmux('display-message', '-p', '-t', pane!, '#{pid} #{pane_dead} #{pane_dead_status} #{alternate_on} #{pane_dead_signal}').trim();
      const [server, , status, alternate] = seen.split(' ');
      if (/^\d+$/.test(status ?? '') && /^\d$/.test(alternate ?? '')) return `${status} ${alternate}`;
      process.kill(Number(server), 'SIGCHLD');
      return undefined;
    }, 'the exit status').catch((error: Error) => {
      throw new Error(`${error.message}; tmux says (server, dead, status, alternate screen, signal): ${seen}`);
    });
  };
  return { dir, pane: pane!, tmux, host, screen, until, keys, ended };
}

describe('flume status --watch on a terminal', () => {
  it('moves, acts and refuses as the CLI does, rings once for a new wait, redraws to a new size, shows a tidied place gone', async () => {
    const gate = join(tempDir('flume-gate-'), 'ask');
    current = agentRepo({
      onPrompt: [
        { match: 'Fix busy', actions: [{ say: 'Busy.' }, { sleepMs: 120_000 }] },
        { match: 'Fix idle', actions: [{ say: 'Looking.' }, { waitFile: gate }, { ask: { question: 'Which way shall the parser go?', options: ['left', 'right'] } }] },
      ],
    });
    const repo = current;
    // A name long enough that its row is cut at 60 columns (and the asking one's at 80).
    const busy = 'fix/busy-parser-with-a-long-name';
    for (const name of [busy.slice(4), 'idle']) {
      const launched = await repo.flume(['launch', '--kind', 'fix', '--name', name, '--brief', `Fix ${name.split('-')[0]}.`, '--no-watch']);
      expect(launched.code, launched.stderr).toBe(0);
    }
    // A classic 80 × 24 terminal.
    const { dir, pane, tmux, screen, until, keys, ended } = await openView(repo, 80, 24, 15_000);
    const bells = join(dir, 'out');
    tmux('pipe-pane', '-t', pane, '-o', `cat >> ${bells}`);
    // Selects a place: to the top, then down until the detail below the table names it.
    const select = async (id: string) => {
      keys('k', 'k', 'k');
      await waitFor(async () => ((await screen()).includes(`── ${id} `) ? true : (keys('j'), await new Promise((d) => setTimeout(d, 150)), false)), `${id} selected`);
    };
    const noWiderThan = (text: string, width: number) => text.split('\n').filter((line) => Array.from(line).length > width);

    const first = await until('both places', (text) => text.includes('fix/idle') && /fix\/busy-parser\S*\s+active\s+1\/2 code working/.test(text));
    // capture -J joins a wrapped row back into one line: none is wider than the 80 columns.
    expect(noWiderThan(first, 80)).toEqual([]);

    // The idle agent asks: the view rings the bell once for it.
    writeFileSync(gate, '');
    await until('the question', (text) => /fix\/idle\s+active\s+1\/2 code \w+\s+asking/.test(text));

    // Stop on a working agent: refused with the CLI's code and fix, and the CLI refuses it alike.
    await select(busy);
    keys('s');
    const refused = await until('the refusal', (text) => text.includes('AGENT_WORKING'));
    expect(refused).toMatch(/fix: Wait for its turn to end/);
    const cli = await repo.flume(['stop', busy]);
    expect([cli.code, cli.stderr.split(' ')[0]]).toEqual([1, 'AGENT_WORKING']);
    expect((await repo.place(busy)).stage.agent.state).toBe('working');

    // Tell, typed into the view, to an agent with a question open: refused as the CLI refuses it, nothing typed.
    await select('fix/idle');
    await until('the pane tail', (text) => text.includes('Which way shall the parser go?'));
    keys('t');
    tmux('send-keys', '-t', pane, '-l', 'left');
    keys('Enter');
    await until('the tell refused', (text) => text.includes('AGENT_ASKING'));
    expect((await repo.flume(['tell', 'fix/idle', 'left'])).stderr).toMatch(/^AGENT_ASKING/);

    // Attach: the view steps aside for the agent's own pane, and comes back when the client detaches.
    keys('a');
    await until('the agent\'s pane', (text) => text.includes('Enter to select') && !text.includes('── fix/idle'));
    keys('C-b', 'd');
    await until('the view again', (text) => text.includes("back from fix/idle's pane"));

    // Resize: every row cut to the new width, and no old frame in the scrollback above the new one.
    tmux('resize-window', '-t', pane, '-x', '60', '-y', '20');
    const narrow = await until('the narrower view', (text) => text.split('\n').some((line) => line.includes('fix/busy-parser') && line.endsWith('…') && Array.from(line).length === 60));
    expect(noWiderThan(narrow, 60)).toEqual([]);
    const history = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', pane);
    expect(history.match(/flume: 2 places/g)).toHaveLength(1);

    // One bell so far, for the one new wait.
    expect(readFileSync(bells, 'utf8').match(/\x07/g)).toHaveLength(1);

    // An action that is not refused: stop the idle agent; then drop it and tidy, from the view and the CLI.
    keys('s');
    await until('the agent stopped', (text) => text.includes('fix/idle: agent stopped'));
    keys('d');
    await until('the question', (text) => text.includes('drop fix/idle? y/n'));
    keys('y');
    await until('dropped', (text) => text.includes('dropped fix/idle'));
    const one = spawn(process.execPath, [FLUME_BIN, 'status', '--watch', 'fix/idle'], { env: { ...process.env, ...repo.env }, cwd: repo.repo, stdio: ['ignore', 'pipe', 'pipe'] });
    // Its end is taken now: it may well exit (seeing the place gone) before the view shows it gone.
    const closed = new Promise((done) => one.on('close', done));
    let plain = '';
    one.stdout.on('data', (d) => (plain += d));
    await waitFor(() => plain.includes('fix/idle'), 'the plain view of one place');
    const tidied = await repo.flume(['tidy']);
    expect(tidied.code, tidied.stderr).toBe(0);
    await until('the place gone', (text) => /fix\/idle\s+gone\s+tidied/.test(text));
    const code = await closed;
    expect([code, plain]).toEqual([0, expect.stringContaining('fix/idle: gone (tidied)\n')]);

    // q: the view ends, exit 0, the terminal's main screen back.
    keys('q');
    expect(await ended()).toBe('0 0');
  }, 90_000);

  it('retries, goes on and force-stops as the CLI does, asks before S, and ends on Ctrl-C with the terminal given back', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Busy.' }, { sleepMs: 120_000 }] }] });
    const repo = current;
    const id = 'fix/keys';
    const launched = await repo.flume(['launch', '--kind', 'fix', '--name', 'keys', '--brief', 'Fix the keys.', '--no-watch']);
    expect(launched.code, launched.stderr).toBe(0);
    // Generous waits: this file runs beside three others on a loaded machine.
    const { pane, tmux, until, keys, ended } = await openView(repo, 100, 24, 30_000);
    const attempt = async () => (await repo.place(id)).stage.attempt as number;

    await until('the working agent', (text) => new RegExp(`${id}\\s+active\\s+1/2 code working`).test(text) && text.includes(`── ${id} `));
    // r on a working agent: refused as `flume retry` refuses it; the stage keeps its agent.
    keys('r');
    await until('the retry refused', (text) => text.includes('AGENT_RUNNING'));
    expect((await repo.flume(['retry', id])).stderr).toMatch(/^AGENT_RUNNING/);
    expect(await attempt()).toBe(1);
    // g and a note: a fix's stage ends on a commit, so there is no round to go on with, as the CLI says.
    keys('g');
    await until('the note asked for', (text) => text.includes(`go on, a note (Enter: none) ${id}:`));
    tmux('send-keys', '-t', pane, '-l', 'look again');
    keys('Enter');
    await until('the go-on refused', (text) => text.includes('CANNOT_GO_ON'));
    expect((await repo.flume(['go-on', id, '--note', 'look again'])).stderr).toMatch(/^CANNOT_GO_ON/);
    // S asks first; anything but y does nothing; y ends the working agent, as `stop --force` does.
    keys('S');
    await until('the question', (text) => text.includes(`stop, even while it works, ${id}? y/n`));
    keys('n');
    await until('nothing done', (text) => text.includes('nothing done'));
    expect((await repo.place(id)).stage.agent.state).toBe('working');
    keys('S');
    await until('the question again', (text) => text.includes(`stop, even while it works, ${id}? y/n`));
    keys('y');
    await until('the agent stopped', (text) => text.includes(`${id}: agent stopped`));
    expect((await repo.place(id)).stage.agent.state).toBe('exited');
    // r with the agent gone: a fresh agent for the stage, its prompt confirmed, as `flume retry` would.
    keys('r');
    await until('the stage restarted', (text) => text.includes(`restarted ${id} stage code (attempt 2): prompt taken`), 60_000);
    expect(await attempt()).toBe(2);

    // Ctrl-C: the view ends as q ends it, exit 0, the terminal's main screen back.
    keys('C-c');
    expect(await ended()).toBe('0 0');
  }, 240_000);

  it('shows a place at its gate, rings once when it comes there, goes on with n and its note, and reads again on the event stream', async () => {
    const gated = { name: 'gated', stages: [{ name: 'code', prompt: 'Code: {brief}', deliverable: 'commit', advance: 'caller' }, { name: 'review', prompt: 'Review: {brief}', deliverable: 'commit' }] };
    const repo = stageRepo({}, { kinds: [gated] });
    current = repo;
    repo.script({
      onPrompt: [
        { match: '^Code', actions: [{ run: [repo.commit, 'code.txt', 'code'] }, { say: 'Coded.' }] },
        { match: 'Review:', actions: [{ run: [repo.commit, 'review.txt'] }, { say: 'Reviewed.' }] },
      ],
    });
    const id = 'gated/g';
    const supervisor = repo.watch();
    await repo.launch('gated', 'g', 'Gate it.');
    const { dir, pane, tmux, until, keys } = await openView(repo, 100, 30, 30_000);
    const bells = join(dir, 'out');
    tmux('pipe-pane', '-t', pane, '-o', `cat >> ${bells}`);
    const rang = () => (readFileSync(bells, 'utf8').match(/\x07/g) ?? []).length;
    await until('the working agent', (text) => new RegExp(`${id}\\s+active\\s+1/2 code working`).test(text) && text.includes(`── ${id} `));
    // n where the place does not wait at a gate: refused as `flume next` refuses it.
    keys('n');
    await until('the note asked for', (text) => text.includes(`next, a note (Enter: none) ${id}:`));
    keys('Enter');
    await until('next refused', (text) => text.includes('NOT_AWAITING'));
    expect((await repo.flume(['next', id])).stderr).toMatch(/^NOT_AWAITING/);

    // The code stage delivers: the place waits at its gate, in the table and below it, and the bell rings once.
    repo.open('code');
    await until('the gate', (text) => new RegExp(`${id}\\s+active\\s+1/2 code delivered.*at the gate after code`).test(text) && text.includes(`at the gate after code: flume next ${id} goes on`));
    await repo.quiet(2);
    await until('the agent ended', (text) => /1\/2 code delivered\s+(exited|not-up)/.test(text));
    expect((await repo.place(id)).awaiting).toMatchObject({ gate: true, after: 'code' });
    expect(rang()).toBe(1);

    // n and a note: the next stage starts with the note in its prompt, as `flume next --note` would.
    keys('n');
    await until('the note asked for again', (text) => text.includes(`next, a note (Enter: none) ${id}:`));
    tmux('send-keys', '-t', pane, '-l', 'mind the tests');
    keys('Enter');
    await until('the next stage', (text) => new RegExp(`went on to ${id} stage review \\(attempt 1\\): prompt \\w+`).test(text), 60_000);
    await until('the review delivered', (text) => new RegExp(`${id}\\s+active\\s+2/2 review delivered`).test(text), 60_000);
    const review = await repo.place(id);
    expect(review.awaiting).toBeUndefined();
    expect(promptsOf(review.stage.agent.transcript)[0]).toMatch(/^Review: Gate it\.[\s\S]*mind the tests/);
    expect(rang()).toBe(1);

    // With no supervisor to move anything, a drop writes only the record and its event: the view shows it at once, not at its slow poll.
    await supervisor.stop();
    const dropped = await repo.flume(['drop', id, '--no-watch']);
    expect(dropped.code, dropped.stderr).toBe(0);
    await until('the drop', (text) => new RegExp(`${id}\\s+dropped`).test(text), 20_000);
  }, 240_000);
});
