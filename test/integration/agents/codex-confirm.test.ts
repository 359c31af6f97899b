/**
 * The Codex driver counts a prompt taken only when its rollout holds it, never from the screen: the
 * screens and rollouts are the real Codex CLI 0.171.0's (test/fixtures/codex-0.171.0, made by
 * test/fixtures/capture-codex.ts), each screen drawn in a tmux pane the driver owns. The screen shows
 * the prompt sent (its `› …` line in the history, the input line empty) while the rollout is
 * missing, or holds everything of the turn but the prompt's own lines, as when the TUI echoes the
 * prompt before its lines reach the file: the prompt is not taken until they do.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexDriver } from '../../../agents/codex/driver.js';
import { classifyScreen, draftText } from '../../../agents/codex/screen.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { which } from '../../../core/support/exec.js';
import type { AgentHandle, Flume } from '../../../core/index.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { remove } from '../../helpers/repo.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/codex-0.171.0');
const PROMPT = 'Please look at the parser';
/** A program that draws a recorded screen and waits. */
const DRAW = `process.stdout.write(require('node:fs').readFileSync(process.argv[1], 'utf8').replace(/\\n/g, '\\r\\n')); setInterval(() => {}, 1e6);`;

type Line = { type: string; payload: { type?: string; role?: string; item?: { type?: string } } };
const isPromptLine = (l: Line) => (l.type === 'response_item' && l.payload.type === 'message' && l.payload.role === 'user' && JSON.stringify(l.payload).includes(PROMPT)) || (l.type === 'event_msg' && l.payload.type === 'item_completed' && l.payload.item?.type === 'UserMessage');

describe.skipIf(!which('tmux'))('a Codex prompt', () => {
  let dir: string;
  let socket: string;
  let host: ReturnType<typeof tmuxHost>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flume-codex-confirm-'));
    socket = join(dir, 'state', 'tmux.sock');
    host = tmuxHost({ socket });
  });
  afterAll(async () => {
    await killTmuxServer(socket);
    remove(dir);
  });

  it.each(['working.txt', 'after-turn.txt'])('is not taken while only the screen shows it sent (%s): the rollout decides', async (name) => {
    const { pane, identity, pid } = await host.open({ title: 'codex', cwd: dir, argv: [process.execPath, '-e', DRAW, join(FIXTURES, 'screens', name)], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color' } });
    const screen = await waitFor(async () => ((await host.capture(pane!)) ?? '').includes(`› ${PROMPT}`) && (await host.capture(pane!)), 'the recorded screen');
    // The screen says it all: the prompt above, the input line empty and ready.
    expect([classifyScreen(screen || ''), draftText(screen || '')]).toEqual([name === 'working.txt' ? 'working' : 'input-ready', '']);

    const rollout = join(dir, `${name}.jsonl`);
    const handle: AgentHandle = { driver: 'codex', sessionId: 's', host: 'tmux', pane, pid, paneIdentity: identity, cwd: '/tmp/flume-codex-FIXTURE/repo', startedAt: '2026-12-01T00:00:00.000Z', transcriptPath: rollout };
    const driver = codexDriver({ hosts: { get: () => host } } as unknown as Flume);
    const lines = readFileSync(join(FIXTURES, 'rollouts', name.replace('.txt', '.jsonl')), 'utf8').split('\n').filter(Boolean);
    const confirm = () => driver.confirm({ handle, text: PROMPT, since: '2026-12-01T00:00:00.000Z' });

    // No rollout yet (Codex writes it with the first turn): unknown.
    expect(await confirm()).toBe('unknown');
    // The turn's lines but the prompt's own: not yet.
    const without = lines.filter((l) => !isPromptLine(JSON.parse(l)));
    expect(without.length).toBe(lines.length - 2);
    writeFileSync(rollout, without.join('\n') + '\n');
    expect(await confirm()).toBe('not-yet');
    // Its lines come: taken.
    writeFileSync(rollout, lines.join('\n') + '\n');
    expect(await confirm()).toBe('taken');
    // A text never sent is not taken, whatever the screen shows.
    expect(await driver.confirm({ handle, text: 'Something never sent', since: handle.startedAt })).toBe('not-yet');
    await host.close(pane!);
  });
});
