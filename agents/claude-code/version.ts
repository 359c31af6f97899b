/**
 * Which Claude Code a program is: `<binary> --version` prints `2.1.300 (Claude Code)`. Asked once
 * per program and environment PATH in a process, at an agent's start; the answer is kept in the
 * agent's handle, so reading an agent never runs the program.
 */
import { keptCache, run, type PaneHost } from '../../core/index.js';

/** How long `--version` may take before flume goes on without knowing. */
const VERSION_TIMEOUT_MS = 10_000;

const asked = keptCache<string, Promise<string | undefined>>('claude-code versions', { holds: 'the version each Claude Code program reports, by its path and PATH', entries: 100 });

/**
 * The version the program reports (`2.1.300`), or undefined when it does not say one (not found,
 * not Claude Code, too slow): then the newest patterns are used and status shows no version.
 */
export function programVersion(binary: string, env: Record<string, string>, where?: PaneHost): Promise<string | undefined> {
  // Asked where the pane runs its program when that is elsewhere (a container): what requireProgram
  // read there with it, else asked there now.
  if (where?.run) {
    const told = toldBy.get(where)?.get(binary);
    if (told !== undefined) return Promise.resolve(versionIn(told));
    return where.run([binary, '--version'], env).then((result) => (result.exitCode === 0 ? versionIn(result.stdout) : undefined), () => undefined);
  }
  const key = `${binary}\0${env.PATH ?? ''}`;
  let answer = asked.get(key);
  if (!answer) {
    answer = run(binary, ['--version'], { env, timeoutMs: VERSION_TIMEOUT_MS }).then(
      (result) => (result.exitCode === 0 ? versionIn(result.stdout) : undefined),
      () => undefined,
    );
    asked.set(key, answer);
  }
  return answer;
}

/** What a host that runs programs elsewhere said of a program's version, by host (one per stage start) and program. */
const toldBy = new WeakMap<PaneHost, Map<string, string>>();

/** Keeps what `where` said `binary --version` prints, for programVersion to read without asking again. */
export function rememberVersion(where: PaneHost, binary: string, output: string): void {
  const told = toldBy.get(where) ?? new Map<string, string>();
  told.set(binary, output);
  toldBy.set(where, told);
}

/** The `major.minor.patch[-pre]` at the start of `--version`'s output, if any. */
export function versionIn(output: string): string | undefined {
  return /^\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(output)?.[1];
}
