/**
 * What the Claude Code driver and its checks share: its options, the variables a Claude Code session
 * hands its children (never passed on to an agent flume starts), the agent's environment, and
 * finding its program.
 */
import { join } from 'node:path';
import { homedir } from 'node:os';
import { agentBaseEnvironment, flumeError, type PaneHost } from '../../core/index.js';
import { rememberVersion } from './version.js';

/** How a repository (or a test) points flume at its Claude Code. */
export interface ClaudeCodeOptions {
  /** The program; default `claude` on PATH. */
  binary?: string;
  /** Arguments after flume's own. */
  args?: string[];
  /** Variables added to the agent's environment. */
  env?: Record<string, string>;
  /** CLAUDE_CONFIG_DIR; default the caller's, else ~/.claude. */
  configDir?: string;
}

/**
 * What a Claude Code session hands the programs it starts (its Bash tool, its MCP servers), each bound
 * to that session: the markers that make claude a child of it (which silently loses the child's
 * transcript), its id and pid, its inbox socket and the token to it, its notes folder, its IDE's SSE
 * port, its remote and bridge session ids, and what it hands its hooks: its project folder and the
 * file a SessionStart hook writes and its Bash tool sources before each command. Claude Code's settings a user sets on purpose
 * (CLAUDE_CONFIG_DIR, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_DISABLE_*, CLAUDE_CODE_OAUTH_TOKEN, …) are
 * none of these and pass.
 */
export const CLAUDE_SESSION_VARIABLES: readonly string[] = [
  'CLAUDECODE',
  'CLAUDE_PID',
  'CLAUDE_EFFORT',
  'AI_AGENT',
  'CLAUDE_SESSION_ID',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_EXECPATH',
  'CLAUDE_CODE_CHILD_*',
  'CLAUDE_CODE_MESSAGING_*',
  'CLAUDE_CODE_SSE_*',
  'CLAUDE_CODE_SESSION_ID',
  'CLAUDE_CODE_SESSION_ATTENDED',
  'CLAUDE_CODE_SESSION_ACCESS_TOKEN',
  'CLAUDE_CODE_SESSION_KIND',
  'CLAUDE_CODE_SESSION_NAME',
  'CLAUDE_CODE_SESSION_ORIGIN',
  'CLAUDE_CODE_SESSION_CREATED_AT_MS',
  'CLAUDE_CODE_SESSION_BEGAN_AS_COPY',
  'CLAUDE_CODE_HOST_SESSION_ID',
  'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS',
  'CLAUDE_CODE_CLOUD_SESSION_ID',
  'CLAUDE_CODE_REMOTE_SESSION_*',
  'CLAUDE_CODE_BRIDGE_SESSION_ID',
  'CLAUDE_CODE_BRIDGE_CHILD_*',
  'CLAUDE_PROJECT_DIR',
  'CLAUDE_ENV_FILE',
];

/**
 * Throws AGENT_START_FAILED, naming the program and why, unless `program` is an executable file: a
 * path as given, or a bare name found on the agent's PATH.
 */
export async function requireProgram(program: string, env: Record<string, string>, where?: PaneHost): Promise<string> {
  // Where the pane runs its program elsewhere (a container), the program is looked for there.
  if (where?.run) {
    // One program there answers both: where the program is, and its version (kept for programVersion).
    const found = await where.run(['sh', '-c', 'command -v "$1" && { "$1" --version || true; }', 'sh', program], env).catch(() => undefined);
    const [path, ...version] = found?.exitCode === 0 ? found.stdout.trim().split('\n') : [];
    if (path) {
      rememberVersion(where, program, version.join('\n'));
      return path;
    }
    throw flumeError('AGENT_START_FAILED', { program, where: where.key }, { variant: 'claudeNotThere', details: { program, host: where.key } });
  }
  const { access, stat } = await import('node:fs/promises');
  const { constants } = await import('node:fs');
  const { delimiter, resolve } = await import('node:path');
  const executable = async (path: string) => (await stat(path).then((s) => s.isFile(), () => false)) && (await access(path, constants.X_OK).then(() => true, () => false));
  if (program.includes('/')) {
    const path = resolve(program);
    if (await executable(path)) return path;
    const there = await stat(path).then(() => true, () => false);
    throw flumeError('AGENT_START_FAILED', { program }, { variant: there ? 'claudeNotExecutable' : 'claudeNoFile', details: { program } });
  }
  const folders = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const folder of folders) {
    const path = join(folder, program);
    if (await executable(path)) return path;
  }
  throw flumeError('AGENT_START_FAILED', { program, count: folders.length }, {
    variant: folders.length === 1 ? 'claudeNotOnPathOne' : 'claudeNotOnPath',
    details: { program, path: env.PATH ?? '' },
  });
}

/**
 * The agent's environment: the caller's (`base`), less git's local variables and Claude Code's session
 * variables, with a UTF-8 locale where it has none (core/support/environment.ts), persistence forced, the
 * config's added.
 */
export function agentEnvironment(options: ClaudeCodeOptions, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = agentBaseEnvironment(CLAUDE_SESSION_VARIABLES, base);
  env.CLAUDE_CODE_FORCE_SESSION_PERSISTENCE = '1';
  if (options.configDir) env.CLAUDE_CONFIG_DIR = options.configDir;
  Object.assign(env, options.env ?? {});
  env.HOME ??= homedir();
  return env;
}
