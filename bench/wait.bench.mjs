// `flume wait`: (1) from a deliverable's commit to a waiting `flume wait PLACE --for delivered`
// returning, with a real supervisor (`flume watch`) running, over RUNS places (default 12) of each
// of two kinds, interleaved, whose agents commit one at a time: `fix`, which flume moves on (its next
// stage starts as the wait reads), and a kind whose caller starts its stages (`flume stage`; nothing
// starts after the delivery); limit: p90 under 1 s. Each split into the supervisor's part (the commit
// → the `delivered` event in the repository's stream) and the wait's (that event → the wait's exit);
// (2) the idle cost of a `flume wait` on a place whose agent works on and delivers nothing: its CPU
// ticks from /proc/<pid>/stat over IDLE_S (default 60) seconds, side by side in the same minute with
// the supervisor's and an idle live view's (`flume status --watch` in a tmux pane of the bench's own),
// as ratios. LOAD=N runs N busy loops (one per core to keep both cores busy) beside the latency runs,
// from before the first launch to after the last wait, and prints the load average they made.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLUME, GIT_ENV, PROJECT, fmt, gates, makeRepo, median, temp, stopSupervisor as cleanup, fakeAgentRepo, runFlume } from './lib.mjs';

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A kind whose caller starts its one stage. */
const UNIT = { name: 'unit', advance: 'caller', stages: [{ name: 'work', prompt: 'Work on {brief}.', deliverable: 'commit' }] };

const setup = (script) => fakeAgentRepo(script, { kinds: [UNIT] });
const flume = runFlume;

/** The host's supervisor as a user's launch would start it (its default 30 s poll), in the foreground. */
function supervisor(env) {
  return spawn(process.execPath, [FLUME, 'watch', '--linger', '0', '--quiet'], { env, stdio: 'ignore' });
}


