/**
 * `flume doctor`: one check a line with its fix, exit 1 when a launch would miss something, and no
 * untrusted config run to find out. The agent here is the fake, which answers `--version` and
 * `auth status` as the real Claude Code does (test/e2e/doctor.test.ts pins those on the real program).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { flume, makeRepo, PROJECT, remove, snapshot, tempDir } from '../../helpers/repo.js';
import { FAKE_CLAUDE } from '../../helpers/fake-claude/index.js';

let current: AgentRepo | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

type Check = { name: string; ok: boolean; needed: boolean; detail: string; fix?: string; by: string };
const doctorOf = async (args: string[], env: Record<string, string>, cwd?: string) => {
  const result = await flume(['doctor', ...args, '--json'], { env, cwd });
  const report = JSON.parse(result.stdout) as { ok: boolean; checks: Check[] };
  const check = (name: string) => report.checks.find((c) => c.name === name);
  return { code: result.code, report, check };
};

/** A PATH holding only git, sh, node and unshare: no tmux. */
function pathWithoutTmux(): string {
  const bin = tempDir('flume-path-');
  cleanups.push(() => remove(bin));
  for (const program of ['git', 'sh', 'unshare']) symlinkSync(execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(), join(bin, program));
  symlinkSync(process.execPath, join(bin, 'node'));
  return bin;
}

