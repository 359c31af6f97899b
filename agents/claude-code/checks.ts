/**
 * What the Claude Code driver needs on this machine, for `flume doctor`: its program on the agent's
 * PATH (or the config's `agents.claude-code.binary`), a version within the range flume's patterns
 * were checked against, and a login. The login is Claude Code's own answer: `claude auth status`
 * prints JSON with `loggedIn` and `authMethod` (2.1.250, 2.1.300 and 2.1.332 alike; it asks no
 * server), and exits 1 when not logged in. Like any run of the program, it may write its own
 * `.claude.json` (a backup, a lock) in its config folder: the one the config names, or the user's.
 */
import { run, type DoctorCheck, FlumeError } from '../../core/index.js';
import { claudeCodePatternTable, compareVersions, parseVersion } from './patterns.js';
import { programVersion } from './version.js';
import { agentEnvironment, requireProgram, type ClaudeCodeOptions } from './environment.js';

/** How long `claude auth status` may take. */
const AUTH_TIMEOUT_MS = 15_000;

/** The checks of the Claude Code driver configured with `options`. */
export async function claudeCodeChecks(options: ClaudeCodeOptions): Promise<DoctorCheck[]> {
  const env = agentEnvironment(options);
  const binary = options.binary ?? 'claude';
  let path: string;
  try {
    path = await requireProgram(binary, env);
  } catch (error) {
    const failure = error instanceof FlumeError ? error : undefined;
    return [{ name: 'Claude Code', ok: false, needed: true, detail: failure?.message ?? String(error), fix: 'Install Claude Code (npm install -g @anthropic-ai/claude-code), or name its program in the config (agents.claude-code.binary).' }];
  }
  const version = await programVersion(binary, env);
  return [{ name: 'Claude Code', ok: true, needed: true, detail: `${path}${version ? ` ${version}` : ''}`, ...(version ? { version } : {}) }, versionCheck(version), await loginCheck(binary, env)];
}

function versionCheck(version: string | undefined): DoctorCheck {
  const newest = claudeCodePatternTable[0].patterns.version;
  const oldest = claudeCodePatternTable.at(-1)!.from;
  const range = `${oldest} to ${newest}`;
  if (!version) return { name: 'Claude Code version', ok: false, needed: false, detail: 'its program did not say its version', fix: `flume reads it as ${newest}; it was checked against ${range}.` };
  const within = compare(version, oldest) >= 0 && compare(version, newest) <= 0;
  if (within) return { name: 'Claude Code version', ok: true, needed: false, detail: `${version}, within the range flume was checked against (${range})` };
  return {
    name: 'Claude Code version',
    ok: false,
    needed: false,
    detail: `${version}, outside the range flume was checked against (${range})`,
    fix: compare(version, newest) > 0 ? `flume reads it as ${newest}; if status misreads it, install ${newest}.` : `Update Claude Code to ${oldest} or newer.`,
  };
}

async function loginCheck(binary: string, env: Record<string, string>): Promise<DoctorCheck> {
  const fix = 'Log in with `claude /login` (or set ANTHROPIC_API_KEY in the environment flume starts agents with).';
  const result = await run(binary, ['auth', 'status'], { env, timeoutMs: AUTH_TIMEOUT_MS });
  let answer: { loggedIn?: unknown; authMethod?: unknown } | undefined;
  try {
    answer = JSON.parse(result.stdout);
  } catch {
    answer = undefined;
  }
  if (!answer || typeof answer.loggedIn !== 'boolean') {
    const said = (result.failedToStart ?? result.stderr ?? result.stdout).trim().split('\n')[0] || `exit ${result.exitCode}`;
    return { name: 'Claude Code login', ok: false, needed: false, detail: `could not tell: \`${binary} auth status\` said ${said}`, fix };
  }
  if (answer.loggedIn) return { name: 'Claude Code login', ok: true, needed: true, detail: `logged in (${String(answer.authMethod ?? 'unknown method')})` };
  return { name: 'Claude Code login', ok: false, needed: true, detail: 'not logged in', fix };
}

/** Compares two `major.minor.patch` versions (what each string starts with). */
function compare(a: string, b: string): number {
  return compareVersions(parseVersion(a) ?? [0, 0, 0], parseVersion(b) ?? [0, 0, 0]);
}
