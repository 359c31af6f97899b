/**
 * Operating a real Codex CLI 0.171.0 through flume: a `tell` reaches it as a prompt (confirmed in its
 * rollout), a draft in its input box refuses a tell with nothing typed, and `stop` is truthful (it
 * refuses a working agent without --force, and returns only once every process of the agent is gone).
 */
import { processRunning } from '../../core/support/process.js';
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertIsolated } from '../helpers/netns.js';
import { lastUserText, message } from '../helpers/responses-api.js';
import { codexRepo, rolloutOf, userPrompts, userPromptsWritten, type CodexRepo } from './codex-repo.js';

beforeAll(() => assertIsolated());

let current: CodexRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The process and every descendant of it now. */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []));
  return all;
}

/** True while the process runs (a zombie does not). */
const alive = processRunning;

describe('operating the real Codex CLI through flume', () => {
  it('takes a tell as a prompt, refuses one over a draft, and stops truthfully', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const t = (current = await codexRepo({
      config: { prompts: { 'fix.code': '{brief}' } },
      script: [message('Ready for more.'), message('Noted: adding a test too.'), message('Thinking hard.', { until: held })],
    }));
    const launchStarted = Date.now();
    const place = await t.launch('fix', 'two', 'Look at the parser.');
    console.log(`codex-operate: launch to a confirmed prompt took ${Date.now() - launchStarted} ms`);
    await t.until('fix/two', (p) => p?.stage.agent.state === 'idle' && p, 'the first turn to end');

    // A tell: typed, submitted, and confirmed in the rollout the real program wrote.
    const tellStarted = Date.now();
    const told = await t.flume(['tell', 'fix/two', 'Also add a test.', '--json', '--no-watch']);
    console.log(`codex-operate: a tell confirmed in ${Date.now() - tellStarted} ms`);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    const rollout = rolloutOf(t.state, place.stage.agent.sessionId)!;
    expect(await userPromptsWritten(rollout, 2)).toEqual(['Look at the parser.', 'Also add a test.']);
    expect(lastUserText((await t.codex.api.waitForRequest(2, 10_000)).body)).toBe('Also add a test.');
    await t.until('fix/two', (p) => p?.stage.agent.state === 'idle' && p, 'the told turn to end');

    // A draft someone typed into the input box: a tell would send it along, so nothing is typed.
    execFileSync('tmux', ['-S', t.socket, 'send-keys', '-t', place.stage.agent.pane, '-l', 'half a thought']);
    await t.until('fix/two', () => execFileSync('tmux', ['-S', t.socket, 'capture-pane', '-p', '-t', place.stage.agent.pane], { encoding: 'utf8' }).includes('› half a thought'), 'the draft on screen', 5000);
    const refused = await t.flume(['tell', 'fix/two', 'Something else.', '--json', '--no-watch']);
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stdout).error.code).toBe('AGENT_BUSY');
    expect(userPrompts(rollout)).toHaveLength(2);
    // Cleared, the box takes a tell whose turn the test holds: the agent is working.
    execFileSync('tmux', ['-S', t.socket, 'send-keys', '-t', place.stage.agent.pane, 'C-u']);
    const third = await t.flume(['tell', 'fix/two', 'Think about it.', '--json', '--no-watch']);
    expect(third.code, third.stdout + third.stderr).toBe(0);
    await t.until('fix/two', (p) => p?.stage.agent.state === 'working' && p, 'the agent to work on the held turn');

    // Stop: refused while it works, then forced; it returns only once every process is gone.
    const processes = tree(place.stage.agent.pid);
    expect(processes.length).toBeGreaterThanOrEqual(2);
    const refusedStop = await t.flume(['stop', 'fix/two', '--json', '--no-watch']);
    expect(JSON.parse(refusedStop.stdout).error.code).toBe('AGENT_WORKING');
    expect(processes.every(alive)).toBe(true);
    const stopStarted = Date.now();
    const stopped = await t.flume(['stop', 'fix/two', '--force', '--json', '--no-watch']);
    console.log(`codex-operate: stop --force of a working Codex took ${Date.now() - stopStarted} ms`);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(processes.filter(alive)).toEqual([]);
    release();
    const view = await t.view('fix/two');
    expect(view.stage.agent.state).toBe('exited');
  });
});
