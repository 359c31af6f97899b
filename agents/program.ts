/**
 * What the drivers of a program on PATH share for `flume doctor`: asking its version once, and the
 * two checks every such driver makes (its program found; its version one flume was checked against).
 */
import { keptCache, run, FlumeError, type DoctorCheck } from '../core/index.js';

const asked = keptCache<string, Promise<string | undefined>>('agent versions', { holds: 'the version each agent program reports, by its path and PATH', entries: 100 });

/** `<binary> --version`'s first `x.y.z`; undefined when it does not say. Asked once per program and PATH. */
export function programVersion(binary: string, env: Record<string, string>): Promise<string | undefined> {
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

/** A program a driver runs, as doctor checks it. */
export interface AgentProgram {
  /** Its name in doctor's list (`Codex CLI`). */
  name: string;
  /** What comes before its name in a sentence: default `the ` (`Install the Codex CLI`); '' for a proper name. */
  article?: string;
  /** Its npm package (`@openai/codex`). */
  npm: string;
  /** The driver's key, whose options name the program (`agents.<key>.binary`). */
  driver: string;
  binary: string;
  env: Record<string, string>;
  /** The versions flume's readings were checked against, newest last. */
  checked: readonly string[];
  /** Finds the program, or throws AGENT_START_FAILED saying why not. */
  find(binary: string, env: Record<string, string>): string;
}

/** The program found (with its version), and whether that version is one flume was checked against. */
export async function programChecks(program: AgentProgram): Promise<DoctorCheck[]> {
  let path: string;
  try {
    path = program.find(program.binary, program.env);
  } catch (error) {
    const detail = error instanceof FlumeError ? error.message : String(error);
    return [{ name: program.name, ok: false, needed: true, detail, fix: `Install ${program.article ?? 'the '}${program.name} (npm install -g ${program.npm}), or name its program in the config (agents.${program.driver}.binary).` }];
  }
  const version = await programVersion(program.binary, program.env);
  const checked = version !== undefined && program.checked.includes(version);
  return [
    { name: program.name, ok: true, needed: true, detail: `${path}${version ? ` ${version}` : ''}`, ...(version ? { version } : {}) },
    {
      name: `${program.name} version`,
      ok: checked,
      needed: false,
      detail: checked ? `${version}, which flume was checked against` : `${version ?? 'unknown'}; flume was checked against ${program.checked.join(', ')}`,
      ...(checked ? {} : { fix: `Install ${program.npm}@${program.checked.at(-1)} if status misreads its agents.` }),
    },
  ];
}
