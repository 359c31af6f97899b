import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { agentBaseEnvironment, GIT_LOCAL_VARIABLES, passedOn, utf8LocaleFor, withoutGitLocal } from '../../../core/support/environment.js';
import { run } from '../../../core/support/exec.js';
import { agentEnvironment } from '../../../agents/claude-code/environment.js';
import { codexEnvironment } from '../../../agents/codex/environment.js';
import { geminiEnvironment } from '../../../agents/gemini/environment.js';
import { opencodeEnvironment } from '../../../agents/opencode/environment.js';
import { printedNote } from '../../../core/cli/output.js';

describe("an agent's environment", () => {
  it("names every local variable git lists (git rev-parse --local-env-vars)", () => {
    const gits = execFileSync('git', ['rev-parse', '--local-env-vars'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(gits.length).toBeGreaterThan(10);
    expect(gits.filter((name) => !GIT_LOCAL_VARIABLES.includes(name))).toEqual([]);
  });

  it('reaches no program flume runs from the caller: git, a step or anything else, unless flume sets it', async () => {
    const saved = { GIT_DIR: process.env.GIT_DIR, GIT_WORK_TREE: process.env.GIT_WORK_TREE };
    process.env.GIT_DIR = '/nowhere/.git';
    process.env.GIT_WORK_TREE = '/nowhere';
    try {
      const seen = await run('sh', ['-c', 'echo "${GIT_DIR-unset} ${GIT_WORK_TREE-unset} ${MINE-unset}"'], { env: { MINE: 'kept' } });
      expect(seen.stdout.trim()).toBe('unset unset kept');
      const plain = await run('sh', ['-c', 'echo "${GIT_DIR-unset}"']);
      expect(plain.stdout.trim()).toBe('unset');
      expect(withoutGitLocal({ GIT_DIR: 'x', GIT_AUTHOR_NAME: 'a', PATH: '/bin' })).toEqual({ GIT_AUTHOR_NAME: 'a', PATH: '/bin' });
    } finally {
      for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("passes the user's git identity and discovery limit on to every program flume runs, not a hook's quarantine, namespace or dates, nor FLUME_HOST", async () => {
    const passed = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'c', GIT_COMMITTER_EMAIL: 'c@x', GIT_CEILING_DIRECTORIES: '/w' };
    const dropped = { GIT_QUARANTINE_PATH: '/b/objects/tmp_objdir-incoming-x', GIT_NAMESPACE: 'n', GIT_AUTHOR_DATE: '@1 +0000', GIT_COMMITTER_DATE: '@1 +0000', FLUME_HOST: 'far' };
    expect(passedOn({ ...passed, ...dropped, PATH: '/bin' })).toEqual({ ...passed, PATH: '/bin' });
    const saved = { ...process.env };
    Object.assign(process.env, passed, dropped);
    try {
      const seen = await run('sh', ['-c', 'env'], { env: { GIT_NAMESPACE: 'set on purpose' } });
      const names = seen.stdout.split('\n').map((line) => line.split('=')[0]);
      expect(Object.keys(dropped).filter((name) => names.includes(name))).toEqual(['GIT_NAMESPACE']);
      expect(seen.stdout).toContain('GIT_NAMESPACE=set on purpose');
      expect(Object.keys(passed).filter((name) => !names.includes(name))).toEqual([]);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });

  it("is the caller's, less git's local variables and the driver's session variables, a UTF-8 locale where it has none, plus the config's", () => {
    const caller = {
      PATH: '/bin',
      LANG: 'C',
      GIT_DIR: '/o/.git',
      GIT_INDEX_FILE: '/o/.git/index',
      CLAUDECODE: '1',
      CLAUDE_PID: '9',
      CLAUDE_CODE_SESSION_ID: 's',
      CLAUDE_CODE_MESSAGING_SOCKET: '/s',
      CLAUDE_CODE_MESSAGING_TOKEN: 't',
      CLAUDE_CODE_CHILD_NOTES_DIR: '/n',
      CLAUDE_CODE_SSE_PORT: '1',
      CLAUDE_CODE_USE_BEDROCK: '1',
      CLAUDE_PROJECT_DIR: '/caller/project',
      CLAUDE_ENV_FILE: '/caller/session-env/x.sh',
      FLUME_HOST: 'far',
      CODEX_THREAD_ID: 'th',
      CODEX_SANDBOX: 'seatbelt',
      GEMINI_CLI: '1',
      OPENCODE: '1',
      OPENCODE_PID: '77',
      OPENCODE_SERVER_PASSWORD: 'theirs',
    };
    const claude = agentEnvironment({ env: { FROM_CONFIG: 'c' } }, caller);
    expect(Object.keys(claude).sort()).toEqual(['CLAUDE_CODE_FORCE_SESSION_PERSISTENCE', 'CLAUDE_CODE_USE_BEDROCK', 'CODEX_SANDBOX', 'CODEX_THREAD_ID', 'FROM_CONFIG', 'GEMINI_CLI', 'HOME', 'LANG', 'LC_CTYPE', 'OPENCODE', 'OPENCODE_PID', 'OPENCODE_SERVER_PASSWORD', 'PATH']);
    expect(claude.LC_CTYPE).toBe('C.UTF-8');
    // What the config names, it gets, though the caller's of that name is not passed on.
    expect(agentEnvironment({ env: { CLAUDE_ENV_FILE: '/mine.sh', GIT_NAMESPACE: 'mine' } }, caller)).toMatchObject({ CLAUDE_ENV_FILE: '/mine.sh', GIT_NAMESPACE: 'mine' });
    const codex = codexEnvironment({}, caller);
    expect(codex).not.toHaveProperty('CODEX_THREAD_ID');
    expect(codex).not.toHaveProperty('CODEX_SANDBOX');
    expect(codex).not.toHaveProperty('GIT_DIR');
    expect(codex).not.toHaveProperty('FLUME_HOST');
    expect(codex.CLAUDE_CODE_SESSION_ID).toBe('s');
    // An agent started from inside a Gemini CLI or OpenCode session is not taken for its child, nor handed its server's password.
    const gemini = geminiEnvironment({}, caller);
    expect(gemini).not.toHaveProperty('GEMINI_CLI');
    expect(gemini).not.toHaveProperty('GIT_DIR');
    expect(gemini).not.toHaveProperty('FLUME_HOST');
    expect(gemini.OPENCODE).toBe('1');
    // A CI machine's marks as `true` make the Gemini CLI headless: its agent gets them as `1`.
    expect(geminiEnvironment({}, { CI: 'true', GITHUB_ACTIONS: 'true', CI_JOB_ID: '7' })).toMatchObject({ CI: '1', GITHUB_ACTIONS: '1', CI_JOB_ID: '7' });
    expect(geminiEnvironment({}, { CI: 'false' })).toMatchObject({ CI: 'false' });
    const opencode = opencodeEnvironment({}, caller);
    for (const name of ['OPENCODE', 'OPENCODE_PID', 'OPENCODE_SERVER_PASSWORD', 'GIT_DIR', 'FLUME_HOST']) expect(opencode).not.toHaveProperty(name);
    expect(opencode.GEMINI_CLI).toBe('1');
    expect(agentBaseEnvironment(['A_*'], { A_B: '1', AB: '2', LANG: 'en_US.UTF-8' })).toEqual({ AB: '2', LANG: 'en_US.UTF-8' });
  });

  it('gets LC_ALL where the caller set a non-UTF-8 LC_ALL, LC_CTYPE where none, nothing where it is UTF-8', () => {
    expect(utf8LocaleFor({})).toEqual({ LC_CTYPE: 'C.UTF-8' });
    expect(utf8LocaleFor({ LANG: 'POSIX' })).toEqual({ LC_CTYPE: 'C.UTF-8' });
    expect(utf8LocaleFor({ LC_ALL: 'C', LANG: 'en_US.UTF-8' })).toEqual({ LC_ALL: 'C.UTF-8' });
    expect(utf8LocaleFor({ LC_CTYPE: 'en_US.utf8' })).toEqual({});
    expect(utf8LocaleFor({ LANG: 'de_DE.UTF-8' })).toEqual({});
  });
});

describe('the note under a printed command', () => {
  it('names every secret the shell must supply, and is absent when there is none', () => {
    const note = printedNote(['env', '-u', 'CLAUDECODE', 'ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"', 'A=1', 'GH_TOKEN="$GH_TOKEN"', 'claude']);
    expect(note).toContain('set ANTHROPIC_API_KEY, GH_TOKEN in the shell that runs it');
    expect(printedNote(['env', 'A=1', 'claude', 'NOT="$OTHER"'])).toBeUndefined();
  });
});
