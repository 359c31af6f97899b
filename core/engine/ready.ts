/**
 * Readying a place (book: "Made ready"): the repository's declared toolchain steps, then its setup
 * steps, in the place, with a clean environment. A repository that declares nothing has nothing run.
 */
import { runStep } from '../exec.js';
import { toMs } from '../duration.js';
import type { Flume } from '../plugin.js';
import { callHook } from '../hooks.js';
import type { PlaceRecord, ReadyRecord, ReadyStep } from '../types.js';

/** The caller's variables a step keeps; nothing else of the caller's reaches it. */
export const KEPT_VARIABLES = ['PATH', 'HOME', 'USER', 'LANG', 'TERM'] as const;

const TAIL_CHARS = 2000;

/** Runs the ready declaration in the place and returns what it came to. Never throws for a failed step. */
export async function readyPlace(flume: Flume, place: PlaceRecord, onStep?: (label: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<ReadyRecord> {
  const context = {
    place,
    toolchain: [...(flume.config.ready?.toolchain ?? [])],
    setup: [...(flume.config.ready?.setup ?? [])],
  };
  try {
    await callHook('beforeReady', flume.hooks.beforeReady, context);
  } catch (error) {
    return { state: 'failed', at: now(), failed: { step: 'beforeReady', exitCode: null, tail: (error as Error).message } };
  }
  const steps = [...context.toolchain, ...context.setup];
  if (steps.length === 0) return { state: 'none', at: now() };
  for (const step of steps) {
    onStep?.(stepLabel(step));
    const result = await runReadyStep(step, place.path, env);
    if (result) return { state: 'failed', at: now(), failed: result };
  }
  return { state: 'ready', at: now() };
}

/** The label status shows for a step. */
export function stepLabel(step: ReadyStep): string {
  return step.name ?? (typeof step.run === 'string' ? step.run : step.run.join(' '));
}

async function runReadyStep(step: ReadyStep, cwd: string, env: NodeJS.ProcessEnv): Promise<ReadyRecord['failed'] | undefined> {
  const clean: Record<string, string> = {};
  for (const name of KEPT_VARIABLES) if (env[name] !== undefined) clean[name] = env[name]!;
  Object.assign(clean, step.env ?? {});
  const [file, args] = typeof step.run === 'string' ? ['sh', ['-c', step.run]] : [step.run[0], step.run.slice(1)];
  const result = await runStep(file, args, { cwd, env: clean, clean: true, timeoutMs: toMs(step.timeout, 30 * 60_000) });
  if (result.exitCode === 0 && !result.failedToStart) return undefined;
  const words = result.failedToStart ?? (result.timedOut ? `timed out\n${result.all}` : result.all);
  return { step: stepLabel(step), exitCode: result.exitCode, tail: words.trimEnd().slice(-TAIL_CHARS) };
}

function now(): string {
  return new Date().toISOString();
}
