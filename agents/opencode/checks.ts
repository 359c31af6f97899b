/**
 * What the OpenCode driver needs on this machine, for `flume doctor`: its program, and a version
 * flume was checked against (1.18.33; its screens and record are pinned in
 * test/e2e-opencode/opencode-vs-real.test.ts).
 */
import type { DoctorCheck } from '../../core/index.js';
import { programChecks } from '../program.js';
import { OPENCODE, opencodeEnvironment } from './environment.js';
import type { OpencodeOptions } from './options.js';

/** The OpenCode versions flume's readings were checked against. */
export const CHECKED_VERSIONS = ['1.18.33'];

/** The checks of the OpenCode driver configured with `options`. */
export function opencodeChecks(options: OpencodeOptions): Promise<DoctorCheck[]> {
  const env = opencodeEnvironment(options);
  return programChecks({ ...OPENCODE, binary: options.binary ?? 'opencode', env, checked: CHECKED_VERSIONS });
}
