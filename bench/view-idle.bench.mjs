// The live view's idle cost: `flume status --watch` on a terminal (a tmux pane of the
// bench's own, 80 × 24) with one idle place (its fake agent ended its turn and waits), no supervisor.
// Measured: the view process's CPU ticks from /proc (its own and its waited-for children's: git, tmux)
// over SECONDS (default 30), as a share of one core (limit: under 0.2%); then, in a second pass of the
// same length with counting wrappers first on PATH, how many git and tmux processes it started.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLUME, GIT_ENV, PROJECT, makeRepo, processCounter, temp } from './lib.mjs';

const FAKE = join(PROJECT, 'test/helpers/fake-claude/fake-claude.mjs');
const SECONDS = Number(process.env.SECONDS_IDLE ?? 30);
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

const state = temp('flume-bench-state-');
const configDir = temp('flume-bench-claude-');
const scriptPath = join(configDir, 'script.json');
writeFileSync(scriptPath, JSON.stringify({ onPrompt: [{ actions: [{ say: 'Looked; nothing to do until you say.' }] }] }));
const repo = makeRepo();
writeFileSync(join(repo, 'flume.config.ts'), `export default ${JSON.stringify({ agent: { host: 'tmux' }, agents: { 'claude-code': { binary: FAKE, configDir, env: { FAKE_CLAUDE_SCRIPT: scriptPath } } } })};\n`);
spawnSync('git', ['add', '-A'], { cwd: repo });
spawnSync('git', ['commit', '-qm', 'config'], { cwd: repo, env: { ...process.env, ...GIT_ENV } });
const env = { ...process.env, ...GIT_ENV, FLUME_STATE_DIR: state };
const flume = (...args) => {
  const result = spawnSync(process.execPath, [FLUME, ...args], { env, cwd: repo, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`flume ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
};
flume('trust', '--repo', repo);
flume('launch', '--kind', 'fix', '--name', 'idle', '--brief', 'Look around.', '--no-watch');

const socket = join(temp('flume-bench-view-'), 'sock');
const tmux = (...args) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });

/** Runs the view in a pane for SECONDS once it has settled; answers its CPU share and the pane's pid. */
async function measure(path, settled = () => {}) {
  const vars = Object.entries({ FLUME_STATE_DIR: state, PATH: path, HOME: process.env.HOME, TERM: 'xterm-256color', LANG: 'C.UTF-8' }).map(([k, v]) => `${k}=${v}`);
  tmux('new-session', '-d', '-x', '80', '-y', '24', '-s', 'view', '-c', repo, '--', 'env', '-i', ...vars, process.execPath, ...(process.env.NODE_FLAGS ? process.env.NODE_FLAGS.split(' ') : []), FLUME, 'status', '--watch');
  const pid = Number(tmux('display-message', '-p', '-t', 'view', '#{pane_pid}').trim());
  for (let i = 0; !tmux('capture-pane', '-p', '-t', 'view').includes('1/2 code waiting') && !tmux('capture-pane', '-p', '-t', 'view').includes('idle'); i++) {
    if (i > 300) throw new Error(`the view never showed the place:\n${tmux('capture-pane', '-p', '-t', 'view')}`);
    await sleep(100);
  }
  // The first readings (the detail's first diff and pane look) settle before the clock starts.
  await sleep(3000);
  const ticks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime, stime, cutime, cstime: fields 14–17 of stat, 12–15 after the command's name.
    return fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
  };
  settled();
  const before = ticks();
  const start = Date.now();
  if (process.env.TRACE) {
    // Where the ticks fall, second by second (a wake shows as a step).
    let last = before;
    for (let i = 0; i < SECONDS; i++) {
      await sleep(1000);
      const now = ticks();
      if (now !== last) console.log(`  +${i + 1} s: ${now - last} ticks`);
      last = now;
    }
  } else await sleep(SECONDS * 1000);
  const used = ticks() - before;
  const wall = (Date.now() - start) / 1000;
  tmux('kill-session', '-t', 'view');
  return { share: used / TICKS / wall, ticks: used, wall };
}

try {
  const { share, ticks, wall } = await measure(process.env.PATH);
  console.log(`view idle, one idle place: ${(share * 100).toFixed(3)}% of a core (${ticks} ticks of 1/${TICKS} s in ${wall.toFixed(1)} s) — limit 0.2%: ${share < 0.002 ? 'met' : 'NOT met'}`);
  const counter = processCounter(['git', 'tmux']);
  await measure(counter.path, () => counter.reset());
  const counts = counter.counts();
  console.log(`processes the view started in ${SECONDS} s idle: git ${counts.git}, tmux ${counts.tmux}`);
} finally {
  spawnSync('tmux', ['-S', socket, 'kill-server']);
  spawnSync('tmux', ['-S', join(state, 'tmux', 'flume.sock'), 'kill-server']);
}
