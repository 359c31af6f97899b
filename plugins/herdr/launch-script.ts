/**
 * How flume's program, folder and environment reach a herdr pane (herdr 0.8.0, README.md).
 *
 * - **A kind herdr knows** (`claude`, `codex`: the program's name is the kind's executable): the
 *   pane is made with `--cwd` and every variable that is not a secret as `--env KEY=VALUE`; the
 *   secrets (core/support/secret.ts names them) go into a private script the pane's shell sources (` . 'PATH'`,
 *   only the path typed), which deletes itself first; then `herdr agent start NAME --kind KIND --pane
 *   ID -- ARGS…` runs the agent with flume's arguments unchanged, so herdr knows it by name (`agent
 *   wait`, readiness) and it keeps herdr's `HERDR_PANE_ID`, so herdr's own Claude integration reports.
 *   herdr runs the kind's executable by name, so the folder of flume's program leads the PATH given.
 * - **Any other program**: the pane's shell `exec`s `env -i /bin/sh SCRIPT`, the script exporting
 *   exactly flume's environment (core/drivers/pane-env.ts); herdr then sees a process, not an agent it named.
 *
 * Either way no value of a secret stands in any argv, and nothing a user wrote is typed into a shell.
 */
import { basename, dirname, isAbsolute } from 'node:path';
import { checkPaneSpec, flumeError, paneEnvScript, SECRET_NAME, shellQuote, type PaneSpec } from '../../core/index.js';

/** herdr's agent kinds flume's drivers run, by the name of the program (herdr's canonical executable). */
export const HERDR_KINDS: Record<string, string> = { claude: 'claude', codex: 'codex' };

/** Names a POSIX shell can export. */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How a spec starts in herdr: as an agent of a kind herdr knows, or by exec. */
export interface HerdrLaunch {
  /** herdr's agent kind, when the program is one herdr knows. */
  kind?: string;
  /** `--env` pairs for the pane: no secret among them. */
  env: string[];
  /** The script the pane's shell reads (sourced for an agent, exec'd otherwise); undefined when none is needed. */
  script?: string;
  /** The arguments after `--` of `agent start`. */
  args: string[];
}

/** Plans a spec's start in herdr; refuses a bad spec before anything is made. */
export function herdrLaunch(spec: PaneSpec, scriptPath: string): HerdrLaunch {
  checkPaneSpec(spec);
  const program = spec.argv[0];
  const kind = HERDR_KINDS[basename(program)];
  if (!kind) return { env: [], script: `#!/bin/sh\n${paneEnvScript(spec, { cd: true })}`, args: [] };
  const names = Object.keys(spec.env).filter((name) => SHELL_NAME.test(name));
  const secrets = names.filter((name) => SECRET_NAME.test(name));
  const env = { ...spec.env };
  // herdr types the kind's executable by name: the folder of flume's program is searched first.
  if (isAbsolute(program)) env.PATH = env.PATH ? `${dirname(program)}:${env.PATH}` : dirname(program);
  const pairs = names.filter((name) => !secrets.includes(name)).map((name) => `${name}=${env[name]}`);
  if (isAbsolute(program) && !names.includes('PATH')) pairs.push(`PATH=${env.PATH}`);
  const script = secrets.length
    ? [
        "# Written by flume for one herdr pane: the agent's secrets, read by the pane's shell; it deletes itself first.",
        `rm -f -- ${shellQuote(scriptPath)}`,
        ...secrets.map((name) => `export ${name}=${shellQuote(spec.env[name])}`),
        '',
      ].join('\n')
    : undefined;
  return { kind, env: pairs, ...(script ? { script } : {}), args: spec.argv.slice(1) };
}

/** The text of the exec-path script (kept for callers and tests of the older form). */
export function launchScript(spec: PaneSpec): string {
  return `#!/bin/sh\n${paneEnvScript(spec, { cd: true })}`;
}

/**
 * The line typed into the pane's shell: only the script's path, single-quoted, which sh, bash, zsh
 * and fish all read alike when it holds no quote, backslash or control character. `exec` replaces
 * the shell with the program (`env -i` leaving the shell's environment behind); `source` reads the
 * secrets into the shell an agent is then started from. The leading space keeps it out of history.
 */
export function launchLine(scriptPath: string, mode: 'exec' | 'source' = 'exec'): string {
  if (/['\\\u0000-\u001f\u007f]/.test(scriptPath)) {
    throw flumeError('AGENT_START_FAILED', { script: JSON.stringify(scriptPath) }, {
      variant: 'herdrStateFolder',
      details: { script: scriptPath },
    });
  }
  return mode === 'exec' ? ` exec env -i /bin/sh '${scriptPath}'` : ` . '${scriptPath}'`;
}

/** An agent name herdr accepts (`[a-z][a-z0-9_-]{0,31}`), made from the pane's title (`fix/x:code`). */
export function agentName(title: string, attempt = 0): string {
  const suffix = attempt ? `-${attempt + 1}` : '';
  let name = title.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[^a-z]+/, '').replace(/-+$/, '');
  name = (name || 'flume').slice(0, 32 - suffix.length).replace(/-+$/, '');
  return `${name}${suffix}`;
}

/** The project a place belongs to: the repository holding `<repo>/places/<kind>--<name>`, else the folder itself. */
export function projectOf(cwd: string): string {
  return basename(dirname(cwd)) === 'places' ? dirname(dirname(cwd)) : cwd;
}
