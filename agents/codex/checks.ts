/**
 * What the Codex driver needs on this machine, for `flume doctor`: its program, and a version flume
 * was checked against (0.171.0; its screens and rollout lines are pinned in
 * test/integration/codex-vs-real.test.ts).
 */
import { keptCache, run, FlumeError, type DoctorCheck } from '../../core/index.js';
import { codexEnvironment, requireProgram } from './environment.js';
import type { CodexOptions } from './options.js';

/** The Codex CLI versions flume's readings were checked against. */
export const CHECKED_VERSIONS = ['0.171.0'];

const asked = keptCache<string, Promise<string | undefined>>('codex versions', { holds: 'the version each Codex program reports, by its path and PATH', entries: 100 });

/** `codex --version` (`codex-cli 0.171.0`) as `0.171.0`; undefined when it does not say. Asked once per program and PATH. */
export function codexVersion(binary: string, env: Record<string, string>): Promise<string | undefined> {
  const key = `${binary}\0${env.PATH ?? ''}`;
  let answer = asked.get(key);
  if (!answer) {
    answer = run(binary, ['--version'], { env, timeoutMs: 10_000 }).then(
      (result) => (result.exitCode === 0 ? /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(result.stdout)?.[1] : undefined),
      () => undefined,
    );
    asked.set(key, answer);
  }
  return answer;
}

/** The checks of the Codex driver configured with `options`. */
export async function codexChecks(options: CodexOptions): Promise<DoctorCheck[]> {
  const env = codexEnvironment(options);
  const binary = options.binary ?? 'codex';
  let path: string;
  try {
    path = requireProgram(binary, env);
  } catch (error) {
    const detail = error instanceof FlumeError ? error.message : String(error);
    return [{ name: 'Codex CLI', ok: false, needed: true, detail, fix: 'Install the Codex CLI (npm install -g @openai/codex), or name its program in the config (agents.codex.binary).' }];
  }
  const version = await codexVersion(binary, env);
  const checked = version !== undefined && CHECKED_VERSIONS.includes(version);
  const key = options.provider?.env_key;
  return [
    { name: 'Codex CLI', ok: true, needed: true, detail: `${path}${version ? ` ${version}` : ''}`, ...(version ? { version } : {}) },
    {
      name: 'Codex CLI version',
      ok: checked,
      needed: false,
      detail: checked ? `${version}, which flume was checked against` : `${version ?? 'unknown'}; flume was checked against ${CHECKED_VERSIONS.join(', ')}`,
      ...(checked ? {} : { fix: `Install @openai/codex@${CHECKED_VERSIONS.at(-1)} if status misreads its agents.` }),
    },
    ...(key ? [{ name: 'Codex provider key', ok: Boolean(env[key]), needed: false, detail: env[key] ? `${key} is set` : `${key} is not set`, ...(env[key] ? {} : { fix: `Set ${key} in the environment flume runs in, or in agents.codex.env.` }) }] : []),
  ];
}
