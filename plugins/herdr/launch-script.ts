/**
 * How a program reaches a herdr pane with exactly flume's argv, folder and environment. herdr's CLI
 * makes a pane only around the user's interactive shell (`workspace create`, `tab create`, `pane
 * split`), and `agent start` runs only herdr's own executable for a fixed list of agent kinds, in
 * that shell's environment. So flume writes a POSIX script (core/pane-env.ts: it removes itself,
 * enters the folder, exports exactly flume's variables and `exec`s the program) and types one line
 * into the pane's shell that `exec`s `env -i /bin/sh SCRIPT`: the shell becomes the program (same
 * pid), nothing a user wrote is typed into a shell, no value of the environment stands in any argv,
 * and the program's exit ends the pane.
 */
import { FlumeError, paneEnvScript, type PaneSpec } from '../../core/index.js';

/** The script's text: removes itself (so flume sees the shell ran it), enters the folder, execs. */
export function launchScript(spec: PaneSpec): string {
  return `#!/bin/sh\n${paneEnvScript(spec, { cd: true })}`;
}

/**
 * The line typed into the pane's shell. Only the script's path is in it, single-quoted, which sh,
 * bash, zsh and fish all read alike when the path holds no quote, backslash or control character.
 * `env -i` leaves the shell's environment behind. The leading space keeps it out of shell history
 * where the shell honours that.
 */
export function launchLine(scriptPath: string): string {
  if (/['\\\u0000-\u001f\u007f]/.test(scriptPath)) {
    throw new FlumeError('AGENT_START_FAILED', `flume's state folder cannot be named in a herdr pane's shell: ${JSON.stringify(scriptPath)}.`, {
      fix: 'Set FLUME_STATE_DIR (or XDG_STATE_HOME) to a folder whose path has no quote, backslash or control character.',
      details: { script: scriptPath },
    });
  }
  return ` exec env -i /bin/sh '${scriptPath}'`;
}
