/**
 * What the Codex driver needs on this machine, for `flume doctor`: its program, and a version flume
 * was checked against (0.171.0; its screens and rollout lines are pinned in
 * test/integration/codex-vs-real.test.ts).
 */
import type { DoctorCheck } from '../../core/index.js';
import { programChecks, programVersion } from '../program.js';
import { CODEX, codexEnvironment } from './environment.js';
import type { CodexOptions } from './options.js';

/** The Codex CLI versions flume's readings were checked against. */
export const CHECKED_VERSIONS = ['0.171.0'];

/** The Codex CLI's version (`0.171.0`): its package's record, or `codex --version` (`codex-cli 0.171.0`); undefined when neither says. Asked once per program and PATH. */
export const codexVersion = (binary: string, env: Record<string, string>) => programVersion(binary, env, '@openai/codex');

/** The checks of the Codex driver configured with `options`. */
export async function codexChecks(options: CodexOptions): Promise<DoctorCheck[]> {
  const env = codexEnvironment(options);
  const checks = await programChecks({ ...CODEX, binary: options.binary ?? 'codex', env, checked: CHECKED_VERSIONS });
  const key = options.provider?.env_key;
  if (!key || !checks[0]!.ok) return checks;
  return [...checks, { name: 'Codex provider key', ok: Boolean(env[key]), needed: false, detail: env[key] ? `${key} is set` : `${key} is not set`, ...(env[key] ? {} : { fix: `Set ${key} in the environment flume runs in, or in agents.codex.env.` }) }];
}
