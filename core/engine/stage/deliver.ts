/**
 * Waiting for a sent prompt to appear in the agent's transcript, read on file-system events (the
 * transcript growing) with a short fallback, so flume reports it taken within moments of the write.
 */
import { reachDriver } from '../../drivers/reach.js';
import type { Flume } from '../../api/plugin.js';
import type { AgentHandle, PromptState } from '../../api/agent.js';
import { waitForChange } from '../supervisor/files.js';

/**
 * Reads the transcript until the prompt is taken or `timeoutMs` passes; returns the last reading,
 * which may be `held` (the program shows it queued: it submits it by itself, and nothing may be sent
 * again).
 */
export async function awaitPrompt(flume: Flume, handle: AgentHandle, text: string, since: string | undefined, timeoutMs: number): Promise<PromptState> {
  const driver = reachDriver(flume, handle.driver);
  if (!driver) return 'unknown';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await driver.confirm({ handle, text, since });
    const left = deadline - Date.now();
    if (state === 'taken' || left <= 0) return state;
    await waitForChange(driver.watchPaths(handle), Math.min(left, 250));
  }
}