describe('flume doctor', () => {
  it('says what a launch needs, each with its fix, and exits 1 only when a needed check fails', async () => {
    current = agentRepo();
    const loggedIn = await doctorOf(['--repo', current.repo], { ...current.env, ANTHROPIC_API_KEY: 'sk-ant-test-doctor' });
    expect(loggedIn.code, JSON.stringify(loggedIn.report, null, 2)).toBe(0);
    expect(loggedIn.report.ok).toBe(true);
    expect(loggedIn.check('node')).toMatchObject({ ok: true, needed: true, detail: process.versions.node });
    expect(loggedIn.check('git')).toMatchObject({ ok: true, needed: true });
    expect(loggedIn.check('repository trust')).toMatchObject({ ok: true, detail: `${current.repo}: trusted` });
    expect(loggedIn.check('tmux')).toMatchObject({ ok: true, by: 'tmux' });
    expect(loggedIn.check('Claude Code')).toMatchObject({ ok: true, needed: true, by: 'claude-code' });
    expect(loggedIn.check('Claude Code')!.detail).toMatch(/fake-claude\.mjs 2\.1\.332$/);
    expect(loggedIn.check('Claude Code version')).toMatchObject({ ok: true });
    expect(loggedIn.check('Claude Code login')).toMatchObject({ ok: true, needed: true, detail: 'logged in (api_key)' });
    // The printed driver is Claude Code's too: its checks are not listed twice.
    expect(loggedIn.report.checks.filter((c) => c.name === 'Claude Code login')).toHaveLength(1);
    // `flume version` lists the programs doctor found, the agent's with the version it reports.
    const version = await flume(['version', '--repo', current.repo, '--json'], { env: { ...current.env, ANTHROPIC_API_KEY: 'sk-ant-test-doctor' } });
    expect(version.code).toBe(0);
    const programs = JSON.parse(version.stdout);
    expect(programs.flume).toMatch(/^\d+\.\d+\.\d+/);
    expect(programs.programs).toEqual(expect.arrayContaining([
      { name: 'node', by: 'flume', version: process.versions.node },
      { name: 'Claude Code', by: 'claude-code', version: '2.1.332' },
      expect.objectContaining({ name: 'git', by: 'flume' }),
      expect.objectContaining({ name: 'tmux', by: 'tmux' }),
    ]));

    const env = { ...current.env };
    delete env.ANTHROPIC_API_KEY;
    const out = await doctorOf(['--repo', current.repo], env);
    expect(out.code).toBe(1);
    expect(out.report.ok).toBe(false);
    expect(out.check('Claude Code login')).toMatchObject({ ok: false, needed: true, detail: 'not logged in' });
    expect(out.check('Claude Code login')!.fix).toContain('claude /login');
    const text = await flume(['doctor', '--repo', current.repo], { env });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('✗ Claude Code login: not logged in\n    fix: Log in with `claude /login`');
    expect(text.stdout).toContain('✓ git: ');
    expect(text.stdout).toContain('flume cannot launch here until each ✗ above is fixed.');
  });

  it('wants git 2.38 or later (a branch is judged by content with git merge-tree --write-tree): an older one fails with its fix', async () => {
    current = agentRepo();
    // A git that says it is 2.37.1 and is the real one otherwise.
    const bin = tempDir('flume-old-git-');
    cleanups.push(() => remove(bin));
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\nif [ "$1" = --version ]; then echo "git version 2.37.1"; exit 0; fi\nexec '${real}' "$@"\n`, { mode: 0o755 });
    const env = { ...current.env, ANTHROPIC_API_KEY: 'sk-ant-test-doctor', PATH: `${bin}:${current.env.PATH ?? process.env.PATH}` };
    const old = await doctorOf(['--repo', current.repo], env);
    expect(old.code).toBe(1);
    expect(old.check('git')).toMatchObject({ ok: false, needed: true, detail: '2.37.1', fix: 'Install git 2.38.0 or newer.' });
  });

  it('names a missing tmux with its fix, needed only where the config insists on tmux', async () => {
    current = agentRepo({}, { agent: { host: 'auto' } });
    const env = { ...current.env, ANTHROPIC_API_KEY: 'sk-ant-test-doctor', PATH: pathWithoutTmux() };
    const auto = await doctorOf(['--repo', current.repo], env);
    expect(auto.check('tmux')).toMatchObject({ ok: false, needed: false, detail: 'not found on PATH' });
    expect(auto.check('tmux')!.fix).toContain('Install tmux');
    expect(auto.code, JSON.stringify(auto.report, null, 2)).toBe(0);

    const insists = agentRepo({}, { agent: { host: 'tmux' } });
    cleanups.push(() => void insists.cleanup());
    const tmux = await doctorOf(['--repo', insists.repo], { ...insists.env, ANTHROPIC_API_KEY: 'sk-ant-test-doctor', PATH: env.PATH });
    expect(tmux.check('tmux')).toMatchObject({ ok: false, needed: true });
    expect(tmux.code).toBe(1);
  });

  it('never runs a config the user has not trusted, and changes nothing in the repository', async () => {
    const state = tempDir('flume-state-');
    cleanups.push(() => remove(state));
    const marker = join(state, 'config-ran');
    const repo = makeRepo({ config: `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport default {};\n`, trusted: false });
    cleanups.push(() => remove(repo));
    const before = snapshot(repo);
    const result = await doctorOf(['--repo', repo], { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state });
    expect(result.code).toBe(1);
    expect(result.check('repository trust')).toMatchObject({ ok: false, needed: true, detail: `${repo}: config not trusted` });
    expect(result.check('repository trust')!.fix).toBe(`Read its config, then \`flume trust --repo ${repo}\`.`);
    expect(existsSync(marker)).toBe(false);
    expect(snapshot(repo)).toBe(before);
    // Its agent is the config's to name: not checked (no program run) until the config is trusted.
    expect(result.check('agents and pane hosts')).toMatchObject({ ok: false, needed: false, detail: 'not checked: its config is not trusted' });
    expect(result.check('Claude Code')).toBeUndefined();
  });

  it('lists the checks a third party\'s driver brings, for the kinds that use it', async () => {
    const state = tempDir('flume-state-');
    cleanups.push(() => remove(state));
    const repo = makeRepo({
      config: `export default {
  plugins: [{ name: 'acme:robot', apply(flume) {
    const idle = async () => {};
    flume.agents.register('acme-robot', { key: 'acme-robot', start: idle, waitForInput: idle, send: idle, resend: idle, confirm: idle, read: idle, hasDraft: idle, stop: idle, watchPaths: () => [], checks: async () => [{ name: 'acme robot', ok: false, needed: true, detail: 'robot not charged', fix: 'Charge the robot.' }] });
  } }],
  agents: { 'claude-code': { binary: ${JSON.stringify(FAKE_CLAUDE)} } },
  kinds: [{ name: 'chore', stages: [{ name: 'do', agent: 'acme-robot', prompt: 'Do the chore.', deliverable: { type: 'commit' } }] }],
};\n`,
    });
    cleanups.push(() => remove(repo));
    const result = await doctorOf(['--repo', repo], { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state, ANTHROPIC_API_KEY: 'sk-ant-test-doctor' });
    expect(result.check('acme robot'), JSON.stringify(result.report, null, 2)).toMatchObject({ ok: false, needed: true, detail: 'robot not charged', fix: 'Charge the robot.', by: 'acme-robot' });
    expect(result.code).toBe(1);
  });

  it('names the Gemini CLI and OpenCode for the kinds that run them: each program and its version, or its install when missing', async () => {
    const state = tempDir('flume-state-');
    cleanups.push(() => remove(state));
    const config = (gemini: string, opencode: string) => `export default {
  agents: { gemini: { binary: ${JSON.stringify(gemini)} }, opencode: { binary: ${JSON.stringify(opencode)} } },
  kinds: [{ name: 'chore', stages: [
    { name: 'do', agent: 'gemini', prompt: 'Do the chore.', deliverable: { type: 'commit' } },
    { name: 'check', agent: 'opencode', prompt: 'Check the chore.', deliverable: { type: 'commit' } },
  ] }],
};\n`;
    const env = { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state };
    const gemini = join(PROJECT, 'node_modules', '.bin', 'gemini');
    const opencode = join(PROJECT, 'node_modules', '.bin', 'opencode');
    const repo = makeRepo({ config: config(gemini, opencode) });
    cleanups.push(() => remove(repo));
    const found = await doctorOf(['--repo', repo], env);
    expect(found.check('Gemini CLI'), JSON.stringify(found.report, null, 2)).toMatchObject({ ok: true, needed: true, detail: `${gemini} 0.61.0`, by: 'gemini' });
    expect(found.check('Gemini CLI version')).toMatchObject({ ok: true, detail: '0.61.0, which flume was checked against' });
    expect(found.check('OpenCode')).toMatchObject({ ok: true, needed: true, detail: `${opencode} 1.18.33`, by: 'opencode' });
    expect(found.check('OpenCode version')).toMatchObject({ ok: true, detail: '1.18.33, which flume was checked against' });

    const missing = makeRepo({ config: config('gemini-not-installed', 'opencode-not-installed') });
    cleanups.push(() => remove(missing));
    const out = await doctorOf(['--repo', missing], env);
    expect(out.code).toBe(1);
    expect(out.check('Gemini CLI')).toMatchObject({ ok: false, needed: true, by: 'gemini' });
    expect(out.check('Gemini CLI')!.fix).toBe('Install the Gemini CLI (npm install -g @google/gemini-cli), or name its program in the config (agents.gemini.binary).');
    expect(out.check('OpenCode')).toMatchObject({ ok: false, needed: true, by: 'opencode' });
    expect(out.check('OpenCode')!.fix).toBe('Install OpenCode (npm install -g opencode-ai), or name its program in the config (agents.opencode.binary).');
  });
});