/** The repository's public event stream. */
function streamOf(repo) {
  const file = join(repo, '.git', 'flume', 'events.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : [];
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Each place's code-stage agent waits at a gate; for each in turn the bench starts `flume wait`,
 * lets it settle into waiting, opens the gate (the agent writes the time, then commits) and notes
 * when the wait exits.
 */
async function latency() {
  const runs = Number(process.env.RUNS ?? 12);
  const marks = temp('flume-bench-marks-');
  const gate = gates();
  const setupResult = setup({
    onPrompt: [
      { match: 'Submit the branch', actions: [{ say: 'Submitting.' }, { sleepMs: 600_000 }] },
      { actions: [{ say: 'Working.' }, { run: ['sh', '-c', `${gate.wait}; date +%s%3N > ${marks}/$(basename "$PWD") && echo x > x.txt && git add x.txt && git commit -qm work`] }, { sleepMs: 600_000 }] },
    ],
  });
  const { repo, env } = setupResult;
  let watcher;
  const rows = { fix: [], unit: [] };
  // The load the bench makes: busy loops at the same priority as everything else, for the whole run.
  const loops = Array.from({ length: Number(process.env.LOAD ?? 0) }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  const places = [];
  try {
    for (let i = 0; i < runs; i++) {
      for (const kind of ['fix', 'unit']) {
        flume(env, repo, 'launch', '--kind', kind, '--name', `w${i}`, '--brief', 'bench', '--no-watch');
        if (kind === 'unit') flume(env, repo, 'stage', `unit/w${i}`, 'work', '--no-watch');
        places.push({ kind, id: `${kind}/w${i}`, key: `${kind}--w${i}` });
      }
    }
    watcher = supervisor(env);
    await sleep(3000);
    for (const { kind, id, key } of places) {
      const waiter = spawn(process.execPath, [FLUME, 'wait', id, '--for', 'delivered', '--timeout', '2m', '--json'], { env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      waiter.stdout.on('data', (d) => (out += d));
      const exited = new Promise((done) => waiter.once('exit', (code) => done({ code, at: Date.now() })));
      // Its first reading done, it watches the state (an inotify descriptor); the commit comes at a
      // moment within the next second.
      for (const until = Date.now() + 60_000; !watching(waiter.pid); await sleep(20)) {
        if (waiter.exitCode !== null || Date.now() > until) throw new Error(`the wait on ${id} never settled into waiting: ${out}`);
      }
      await sleep(Math.random() * 1000);
      if (waiter.exitCode !== null) throw new Error(`the wait on ${id} returned before the commit: ${out}`);
      const deadline = Date.now() + 60_000;
      while (!gate.open(key)) {
        if (Date.now() > deadline) throw new Error(`${id}'s agent never reached its gate`);
        await sleep(20);
      }
      const { code, at } = await exited;
      if (code !== 0 || JSON.parse(out).reached !== 'delivered') throw new Error(`the wait on ${id} ended ${code}: ${out}`);
      const mark = Number(readFileSync(join(marks, key), 'utf8'));
      // The wait reads a delivery as status shows it, the moment the branch moves: the supervisor's
      // event can come after it (under load, it did), so the stream is read until it holds it.
      let delivered;
      for (const until = Date.now() + 60_000; !(delivered = streamOf(repo).find((e) => e.place === id && e.event === 'delivered')); await sleep(50)) {
        if (Date.now() > until) throw new Error(`${id}: the wait returned, and the stream has no delivery a minute later`);
      }
      rows[kind].push({ returned: at - mark, delivered: Date.parse(delivered.at) - mark, woke: at - Date.parse(delivered.at) });
      // The next run starts once this place is at rest (fix: its next stage's prompt taken; the
      // caller's kind: waiting for its caller), so no run is measured while another's work goes on.
      const rest = kind === 'fix' ? (e) => e.event === 'prompt-taken' && e.stage === 'submission' : (e) => e.event === 'awaits-caller' && e.after === 'work';
      for (const until = Date.now() + 120_000; !streamOf(repo).some((e) => e.place === id && rest(e)); await sleep(200)) {
        if (Date.now() > until) throw new Error(`${id} never came to rest`);
      }
    }
  } finally {
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    for (const loop of loops) loop.kill('SIGKILL');
    if (loops.length) console.log(`${loops.length} busy loops beside the runs; load average at the end: ${load}`);
    await cleanup(setupResult, watcher);
  }
  const line = (kind, name, key) => {
    const values = rows[kind].map((row) => row[key]);
    return `    ${name}: median ${fmt(median(values))}, p90 ${fmt(percentile(values, 90))}, max ${fmt(Math.max(...values))}`;
  };
  console.log(`deliverable's commit → (supervisor running, ${runs} runs of each kind, interleaved, one place at a time):`);
  for (const [kind, words] of [['fix', 'fix (flume starts its next stage)'], ['unit', 'a kind whose caller starts its stages']]) {
    console.log(`  ${words}:`);
    console.log(`${line(kind, '`flume wait --for delivered` returned (its exit)', 'returned')} (limit: p90 1000 ms)`);
    console.log(line(kind, 'of which the supervisor: the commit → `delivered` in the stream', 'delivered'));
    console.log(line(kind, 'and the wait: `delivered` in the stream → its exit', 'woke'));
    if (process.env.VERBOSE) for (const row of rows[kind]) console.log(`      ${JSON.stringify(row)}`);
  }
}

/** True once the process holds an inotify descriptor: `flume wait` watching the repository's state. */
function watching(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** utime, stime, cutime, cstime of a process: its own CPU and its waited-for children's. */
function ticks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0);
}

async function idle() {
  const seconds = Number(process.env.IDLE_S ?? 60);
  const setupResult = setup({ onPrompt: [{ actions: [{ say: 'Working on it.' }, { sleepMs: 600_000 }] }] });
  const { repo, env, state } = setupResult;
  const socket = join(temp('flume-bench-view-'), 'sock');
  const tmux = (...args) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  let watcher;
  let waiter;
  try {
    flume(env, repo, 'launch', '--kind', 'fix', '--name', 'idle', '--brief', 'bench', '--no-watch');
    watcher = supervisor(env);
    waiter = spawn(process.execPath, [FLUME, 'wait', 'fix/idle', '--for', 'delivered', '--json'], { env, cwd: repo, stdio: 'ignore' });
    const vars = Object.entries({ FLUME_STATE_DIR: state, PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', LANG: 'C.UTF-8' }).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-x', '80', '-y', '24', '-s', 'view', '-c', repo, '--', 'env', '-i', ...vars, process.execPath, FLUME, 'status', '--watch');
    const view = Number(tmux('display-message', '-p', '-t', 'view', '#{pane_pid}').trim());
    // Past their first readings (the supervisor's first pass, the view's first look).
    await sleep(Number(process.env.SETTLE_MS ?? 15_000));
    if (waiter.exitCode !== null) throw new Error('the wait ended before the idle minute');
    const pids = { wait: waiter.pid, supervisor: watcher.pid, view };
    const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ticks(pid)]));
    const start = Date.now();
    await sleep(seconds * 1000);
    const elapsed = (Date.now() - start) / 1000;
    const used = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ticks(pid) - before[name]]));
    const share = (name) => `${used[name]} ticks, ${((used[name] / TICKS / elapsed) * 100).toFixed(3)}% of a core`;
    const ratio = (name) => (used[name] === 0 ? 'n/a (0 ticks)' : `${(used.wait / used[name]).toFixed(2)}×`);
    console.log(`idle over ${elapsed.toFixed(0)} s, one place whose agent works on (1 tick = ${1000 / TICKS} ms):`);
    console.log(`  flume wait --for delivered: ${share('wait')}`);
    console.log(`  flume watch (the supervisor): ${share('supervisor')}; wait / supervisor ${ratio('supervisor')}`);
    console.log(`  flume status --watch (a terminal's live view): ${share('view')}; wait / view ${ratio('view')}`);
  } finally {
    waiter?.kill('SIGTERM');
    spawnSync('tmux', ['-S', socket, 'kill-server']);
    await cleanup(setupResult, watcher);
  }
}

if (!process.env.ONLY || process.env.ONLY === 'latency') await latency();
if (!process.env.ONLY || process.env.ONLY === 'idle') await idle();
