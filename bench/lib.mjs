// Helpers the benchmarks share: temp repos, timing of commands side by side, medians and ratios.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants as fsConstants, mkdtempSync, openSync, realpathSync, writeFileSync, writeSync, chmodSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT = fileURLToPath(new URL('..', import.meta.url));
export const FLUME = join(PROJECT, 'dist', 'bin', 'flume.js');
export const GIT_ENV = { GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'b@example.com' };

export function temp(prefix) {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();
}

export function makeRepo() {
  const root = temp('flume-bench-repo-');
  git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, 'README.md'), '# bench\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  return root;
}

/** Times one run of a command, in ms. */
export function time(file, args, env) {
  const start = process.hrtime.bigint();
  const result = spawnSync(file, args, { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${file} ${args.join(' ')} failed: ${result.stderr}`);
  return ms;
}

/** Runs each named command `rounds` times, interleaved so drift hits them all alike; returns medians. */
export function sideBySide(commands, rounds) {
  const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, [file, args, env]] of Object.entries(commands)) samples[name].push(time(file, args, env));
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Wrappers first on PATH that count each named program's calls (`git`, `tmux`), for a pass of its
 * own: a wrapper is a shell that then runs the program, so nothing is timed while one is on PATH.
 */
export function processCounter(programs) {
  const dir = temp('flume-bench-count-');
  for (const name of programs) {
    const real = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    writeFileSync(join(dir, name), `#!/bin/sh\necho ${name} >> '${join(dir, 'calls.log')}'\nexec '${real}' "$@"\n`);
    chmodSync(join(dir, name), 0o755);
  }
  const log = join(dir, 'calls.log');
  return {
    path: `${dir}:${process.env.PATH}`,
    counts: () => {
      const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
      return Object.fromEntries(programs.map((name) => [name, lines.filter((line) => line === name).length]));
    },
    reset: () => rmSync(log, { force: true }),
  };
}

export function fmt(ms) {
  return `${ms.toFixed(1)} ms`;
}

/**
 * Gates the fake agents wait at without a poll: a FIFO per place, which `read` blocks on until the
 * bench opens it for writing. (A `sleep 0.05` loop in 8 shells would start 160 processes a second on
 * the host, load the bench itself adds to what it measures.)
 */
export function gates() {
  const dir = temp('flume-bench-gates-');
  return {
    dir,
    /** The shell line an agent runs to wait at its place's gate. */
    wait: `f=${dir}/$(basename "$PWD"); [ -p "$f" ] || mkfifo "$f"; read _ < "$f"`,
    /** Opens a place's gate; false while its agent is not yet waiting there. */
    open(key) {
      let fd;
      try {
        fd = openSync(join(dir, key), fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
      } catch {
        return false;
      }
      writeSync(fd, 'go\n');
      closeSync(fd);
      return true;
    },
  };
}

/**
 * Stops a bench's supervisor, then the agents' tmux server. The supervisor ends its steps under way
 * before it exits, and a step may open a pane (starting the server again): the server goes after it.
 */
export async function stopSupervisor({ state }, watcher) {
  if (watcher && watcher.exitCode === null && watcher.signalCode === null) {
    const exited = new Promise((done) => watcher.once('exit', done));
    watcher.kill('SIGTERM');
    await Promise.race([exited, new Promise((done) => setTimeout(done, 90_000))]);
  }
  spawnSync('tmux', ['-S', join(state, 'tmux', 'flume.sock'), 'kill-server']);
}

/** Runs the built flume; throws with its words unless it exits 0; returns its output. */
export function runFlume(env, cwd, ...args) {
  const result = spawnSync(process.execPath, [FLUME, ...args], { env, cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`flume ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * A bench's repository whose agents are the scripted fake in tmux, with a state folder of its own
 * and its config (plus `config`) trusted, as the operator's step would.
 */
export function fakeAgentRepo(script, config = {}) {
  const state = temp('flume-bench-state-');
  const configDir = temp('flume-bench-claude-');
  const scriptPath = join(configDir, 'script.json');
  writeFileSync(scriptPath, JSON.stringify(script));
  const repo = makeRepo();
  const fake = join(PROJECT, 'test/helpers/fake-claude/fake-claude.mjs');
  writeFileSync(join(repo, 'flume.config.ts'), `export default ${JSON.stringify({ agent: { host: 'tmux' }, agents: { 'claude-code': { binary: fake, configDir, env: { FAKE_CLAUDE_SCRIPT: scriptPath } } }, limits: { promptTimeout: '5s' }, ...config })};\n`);
  spawnSync('git', ['add', '-A'], { cwd: repo });
  spawnSync('git', ['commit', '-qm', 'config'], { cwd: repo, env: { ...process.env, ...GIT_ENV } });
  const env = { ...process.env, ...GIT_ENV, FLUME_STATE_DIR: state };
  runFlume(env, repo, 'trust', '--repo', repo);
  return { state, repo, env, configDir };
}

/** Runs a flume build (its dist/bin/flume.js; default this project's) without waiting; resolves with its exit code, output and wall time. */
export function flumeAsync(build, env, cwd, ...args) {
  const start = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [build, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => done({ code: code ?? 128, signal, stdout, stderr, ms: Date.now() - start }));
  });
}

/** The pid in the supervisor's lock of a state folder, or 0 when there is none. */
export function supervisorPid(state) {
  try {
    return Number(readFileSync(join(state, 'watch.lock'), 'utf8').split(' ')[0]) || 0;
  } catch {
    return 0;
  }
}

/** True while the process runs (a zombie does not). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
