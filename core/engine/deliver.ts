/**
 * Waiting for a sent prompt to appear in the agent's transcript, read on file-system events (the
 * transcript growing) with a short fallback, so flume reports it taken within moments of the write.
 */
import { callHook } from '../hooks.js';
import type { Flume } from '../plugin.js';
import type { AgentHandle, PromptState } from '../types.js';
import { waitForChange } from './files.js';

/** Reads the transcript until the prompt is taken or `timeoutMs` passes; returns the last reading. */
export async function awaitPrompt(flume: Flume, handle: AgentHandle, text: string, since: string | undefined, timeoutMs: number): Promise<PromptState> {
  const hook = flume.hooks.confirmPrompt.get(handle.driver);
  const driver = flume.agents.get(handle.driver);
  if (!hook?.isUsed()) return 'unknown';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = (await callHook(`confirmPrompt(${handle.driver})`, hook, { handle, text, since })) ?? 'unknown';
    const left = deadline - Date.now();
    if (state === 'taken' || left <= 0) return state;
    await waitForChange(driver?.watchPaths(handle) ?? [], Math.min(left, 250));
  }
}
