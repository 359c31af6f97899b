/**
 * The REAL Claude Code started by flume from a caller's environment that would steer it: a caller
 * that is itself a Claude Code session (its Bash tool, its MCP server) with git's local variables
 * naming another repository, and a caller with no UTF-8 locale (cron, systemd, Docker, `ssh host
 * flume …`). The agent carries none of the caller's session or git variables, the other repository
 * is byte for byte untouched, and launch, tell and status read the agent the same whatever the
 * caller's locale. Then `flume trust --revoke` takes back the folder trust flume gave Claude Code,
 * and the real program's own folder question is back on screen.
 *
 * Run inside a loopback-only network namespace (root): `sh scripts/test.sh test/e2e/caller-environment.test.ts`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startClaudePane, stopClaudePane, type ClaudePane } from '../helpers/claude-pane.js';
import { bash, toolResults } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { environOf } from '../helpers/proc.js';
import { commit, git, makeRepo, remove, write } from '../helpers/repo.js';
import { UTF8_LOCALE } from '../../core/support/environment.js';
import { prompts, realRepo, waitFor, type RealRepo, type RealRepoOptions } from './real-repo.js';

beforeAll(() => assertIsolated());

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A repository whose fix prompt is the brief alone, its API scripted for the launch and one tell. */
async function repo(options: Partial<RealRepoOptions> = {}): Promise<RealRepo> {
  const t = await realRepo({ script: ['On it.', 'Noted.'], config: { prompts: { 'fix.code': '{brief}' } }, ...options });
  cleanups.push(() => t.cleanup());
  return t;
}

/** The caller's environment without any locale: no LANG, LANGUAGE or LC_* at all. */
function withoutLocale(env: Record<string, string>): void {
  for (const name of Object.keys(env)) if (name === 'LANG' || name === 'LANGUAGE' || name.startsWith('LC_')) delete env[name];
}

/** Launches `fix/<name>`, waits for its turn to end, tells it once: what launch, tell and status said. */
async function launchTellStatus(t: RealRepo, name: string) {
  const brief = `Say you are on ${name}.`;
  const place = await t.launch('fix', name, brief);
  await t.until(`fix/${name}`, (p) => p?.stage.agent.state === 'idle', 'the first turn to end');
  const told = await t.flume(['tell', `fix/${name}`, 'Note this too.', '--json']);
  expect(told.code, told.stdout + told.stderr).toBe(0);
  await waitFor(() => prompts(place.stage.agent.transcriptPath).length >= 2, 'the told prompt in the transcript');
  const view = await t.until(`fix/${name}`, (p) => p?.stage.agent.state === 'idle' && p, 'the second turn to end');
  return { place, brief, told: JSON.parse(told.stdout), view };
}

