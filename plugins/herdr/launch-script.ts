/**
 * How a program reaches a herdr pane with exactly flume's argv, folder and environment. herdr's CLI
 * makes a pane only around the user's interactive shell (`workspace create`, `tab create`, `pane
 * split`), and `agent start` runs only herdr's own executable for a fixed list of agent kinds, in
 * that shell's environment. So flume writes a POSIX script that `exec`s `env -i KEY=VAL … argv`, and
 * types one line into the pane's shell that `exec`s the script: the shell becomes the program (same
 * pid), nothing a user wrote is typed into a shell, and the program's exit ends the pane.
 */
import { checkPaneSpec, FlumeError, type PaneSpec } from '../../core/index.js';

/** The script's text: removes itself (so flume sees the shell ran it), enters the folder, execs. */
export function launchScript(spec: PaneSpec, envProgram: string): string {
  checkPaneSpec(spec);
  const vars = Object.entries(spec.env).map(([key, value]) => quote(`${key}=${value}`));
  return [
    '#!/bin/sh',
    '# Written by flume for one herdr pane; it deletes itself as it starts.',
    'rm -f -- "$0"',
    `cd -- ${quote(spec.cwd)} || exit 111`,
    `exec ${[quote(envProgram), '-i', ...vars, ...spec.argv.map(quote)].join(' ')}`,
    '',
  ].join('\n');
}

/**
 * The line typed into the pane's shell. Only the script's path is in it, single-quoted, which sh,
 * bash, zsh and fish all read alike when the path holds no quote, backslash or control character.
 * The leading space keeps it out of shell history where the shell honours that.
 */
export function launchLine(scriptPath: string): string {
  if (/['\\\u0000-\u001f\u007f]/.test(scriptPath)) {
    throw new FlumeError('AGENT_START_FAILED', `flume's state folder cannot be named in a herdr pane's shell: ${JSON.stringify(scriptPath)}.`, {
      fix: 'Set FLUME_STATE_DIR (or XDG_STATE_HOME) to a folder whose path has no quote, backslash or control character.',
      details: { script: scriptPath },
    });
  }
  return ` exec /bin/sh '${scriptPath}'`;
}

/** A word for sh: single-quoted unless it is plainly safe. */
export function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

