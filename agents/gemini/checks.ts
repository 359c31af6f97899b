/**
 * What the Gemini CLI driver needs on this machine, for `flume doctor`: its program, and a version
 * flume was checked against (0.61.0; its screens and chat lines are pinned in
 * test/e2e-gemini/gemini-vs-real.test.ts).
 */
import type { DoctorCheck } from '../../core/index.js';
import { programChecks } from '../program.js';
import { GEMINI, geminiEnvironment } from './environment.js';
import type { GeminiOptions } from './options.js';

/** The Gemini CLI versions flume's readings were checked against. */
export const CHECKED_VERSIONS = ['0.61.0'];

/** The checks of the Gemini driver configured with `options`. */
export function geminiChecks(options: GeminiOptions): Promise<DoctorCheck[]> {
  const env = geminiEnvironment(options);
  return programChecks({ ...GEMINI, binary: options.binary ?? 'gemini', env, checked: CHECKED_VERSIONS });
}