/** A process and every process under it, as the kernel lists their children now. */
function processTree(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${found[i]}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const task of tasks) {
      try {
        found.push(...readFileSync(`/proc/${found[i]}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      } catch {
        // gone meanwhile
      }
    }
  }
  return [...new Set(found)];
}

/** Every file and link under `root` (its .git too) with its content's digest: what "byte for byte" compares. */
function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) out[path] = `-> ${readlinkSync(path)}`;
    else if (entry.isFile()) out[path] = createHash('sha256').update(readFileSync(path)).digest('hex');
    else if (entry.isDirectory()) out[path] = 'dir';
  }
  return out;
}

/** A local socket (a path, or a port on 127.0.0.1) that counts who connects. */
async function listener(at: string | number): Promise<{ server: Server; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((done) => (typeof at === 'string' ? server.listen(at, done) : server.listen(at, '127.0.0.1', done)));
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  return { server, connections: () => count };
}

describe('the real Claude Code launched by a caller that would steer it', () => {
  it("carries none of a calling Claude Code session's variables nor git's naming another repository; with no locale at all it is read as started; revoking trust brings its folder question back", async () => {
    // The first turn runs `env` with the Bash tool (allowed without a dialog): what the agent's tools get.
    const t = await repo({
      script: [bash('env', 'Show the environment'), 'On it.', 'Noted.'],
      settings: { permissions: { defaultMode: 'acceptEdits', allow: ['Bash(env)'] } },
    });
    // Another repository, a commit and a dirty file in it: what a caller inside its hook names.
    const other = makeRepo({ trusted: false });
    cleanups.push(() => remove(other));
    commit(other, 'src/a.txt', 'a\n');
    write(other, 'src/a.txt', 'a, edited\n');
    const otherBefore = contents(other);

    // What a Claude Code session hands the programs it starts, its
    // inbox and its IDE's port real sockets here, so a connection to either would show.
    const inbox = join(t.claude.tmpDir, 'caller-inbox.sock');
    const inboxServer = await listener(inbox);
    const ide = await listener(0);
    const callerSession = {
      CLAUDECODE: '1',
      CLAUDE_CODE_CHILD_SESSION: '1',
      CLAUDE_CODE_ENTRYPOINT: 'cli',
      CLAUDE_CODE_SESSION_ID: `caller-${randomUUID()}`,
      CLAUDE_PID: String(process.pid),
      CLAUDE_CODE_MESSAGING_SOCKET: inbox,
      CLAUDE_CODE_MESSAGING_TOKEN: `caller-token-${randomBytes(16).toString('hex')}`,
      CLAUDE_CODE_SSE_PORT: String((ide.server.address() as { port: number }).port),
      CLAUDE_CODE_CHILD_NOTES_DIR: join(t.claude.tmpDir, 'caller-notes'),
      CLAUDE_CODE_SESSION_ATTENDED: '1',
      CLAUDE_CODE_EXECPATH: '/caller/claude',
      CLAUDE_EFFORT: 'caller-effort',
      AI_AGENT: 'caller-agent',
    };
    const callerGit = { GIT_DIR: join(other, '.git'), GIT_WORK_TREE: other, GIT_INDEX_FILE: join(other, '.git', 'index') };
    withoutLocale(t.env);
    Object.assign(t.env, callerSession, callerGit);

    const { place, brief, told, view } = await launchTellStatus(t, 'steer');
    expect(place.path).toBe(join(t.repo, 'places', 'fix--steer'));
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1, prompt: brief });
    expect(told).toMatchObject({ taken: true, sends: 1 });
    expect(view.stage.delivery).toBe('taken');
    expect(view.stage.agent.state).toBe('idle');
    expect(prompts(place.stage.agent.transcriptPath)).toEqual([brief, 'Note this too.']);

    // The real program, whatever runs under it now, and what its Bash tool ran: no variable of the
    // caller's session or git by name in claude itself, and no value of them anywhere under it
    // (claude gives what it starts session variables of its own; the caller's values must not be there).
    const pid = place.stage.agent.pid as number;
    const claudeEnv = environOf(pid);
    const steering = [...Object.keys(callerSession), ...Object.keys(callerGit)];
    expect(steering.filter((name) => name in claudeEnv)).toEqual([]);
    expect(Object.keys(claudeEnv).filter((name) => /^CLAUDE_CODE_(SESSION|MESSAGING|SSE|CHILD)_/.test(name))).toEqual([]);
    expect(claudeEnv).toMatchObject({ CLAUDE_CONFIG_DIR: t.claude.configDir, LC_CTYPE: UTF8_LOCALE });
    // (Values that are only digits or a word are left out: they could stand in anything by chance.)
    const values = [...Object.values(callerSession).filter((v) => v.length > 12), other];
    const carrying = processTree(pid).flatMap((p) => {
      try {
        return Object.entries(environOf(p)).filter(([, v]) => values.some((value) => v.includes(value))).map(([k, v]) => `${p}: ${k}=${v}`);
      } catch {
        return []; // gone meanwhile
      }
    });
    expect(carrying).toEqual([]);
    const toolEnv = t.api.requests.flatMap((request) => toolResults(request.body)).map((result) => result.text).join('\n');
    expect(toolEnv).toContain(`CLAUDE_CONFIG_DIR=${t.claude.configDir}`);
    expect(toolEnv.split('\n').filter((line) => /^GIT_(DIR|WORK_TREE|INDEX_FILE)=/.test(line) || values.some((value) => line.includes(value)))).toEqual([]);
    expect(inboxServer.connections()).toBe(0);
    expect(ide.connections()).toBe(0);

    // The launch went into this repository, and the other one is as it was, byte for byte.
    expect(git(t.repo, 'worktree', 'list', '--porcelain')).toContain(place.path);
    expect(contents(other)).toEqual(otherBefore);

    // flume wrote Claude Code's folder trust for the trusted repository; revoking takes it back.
    const claudeJson = join(t.claude.configDir, '.claude.json');
    const trustOf = () => {
      const projects = JSON.parse(readFileSync(claudeJson, 'utf8')).projects ?? {};
      return [t.repo, place.path].map((folder) => projects[folder]?.hasTrustDialogAccepted);
    };
    expect(trustOf()).toEqual([true, true]);
    const revoked = await t.flume(['trust', '--revoke', '--repo', t.repo, '--json']);
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ root: t.repo, revoked: true });
    expect(trustOf()).toEqual([undefined, undefined]);

    // The real program started afresh in the place's folder asks its own folder question again.
    const pane: ClaudePane = await startClaudePane(t.claude, place.path);
    cleanups.push(() => stopClaudePane(pane));
    const screen = await pane.tmux.waitForScreen((s) => /Quick safety check/.test(s) && /Yes, I trust this folder/.test(s), 30_000);
    expect(screen).toContain(place.path);
    expect(contents(other)).toEqual(otherBefore);
  }, 240_000);

  it('launched, told and read with LANG=C is taken at the first sending and read as started', async () => {
    const t = await repo();
    withoutLocale(t.env);
    t.env.LANG = 'C';
    const { place, brief, told, view } = await launchTellStatus(t, 'lang-c');
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1, prompt: brief });
    expect(told).toMatchObject({ taken: true, sends: 1 });
    expect(view.stage.delivery).toBe('taken');
    expect(view.stage.agent.state).toBe('idle');
    expect(environOf(place.stage.agent.pid as number)).toMatchObject({ LANG: 'C', LC_CTYPE: UTF8_LOCALE });
  }, 180_000);
});
