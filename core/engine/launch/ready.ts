/**
 * Readying a place (DESIGN.md "Readying"): the repository's declared toolchain steps, then its setup
 * steps, in the place, with a clean environment. A repository that declares nothing has nothing run.
 */
import { runStep } from '../../support/exec.js';
import { toMs } from '../../support/duration.js';
import type { Flume } from '../../api/plugin.js';
import { callHook } from '../../api/hooks.js';
import type { PlaceRecord, ReadyRecord } from '../../api/record.js';
import type { ReadyStep } from '../../api/config.js';

/** The caller's variables a step keeps; nothing else of the caller's reaches it. */
export const KEPT_VARIABLES = ['PATH', 'HOME', 'USER', 'LANG', 'TERM'] as const;

const TAIL_CHARS = 2000;

/** Runs the ready declaration in the place and returns what it came to. Never throws for a failed step. */
export async function readyPlace(flume: Flume, place: PlaceRecord, onStep?: (label: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<ReadyRecord> {
  const declared = await readySteps(flume, place);
  if ('failed' in declared) return { state: 'failed', at: now(), failed: declared.failed };
  if (declared.steps.length === 0) return { state: 'none', at: now() };
  for (const step of declared.steps) {
    onStep?.(stepLabel(step));
    const result = await runReadyStep(step, place.path, env);
    if (result) return { state: 'failed', at: now(), failed: result };
  }
  return { state: 'ready', at: now() };
}

/**
 * The steps readying runs, in order: the config's toolchain then setup steps, as the `beforeReady`
 * taps leave them; or how it fails when a tap throws (readying fails at `beforeReady`). A dry run
 * (`launch --dry-run`) asks the taps with `dryRun`, and runs nothing.
 */
export async function readySteps(flume: Flume, place: PlaceRecord, options: { dryRun?: boolean } = {}): Promise<{ steps: ReadyStep[] } | { failed: NonNullable<ReadyRecord['failed']> }> {
  const context = {
    place,
    toolchain: [...(flume.config.ready?.toolchain ?? [])],
    setup: [...(flume.config.ready?.setup ?? [])],
    ...(options.dryRun ? { dryRun: true } : {}),
  };
  try {
    await callHook('beforeReady', flume.hooks.beforeReady, context);
  } catch (error) {
    return { failed: { step: 'beforeReady', exitCode: null, tail: (error as Error).message } };
  }
  const steps = [...context.toolchain, ...context.setup];
  // The config's own steps were checked as it loaded; a step a tap added is checked here.
  for (const step of steps) {
    try {
      stepTimeoutMs(step);
    } catch (error) {
      return { failed: { step: stepLabel(step), exitCode: null, tail: (error as Error).message } };
    }
  }
  return { steps };
}

/** A step's time limit, ms: its `timeout`, default 30 minutes (BAD_CONFIG for one flume cannot take). */
export function stepTimeoutMs(step: ReadyStep): number {
  return toMs(step.timeout, 30 * 60_000, `the timeout of the ready step "${stepLabel(step)}"`);
}

/** What a step runs: its program and arguments (a shell line runs as `sh -c LINE`). */
export function stepCommand(step: ReadyStep): [string, string[]] {
  return typeof step.run === 'string' ? ['sh', ['-c', step.run]] : [step.run[0], step.run.slice(1)];
}

/** A step's whole environment: the caller's KEPT_VARIABLES, then what the step declares; nothing else. */
export function stepEnvironment(step: ReadyStep, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const name of KEPT_VARIABLES) if (env[name] !== undefined) clean[name] = env[name]!;
  return Object.assign(clean, step.env ?? {});
}

/** The label status shows for a step. */
export function stepLabel(step: ReadyStep): string {
  return step.name ?? (typeof step.run === 'string' ? step.run : step.run.join(' '));
}

async function runReadyStep(step: ReadyStep, cwd: string, env: NodeJS.ProcessEnv): Promise<ReadyRecord['failed'] | undefined> {
  const [file, args] = stepCommand(step);
  const clean = stepEnvironment(step, env);
  const result = await runStep(file, args, { cwd, env: clean, clean: true, timeoutMs: stepTimeoutMs(step) });
  if (result.exitCode === 0 && !result.failedToStart) return undefined;
  const words = result.failedToStart ?? (result.timedOut ? `timed out\n${result.all}` : result.all);
  return { step: stepLabel(step), exitCode: result.exitCode, tail: words.trimEnd().slice(-TAIL_CHARS) };
}

function now(): string {
  return new Date().toISOString();
}
