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
  // Asked where the pane runs its program when that is elsewhere (a container): asked each time there.
  if (where?.run) return where.run([binary, '--version'], env).then((result) => (result.exitCode === 0 ? versionIn(result.stdout) : undefined), () => undefined);
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

/** The `major.minor.patch[-pre]` at the start of `--version`'s output, if any. */
export function versionIn(output: string): string | undefined {
  return /^\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(output)?.[1];
}
