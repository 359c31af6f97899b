/**
 * What of the caller's environment reaches flume's git, its supervisor and the agent: git's local
 * variables never do (a launch from a git hook of another repository works in the repository it
 * names and leaves the other byte for byte as it was), nor a push's quarantine (a launch from a
 * pre-receive hook works), nor the variables bound to the caller's own agent session or to its git
 * run, nor `FLUME_HOST` (`--host local launch` is supervised here); the user's identity and discovery
 * limit pass. A caller with no UTF-8 locale reads its agents as any other does. The agent is the
 * scripted fake in flume's own tmux; its environment, and the supervisor's, are read from /proc.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, git, makeRepo, remove, tempDir } from '../../helpers/repo.js';
import { environOf } from '../../helpers/proc.js';
import { GIT_LOCAL_VARIABLES } from '../../../core/support/environment.js';
import { which } from '../../../core/support/exec.js';

const hasTmux = which('tmux') !== undefined;

let cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Every file under `root` (its .git too) with the sha256 of its content, and every folder: a byte-for-byte picture. */
function picture(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        out.push(`${relative(root, path)}/`);
        walk(path);
      } else out.push(`${relative(root, path)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(root);
  return out;
}

/** The agent's pid, from the place's record. */
function agentPid(repo: string, id: string): number {
  return JSON.parse(readFileSync(join(repo, '.git', 'flume', 'places', `${id}.json`), 'utf8')).stage.agent.pid;
}

/** The supervisor's pid, from its lock in the state folder, once one holds it. */
function supervisorPid(state: string): number | undefined {
  try {
    return Number(readFileSync(join(state, 'watch.lock'), 'utf8').split(' ')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/** What a Claude Code session hands the programs it starts (test/../facts/claude-code.md), with values of this test's own. */
const CALLER_SESSION = {
  CLAUDECODE: '1',
  CLAUDE_CODE_CHILD_SESSION: '1',
  CLAUDE_CODE_ENTRYPOINT: 'cli',
  CLAUDE_CODE_SESSION_ID: '11111111-2222-3333-4444-555555555555',
  CLAUDE_PID: '4242',
  CLAUDE_CODE_MESSAGING_SOCKET: '/tmp/caller-inbox.sock',
  CLAUDE_CODE_MESSAGING_TOKEN: 'caller-inbox-token',
  CLAUDE_CODE_CHILD_NOTES_DIR: '/tmp/caller-notes',
  CLAUDE_CODE_SESSION_ATTENDED: '1',
  CLAUDE_CODE_EXECPATH: '/opt/claude',
  CLAUDE_CODE_SSE_PORT: '41000',
  AI_AGENT: 'claude-code',
};

describe.skipIf(!hasTmux)('a caller\'s environment', () => {
  it('from a git hook of another repository: the place is made in the repository named, the other is untouched, the agent gets none of git\'s local variables nor the caller\'s session', async () => {
    const r: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 30_000 }] }] });
    cleanups.push(() => r.cleanup());
    await r.flume(['status', '--repo', r.repo]); // trust made, config probed: nothing of it is left for the hook's launch to do first
    const o = makeRepo({ trusted: false });
    const out = tempDir('flume-hook-');
    cleanups.push(() => remove(o), () => remove(out));
    // A hook of O that launches in R, as a user's hook or another checkout's script would.
    writeFileSync(
      join(o, '.git', 'hooks', 'post-commit'),
      `#!/bin/sh\nenv > '${out}/hook-env'\nexec '${process.execPath}' '${FLUME_BIN}' launch --repo '${r.repo}' --kind fix --name hook --brief 'From a hook.' --no-watch > '${out}/launch.out' 2>&1\n`,
    );
    chmodSync(join(o, '.git', 'hooks', 'post-commit'), 0o755);
    const before = picture(o);
    const callerKept = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    // `git --git-dir --work-tree` hands the hook GIT_DIR and GIT_WORK_TREE naming O; the rest as a caller may set them.
    const env = { ...r.env, ...CALLER_SESSION, ...callerKept, GIT_INDEX_FILE: join(o, '.git', 'index'), GIT_OBJECT_DIRECTORY: join(o, '.git', 'objects'), GIT_COMMON_DIR: join(o, '.git') };
    execFileSync('git', ['--git-dir', join(o, '.git'), '--work-tree', o, 'hook', 'run', 'post-commit'], { cwd: o, env, stdio: 'pipe' });
    const hookEnv = readFileSync(join(out, 'hook-env'), 'utf8');
    expect(hookEnv).toMatch(new RegExp(`^GIT_DIR=${join(o, '.git')}$`, 'm'));
    expect(hookEnv).toMatch(/^GIT_WORK_TREE=/m);
    const printed = readFileSync(join(out, 'launch.out'), 'utf8');
    expect(printed).toContain('prompt: taken');

    expect(picture(o)).toEqual(before);
    expect(existsSync(join(o, 'places'))).toBe(false);
    const place = await r.place('fix/hook');
    expect(place.path.startsWith(r.repo)).toBe(true);
    expect(git(r.repo, 'worktree', 'list', '--porcelain')).toContain(place.path);
    expect(git(r.repo, 'branch', '--list', 'fix/hook')).toContain('fix/hook');

    const environ = environOf(agentPid(r.repo, 'fix--hook'));
    const carried = [...GIT_LOCAL_VARIABLES, ...Object.keys(CALLER_SESSION)].filter((name) => name in environ);
    expect(carried).toEqual([]);
    // Nor flume's tmux server, whose global environment a window opened in it later (after an attach) inherits.
    const socket = join(r.state, 'tmux', 'flume.sock');
    const server = environOf(Number(execFileSync('tmux', ['-S', socket, 'display-message', '-p', '#{pid}'], { encoding: 'utf8' }).trim()));
    expect(Object.keys(CALLER_SESSION).filter((name) => name in server)).toEqual([]);
    const global = execFileSync('tmux', ['-S', socket, 'show-environment', '-g'], { encoding: 'utf8' });
    expect(Object.keys(CALLER_SESSION).filter((name) => new RegExp(`^${name}=`, 'm').test(global))).toEqual([]);
    expect(environ).toMatchObject({ ...callerKept, CLAUDE_CONFIG_DIR: r.configDir });
  });

  it('with FLUME_HOST naming another host: `--host local launch` is supervised by a `flume watch` here, and neither it nor the agent gets FLUME_HOST', async () => {
    const r: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 30_000 }] }] });
    cleanups.push(() => r.cleanup());
    await r.flume(['status', '--repo', r.repo]);
    // A host named `far` that cannot be reached: ssh to a closed port on this machine is refused at once.
    writeFileSync(join(r.state, 'hosts.json'), JSON.stringify({ hosts: [{ name: 'far', target: 'ssh://127.0.0.1:9', flume: 'flume' }] }));
    r.env.FLUME_HOST = 'far';
    const launched = await r.flume(['--host', 'local', 'launch', '--kind', 'fix', '--name', 'here', '--brief', 'Work here.'], { process: true });
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(launched.stdout).toContain('prompt: taken');
    const pid = await waitFor(() => {
      const holder = supervisorPid(r.state);
      return holder && existsSync(`/proc/${holder}`) ? holder : undefined;
    }, 'a supervisor on this host');
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1)).toEqual([FLUME_BIN, 'watch']);
    expect(environOf(pid)).not.toHaveProperty('FLUME_HOST');
    expect(environOf(pid).FLUME_STATE_DIR).toBe(r.state);
    expect(environOf(agentPid(r.repo, 'fix--here'))).not.toHaveProperty('FLUME_HOST');
  });

  it('from a pre-receive hook of another repository: the launch works and the push is taken; the agent gets no quarantine', async () => {
    const r: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'Working.' }, { sleepMs: 30_000 }] }] });
    cleanups.push(() => r.cleanup());
    await r.flume(['status', '--repo', r.repo]);
    const bare = tempDir('flume-bare-');
    const out = tempDir('flume-hook-');
    const o = makeRepo({ trusted: false });
    cleanups.push(() => remove(bare), () => remove(out), () => remove(o));
    git(bare, 'init', '-q', '--bare');
    writeFileSync(
      join(bare, 'hooks', 'pre-receive'),
      `#!/bin/sh\nenv > '${out}/hook-env'\nexec '${process.execPath}' '${FLUME_BIN}' launch --repo '${r.repo}' --kind fix --name pushed --brief 'From a push.' --no-watch > '${out}/launch.out' 2>&1\n`,
    );
    chmodSync(join(bare, 'hooks', 'pre-receive'), 0o755);
    const pushed = spawnSync('git', ['push', bare, 'HEAD:refs/heads/main'], { cwd: o, env: r.env, encoding: 'utf8' });
    const printed = readFileSync(join(out, 'launch.out'), 'utf8');
    expect(readFileSync(join(out, 'hook-env'), 'utf8')).toMatch(/^GIT_QUARANTINE_PATH=/m);
    expect(pushed.status, pushed.stderr + printed).toBe(0);
    expect(printed).toContain('prompt: taken');
    expect(git(bare, 'rev-parse', 'refs/heads/main').trim()).toBe(git(o, 'rev-parse', 'HEAD').trim());
    expect(git(r.repo, 'branch', '--list', 'fix/pushed')).toContain('fix/pushed');
    expect(environOf(agentPid(r.repo, 'fix--pushed'))).not.toHaveProperty('GIT_QUARANTINE_PATH');
  });

  it("passes the caller's identity and discovery limit to the agent, not a hook's quarantine, namespace, dates or Claude Code session's project and env file", async () => {
    // The agent, in a folder deep in its place, finds the place's repository and commits there.
    const work = 'mkdir -p deep/er && cd deep/er && git rev-parse --show-toplevel > ../../toplevel.txt && git commit -q --allow-empty -m agent';
    const r: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ run: ['sh', '-c', work] }, { say: 'Done.' }, { sleepMs: 30_000 }] }] }, {});
    cleanups.push(() => r.cleanup());
    const places = join(r.repo, 'places');
    mkdirSync(places, { recursive: true });
    const passed = {
      GIT_AUTHOR_NAME: 'Caller Author',
      GIT_AUTHOR_EMAIL: 'author@caller.invalid',
      GIT_COMMITTER_NAME: 'Caller Committer',
      GIT_COMMITTER_EMAIL: 'committer@caller.invalid',
      // As low as a user could set it and still work in the repository: at it, and at its places.
      GIT_CEILING_DIRECTORIES: [dirname(r.repo), r.repo, places].join(':'),
    };
    const dropped = {
      GIT_QUARANTINE_PATH: join(r.repo, '.git', 'objects', 'tmp_objdir-incoming-caller'),
      GIT_NAMESPACE: 'caller',
      GIT_AUTHOR_DATE: '@1000000000 +0000',
      GIT_COMMITTER_DATE: '@1000000000 +0000',
      CLAUDE_PROJECT_DIR: '/caller/project',
      CLAUDE_ENV_FILE: '/caller/session-env/sessionstart-hook-0.sh',
    };
    Object.assign(r.env, passed, dropped);
    const launched = await r.flume(['launch', '--kind', 'fix', '--name', 'names', '--brief', 'Commit.', '--no-watch']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    const place = join(places, 'fix--names');
    await waitFor(() => existsSync(join(place, 'toplevel.txt')) && git(place, 'log', '-1', '--format=%s').trim() === 'agent', 'the agent\'s commit');
    const environ = environOf(agentPid(r.repo, 'fix--names'));
    expect(Object.keys(dropped).filter((name) => name in environ)).toEqual([]);
    expect(environ).toMatchObject(passed);
    expect(readFileSync(join(place, 'toplevel.txt'), 'utf8').trim()).toBe(realpathSync(place));
    const [author, committer, authored, committed] = git(place, 'log', '-1', '--format=%an <%ae>%n%cn <%ce>%n%at%n%ct').trim().split('\n');
    expect([author, committer]).toEqual(['Caller Author <author@caller.invalid>', 'Caller Committer <committer@caller.invalid>']);
    expect(Number(authored)).toBeGreaterThan(1_000_000_000);
    expect(Number(committed)).toBeGreaterThan(1_000_000_000);
  });

  for (const [label, locale] of [
    ['LANG=C', { LANG: 'C' }],
    ['LANG=POSIX', { LANG: 'POSIX' }],
    ['no locale at all', {}],
  ] as const) {
    it(`with ${label}: launch, tell and status read the agent as in a UTF-8 locale`, async () => {
      const r: AgentRepo = agentRepo({ onPrompt: [{ actions: [{ say: 'First.' }] }, { actions: [{ say: 'Second.' }] }] });
      cleanups.push(() => r.cleanup());
      // env -i as cron or a plain `ssh host flume …` gives it: PATH, HOME and the test's own settings, no LANG or LC_*.
      for (const name of Object.keys(r.env)) if (name === 'LANG' || name === 'LANGUAGE' || name.startsWith('LC_')) delete r.env[name];
      Object.assign(r.env, locale);
      const launched = await r.flume(['launch', '--kind', 'fix', '--name', 'locale', '--brief', 'Say first.', '--no-watch']);
      expect(launched.code, launched.stdout + launched.stderr).toBe(0);
      expect(launched.stdout).toContain('prompt: taken');
      const place = await r.place('fix/locale');
      expect(place.stage.delivery).toBe('taken');
      expect(environOf(agentPid(r.repo, 'fix--locale')).LC_CTYPE).toBe('C.UTF-8');
      await waitFor(async () => (await r.place('fix/locale')).stage.agent.state === 'idle', 'the agent to end its first turn');
      const told = await r.flume(['tell', 'fix/locale', 'Say second.']);
      expect(told.code, told.stdout + told.stderr).toBe(0);
      const status = await r.flume(['status', 'fix/locale', '--repo', r.repo]);
      expect(status.code).toBe(0);
      expect(status.stdout).not.toMatch(/never-started|exited/);
    });
  }
});
