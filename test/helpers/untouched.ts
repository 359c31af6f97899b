/**
 * "Nothing typed": what a refused tell or go-on must leave exactly as it was — the agent's pane (its
 * screen with history, so a line typed and scrolled off still shows) and its transcript, byte for byte.
 * Checking only the error code lets a refusal that typed first and refused after pass.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmuxHost } from '../../agents/panes/tmux.js';
import { HANG_MS } from './wait.js';

/** The agent as a refusal must leave it. */
export interface AgentSight {
  screen: string | undefined;
  transcript: string;
}

/** How the test sees one agent: flume's tmux socket, its pane, its transcript. */
export interface AgentAt {
  socket: string;
  pane: string;
  transcriptPath: string;
}

/** The pane's screen (with history) and the transcript, as they are now. */
export async function sight(agent: AgentAt): Promise<AgentSight> {
  const screen = await tmuxHost({ socket: agent.socket }).capture(agent.pane, { history: true });
  const transcript = existsSync(agent.transcriptPath) ? readFileSync(agent.transcriptPath, 'utf8') : '';
  return { screen, transcript };
}

/**
 * The sight once the agent has settled: two readings 200 ms apart agree (a dialog or a turn's end is
 * drawn a moment after the state file says so). Throws if it keeps changing for `timeoutMs`.
 */
export async function settledSight(agent: AgentAt, timeoutMs = 10_000): Promise<AgentSight> {
  const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  let last = await sight(agent);
  for (;;) {
    await sleep(200);
    const now = await sight(agent);
    if (now.screen === last.screen && now.transcript === last.transcript) return now;
    if (Date.now() > deadline) throw new Error(`the agent in ${agent.pane} did not settle in ${timeoutMs} ms`);
    last = now;
  }
}
