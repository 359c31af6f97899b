/**
 * The README tested as written: its set-up commands are read from the README's
 * first `sh` block, and the first (install, build, trust, launch, status) is run in a fresh clone of
 * this repository in a temp folder, with the real Claude Code talking to the scripted Messages API.
 * The place must exist, its prompt be taken (read by flume from the real transcript), and status say
 * what the README says it shows. When the README's commands change, this test runs the new ones.
 *
 * One step is not run as written: `npm ci`. Inside the network namespace no registry is reachable,
 * so the clone is given this checkout's installed `node_modules` (what `npm ci` makes from the same
 * lockfile) and the rest of the line runs as the README gives it. The launch readies its place by
 * this repository's own flume.config.ts (the line trusts it): that tree linked, then a build. The
 * second command, `npm test`, is the command running this test.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION, PINNED_CLAUDE_VERSION, makeClaudeEnv } from '../helpers/claude-env.js';
import { startMessagesApi, text } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { PROJECT, remove } from '../helpers/repo.js';
import { stopSupervisor } from '../helpers/agent-repo.js';
import { killTmuxServer } from '../../agents/panes/tmux.js';

beforeAll(() => assertIsolated());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The README's set-up commands: the non-comment lines of its first `sh` block. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  return block.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runShell(line: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe('the README', () => {
  // The README's launch runs the pinned Claude Code (`npm run flume --` puts it on PATH).
  it.runIf(CLAUDE_VERSION === PINNED_CLAUDE_VERSION)('sets flume up and launches a fix as it says, with the real Claude Code', async () => {
    const commands = readmeCommands();
    expect(commands, 'the README gives two set-up commands: the main job, then the tests').toHaveLength(2);
    expect(commands[1]).toBe('npm test');
    const [install, ...rest] = commands[0].split(' && ');
    expect(install).toBe('npm ci');
    const line = rest.join(' && ');
    // The place the README launches, from its own words.
    const kind = /launch .*--kind (\S+)/.exec(line)?.[1];
    const name = /launch .*--name (\S+)/.exec(line)?.[1];
    expect(kind && name, line).toBeTruthy();
    const id = `${kind}/${name}`;

    const root = realpathSync(mkdtempSync(join(tmpdir(), 'flume-readme-')));
    cleanups.push(() => remove(root));
    const clone = join(root, 'flume');
    execFileSync('git', ['clone', '-q', PROJECT, clone]);
    symlinkSync(join(PROJECT, 'node_modules'), join(clone, 'node_modules'));
    const state = join(root, 'state');
    const api = await startMessagesApi({ script: [text('I will look for a typo in README.md.')] });
    cleanups.push(() => api.close());
    const claude = makeClaudeEnv({ baseUrl: api.url });
    // What the launch started (its agent, the supervisor, with TMPDIR in this folder) may still be
    // writing here a moment after it was told to end: removed once they have let go.
    cleanups.push(async () => {
      for (let i = 0; ; i++) {
        try {
          claude.cleanup();
          return;
        } catch (error) {
          if (i >= 50) throw error;
          await new Promise((done) => setTimeout(done, 200));
        }
      }
    });
    // The agent writes its config folder as it exits: that folder goes once its process is gone.
    let agentPid: number | undefined;
    cleanups.push(async () => {
      for (let i = 0; agentPid && alive(agentPid) && i < 200; i++) await new Promise((done) => setTimeout(done, 50));
    });
    cleanups.push(() => killTmuxServer(join(state, 'tmux', 'flume.sock')));
    cleanups.push(() => stopSupervisor(state));
    const env = { ...claude.env, FLUME_STATE_DIR: state, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

    const result = await runShell(line, clone, env, 180_000);
    const view = JSON.parse(execFileSync(process.execPath, [join(clone, 'dist', 'bin', 'flume.js'), 'status', '--json'], { cwd: clone, env, encoding: 'utf8' }));
    agentPid = view.places[0]?.stage?.agent?.pid;
    expect(result.code, result.out).toBe(0);
    const place = join(clone, 'places', `${kind}--${name}`);
    expect(existsSync(place), result.out).toBe(true);
    expect(result.out).toContain(`made ${id} at ${place} on ${id}`);
    // Readied by flume's own flume.config.ts (trusted by the README's line): the installed tree linked
    // as the place's node_modules (its lockfile matches), then built.
    expect(result.out).toContain('ready: done');
    expect(readlinkSync(join(place, 'node_modules'))).toBe(join('..', '..', 'node_modules'));
    expect(existsSync(join(place, 'dist', 'bin', 'flume.js')), result.out).toBe(true);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: place, encoding: 'utf8' }), 'readying leaves the place clean').toBe('');
    // Taken: flume read the prompt in the transcript the real program wrote.
    expect(result.out).toContain('prompt: taken');
    // The README: "`flume status` shows the place, its stage, the agent's state and its pane".
    const status = result.out.slice(result.out.lastIndexOf('flume.js status'));
    expect(status).toContain(`${id}  active  ${place}`);
    expect(status).toMatch(/stage 1\/\d+ \w+: \w+ \(prompt taken, agent claude-code 2\.1\.332 (idle|working) in tmux %\d+\)/);
    expect(readFileSync(join(PROJECT, 'README.md'), 'utf8')).toContain("`flume status` shows the place, its stage, the agent's state and its pane");
    expect(api.unexpected(), 'what the scripted API saw unscripted').toEqual([]);
  });
});
