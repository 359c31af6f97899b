/**
 * What the drivers of a program on PATH share: finding it (AGENT_START_FAILED naming how to install
 * it), the agent's environment, the options every such driver takes, and for `flume doctor` asking
 * its version once and the two checks every such driver makes (its program found; its version one
 * flume was checked against).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentBaseEnvironment, flumeError, keptCache, run, which, FlumeError, type DoctorCheck } from '../core/index.js';

const asked = keptCache<string, Promise<string | undefined>>('agent versions', { holds: 'the version each agent program reports, by its path and PATH', entries: 100 });

/**
 * The program's version: read from the package.json of the npm package `npm` the program belongs to
 * (the program found on PATH, its links followed), or else `<binary> --version`'s first `x.y.z`;
 * undefined when neither says. Asked once per program and PATH.
 *
 * The package's own record first: an npm-installed agent's `--version` starts the whole program (the
 * Gemini CLI spends 4 s of CPU on it, and over 15 s on a busy machine), at every agent's start.
 */
export function programVersion(binary: string, env: Record<string, string>, npm?: string): Promise<string | undefined> {
  const key = `${binary}\0${env.PATH ?? ''}\0${npm ?? ''}`;
  let answer = asked.get(key);
  if (!answer) {
    const recorded = npm === undefined ? undefined : packageVersion(binary, env, npm);
    answer = recorded !== undefined
      ? Promise.resolve(recorded)
      : run(binary, ['--version'], { env, timeoutMs: 15_000 }).then(
          (result) => (result.exitCode === 0 ? /(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(result.stdout)?.[1] : undefined),
          () => undefined,
        );
    asked.set(key, answer);
  }
  return answer;
}

/** The version in the package.json of the package named `npm` that holds the program, or undefined. */
function packageVersion(binary: string, env: Record<string, string>, npm: string): string | undefined {
  let dir: string;
  try {
    const found = which(binary, env.PATH ?? '');
    if (!found) return undefined;
    dir = dirname(realpathSync(found));
  } catch {
    return undefined;
  }
  for (let depth = 0; depth < 6; depth++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === npm && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here, or not one to read
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** A program a driver runs: what names it, and where it comes from. */
export interface Program {
  /** Its name in messages and doctor's list (`Codex CLI`). */
  name: string;
  /** What comes before its name in a sentence: default `the ` (`Install the Codex CLI`); '' for a proper name. */
  article?: string;
  /** Its npm package (`@openai/codex`). */
  npm: string;
  /** The driver's key, whose options name the program (`agents.<key>.binary`). */
  driver: string;
}

/** A program a driver runs, as doctor checks it. */
export interface AgentProgram extends Program {
  binary: string;
  env: Record<string, string>;
  /** The versions flume's readings were checked against, newest last. */
  checked: readonly string[];
  /** Finds the program, or throws AGENT_START_FAILED saying why not; default {@link requireProgram}. */
  find?(binary: string, env: Record<string, string>): string;
}

/** What the options of every driver of a program on PATH hold (`agents.<key>`). */
export interface ProgramOptions {
  /** The program; default the driver's own name for it on PATH. */
  binary?: string;
  /** Arguments after flume's own. */
  args?: string[];
  /** Variables added to the agent's environment. */
  env?: Record<string, string>;
}

/** The JSON schema of a driver's options: {@link ProgramOptions}, and the driver's `own` properties beside. */
export function programOptionsSchema(own: Record<string, object> = {}): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      binary: { type: 'string', minLength: 1 },
      args: { type: 'array', items: { type: 'string' } },
      env: { type: 'object', additionalProperties: { type: 'string' } },
      ...own,
    },
    additionalProperties: false,
  };
}

/** Throws AGENT_START_FAILED unless `binary` is found (a path, or a name on the agent's PATH), naming how to install the program. */
export function requireProgram(program: Program, binary: string, env: Record<string, string>): string {
  const found = which(binary, env.PATH ?? '');
  if (found) return found;
  throw flumeError('AGENT_START_FAILED', { program: binary, driver: program.driver, install: `Install ${program.article ?? 'the '}${program.name} (npm install -g ${program.npm})` }, {
    variant: binary.includes('/') ? 'programNotExecutable' : 'programNotOnPath',
    details: { program: binary },
  });
}

/**
 * The agent's environment: the caller's (`base`), less git's local variables and the program's own
 * session variables, with a UTF-8 locale where it has none (core/support/environment.ts); then
 * `defaults`, the config's `env` over them, and TERM where neither set one.
 */
export function programEnvironment(sessionVariables: readonly string[], options: ProgramOptions, base: NodeJS.ProcessEnv = process.env, defaults: Record<string, string> = {}): Record<string, string> {
  const env = agentBaseEnvironment(sessionVariables, base);
  Object.assign(env, defaults, options.env ?? {});
  env.TERM ??= 'xterm-256color';
  return env;
}

/** The program found (with its version), and whether that version is one flume was checked against. */
export async function programChecks(program: AgentProgram): Promise<DoctorCheck[]> {
  let path: string;
  try {
    path = (program.find ?? ((binary, env) => requireProgram(program, binary, env)))(program.binary, program.env);
  } catch (error) {
    const detail = error instanceof FlumeError ? error.message : String(error);
    return [{ name: program.name, ok: false, needed: true, detail, fix: `Install ${program.article ?? 'the '}${program.name} (npm install -g ${program.npm}), or name its program in the config (agents.${program.driver}.binary).` }];
  }
  const version = await programVersion(program.binary, program.env, program.npm);
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
