/**
 * What the OpenCode driver needs on this machine, for `flume doctor`: its program, and a version
 * flume was checked against (1.18.33; its screens and record are pinned in
 * test/e2e-opencode/opencode-vs-real.test.ts).
 */
import { keptCache, run, FlumeError, type DoctorCheck } from '../../core/index.js';
import { opencodeEnvironment, requireProgram } from './environment.js';
import type { OpencodeOptions } from './options.js';

/** The OpenCode versions flume's readings were checked against. */
export const CHECKED_VERSIONS = ['1.18.33'];

const asked = keptCache<string, Promise<string | undefined>>('opencode versions', { holds: 'the version each OpenCode program reports, by its path and PATH', entries: 100 });

/** `opencode --version` (`1.18.33`); undefined when it does not say. Asked once per program and PATH. */
export function opencodeVersion(binary: string, env: Record<string, string>): Promise<string | undefined> {
  const key = `${binary}\0${env.PATH ?? ''}`;
  let answer = asked.get(key);
  if (!answer) {
    answer = run(binary, ['--version'], { env, timeoutMs: 15_000 }).then(
      (result) => (result.exitCode === 0 ? /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(result.stdout)?.[1] : undefined),
      () => undefined,
    );
    asked.set(key, answer);
  }
  return answer;
}

/** The checks of the OpenCode driver configured with `options`. */
export async function opencodeChecks(options: OpencodeOptions): Promise<DoctorCheck[]> {
  const env = opencodeEnvironment(options);
  const binary = options.binary ?? 'opencode';
  let path: string;
  try {
    path = requireProgram(binary, env);
  } catch (error) {
    const detail = error instanceof FlumeError ? error.message : String(error);
    return [{ name: 'OpenCode', ok: false, needed: true, detail, fix: 'Install OpenCode (npm install -g opencode-ai), or name its program in the config (agents.opencode.binary).' }];
  }
  const version = await opencodeVersion(binary, env);
  const checked = version !== undefined && CHECKED_VERSIONS.includes(version);
  return [
    { name: 'OpenCode', ok: true, needed: true, detail: `${path}${version ? ` ${version}` : ''}`, ...(version ? { version } : {}) },
    {
      name: 'OpenCode version',
      ok: checked,
      needed: false,
      detail: checked ? `${version}, which flume was checked against` : `${version ?? 'unknown'}; flume was checked against ${CHECKED_VERSIONS.join(', ')}`,
      ...(checked ? {} : { fix: `Install opencode-ai@${CHECKED_VERSIONS.at(-1)} if status misreads its agents.` }),
    },
  ];
}
