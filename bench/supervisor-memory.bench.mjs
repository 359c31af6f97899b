// The supervisor's memory over a long run: MEM_LAUNCHES fix launches (default 150), MEM_AT_ONCE
// places at a time (default 4: a worker launches, waits until its place is landed and tidied, then
// launches the next), with the scripted fake Claude Code (test/helpers/fake-claude): the code stage
// commits a file named after the branch, the submission stage merges the branch into main, so every
// place lands and the supervisor tidies it. The host's supervisor (`flume watch`, its pid the first
// field of <state>/watch.lock) is sampled every MEM_SAMPLE_MS (default 2000): resident memory (VmRSS)
// and open files (/proc/<pid>/fd). Each operator's `flume status --json` every MEM_STATUS_MS (default
// 10000; 0: none) is answered by the supervisor itself (core/cli/warm.ts), as it is on a host.
//
// Side by side: MEM_BUILDS names flume builds (comma-separated paths to dist/bin/flume.js; default
// this project's); each runs AT THE SAME TIME with a state folder, repository and fake config of its
// own, their launches interleaved, so they share the machine's load alike. For each it reports the
// median RSS and open files in each quarter of its run (by time, from its first launch until its last
// place was tidied), the max, how many places landed and were tidied, and the wall time.
//
// The supervisor is started by the bench (`node [WATCH_NODE_ARGS] <build> watch`, the defaults a
// launch's own start uses: 30 s poll, 10 min linger; its output in <state>/watch.log), so node flags
// reach it; each launch then finds it running, as an operator's launch finds the host's supervisor.
// MEM_WATCH=launch leaves its start to the first launch instead (no node flags then).
//
// MEM_SNAPSHOTS=25,100,end writes a heap snapshot of each supervisor (node's
// --heapsnapshot-signal=SIGUSR2, into MEM_SNAPSHOT_DIR, default a temp folder it names) once that many
// of its launches have returned ("end": once all are tidied); the snapshots themselves move RSS, so a
// run with them is for finding what grows, not for the figures. bench/heap-count.mjs compares two.
//
// MEM_PROBE=1 loads bench/mem-probe.mjs into each supervisor (`--import`) and reports what it saw
// inside: V8's heap used and committed, external memory, the rest of RSS, and flume's kept caches.
// A MEM_BUILDS entry may carry node flags for its supervisor after a `|`:
// MEM_BUILDS='dist/bin/flume.js,dist/bin/flume.js|--max-semi-space-size=1' runs one build both ways.
//
//   npm run build && node bench/supervisor-memory.bench.mjs
//   MEM_BUILDS=/work/old/dist/bin/flume.js,dist/bin/flume.js MEM_LAUNCHES=150 MEM_AT_ONCE=4 node bench/supervisor-memory.bench.mjs
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FLUME, GIT_ENV, PROJECT, alive, flumeAsync, git, makeRepo, median, supervisorPid, temp } from './lib.mjs';

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const LAUNCHES = Number(process.env.MEM_LAUNCHES ?? 150);
const AT_ONCE = Number(process.env.MEM_AT_ONCE ?? 4);
const SAMPLE_MS = Number(process.env.MEM_SAMPLE_MS ?? 2000);
const STATUS_MS = Number(process.env.MEM_STATUS_MS ?? 10_000);
const PLACE_TIMEOUT_MS = Number(process.env.MEM_PLACE_TIMEOUT_S ?? 300) * 1000;
// An entry may add node flags of its own for its supervisor after a `|` (the same build with and without a flag).
const BUILDS = (process.env.MEM_BUILDS ?? FLUME).split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
  const [path, flags = ''] = entry.split('|');
  return { path: resolve(path.trim()), flags: flags.split(' ').filter(Boolean) };
});
const WATCH_BY_LAUNCH = process.env.MEM_WATCH === 'launch';
const SNAPSHOTS = (process.env.MEM_SNAPSHOTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const SNAPSHOT_DIR = SNAPSHOTS.length ? (process.env.MEM_SNAPSHOT_DIR ?? temp('flume-bench-heap-')) : undefined;
const PROBE_DIR = process.env.MEM_PROBE === '1' ? temp('flume-bench-probe-') : undefined;
const NODE_ARGS = [...(process.env.WATCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(SNAPSHOTS.length ? ['--heapsnapshot-signal=SIGUSR2'] : []), ...(PROBE_DIR ? ['--import', join(PROJECT, 'bench', 'mem-probe.mjs')] : [])];
const FAKE = join(PROJECT, 'test/helpers/fake-claude/fake-claude.mjs');

for (const { path: build } of BUILDS) if (!existsSync(build)) throw new Error(`no flume build at ${build} (npm run build there first)`);

/** One build's own world: its repository, state folder, fake agent's config and scripts. */
function world({ path: build, flags }, index) {
  const state = temp('flume-bench-state-');
  const configDir = temp('flume-bench-claude-');
  const bin = join(configDir, 'bin');
  mkdirSync(bin);
  const script = (name, body) => {
    const path = join(bin, name);
    writeFileSync(path, `#!/bin/sh\nset -e\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  // As test/integration/stages/soak.test.ts: a commit of a file named after the branch; a merge into
  // main's checkout that tries again while another landing holds its index.
  const commit = script('commit-own.sh', 'cd "$(git rev-parse --show-toplevel)"; f="$(git branch --show-current | tr / -).txt"; echo "work $(date +%s%N)" >> "$f"; git add -- "$f"; git commit -qm "Work on $f"');
  // Landings take turns (flock): two merges into one checkout at once can leave it mid-merge
  // ("All conflicts fixed but you are still merging"), and every later landing of that build fails.
  const land = script('land-retry.sh', `for i in $(seq 600); do flock '${join(configDir, 'land.lock')}' git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." merge -q --no-edit "$(git branch --show-current)" && exit 0; sleep 0.2; done; exit 1`);
  const scriptPath = join(configDir, 'script.json');
  writeFileSync(scriptPath, JSON.stringify({
    onPrompt: [
      { match: 'Make the change the brief asks for', actions: [{ sleepMs: 1000 }, { run: [commit] }, { say: 'Committed.' }] },
      { match: 'Submit the branch for landing', actions: [{ run: [land] }, { say: 'Merged into main.' }] },
    ],
  }));
  const repo = makeRepo();
  writeFileSync(join(repo, 'flume.config.ts'), `export default ${JSON.stringify({ agent: { host: 'tmux' }, agents: { 'claude-code': { binary: FAKE, configDir, env: { FAKE_CLAUDE_SCRIPT: scriptPath } } }, limits: { promptTimeout: '5s' } })};\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'config');
  const env = { ...process.env, ...GIT_ENV, FLUME_STATE_DIR: state, ...(PROBE_DIR ? { MEM_PROBE_DIR: PROBE_DIR } : {}) };
  const trusted = spawnSync(process.execPath, [build, 'trust', '--repo', repo], { env, cwd: repo, encoding: 'utf8' });
  if (trusted.status !== 0) throw new Error(`${build} trust: ${trusted.stdout}${trusted.stderr}`);
  return {
    index,
    build,
    label: `#${index + 1} ${build}${flags.length ? ` (node ${flags.join(' ')})` : ''}`,
    flags,
    state,
    repo,
    configDir,
    env,
    places: join(repo, '.git', 'flume', 'places'),
    samples: [],
    launched: 0,
    returned: 0,
    codes: {},
    stuck: [],
    began: 0,
    ended: 0,
    pids: new Set(),
    snapshots: [...SNAPSHOTS],
  };
}

function startWatch(w) {
  const log = openSync(join(w.state, 'watch.log'), 'a');
  const args = [...NODE_ARGS, ...w.flags, ...(SNAPSHOT_DIR ? [`--diagnostic-dir=${join(SNAPSHOT_DIR, `build${w.index + 1}`)}`] : []), w.build, 'watch'];
  if (SNAPSHOT_DIR) mkdirSync(join(SNAPSHOT_DIR, `build${w.index + 1}`), { recursive: true });
  w.watcher = spawn(process.execPath, args, { env: w.env, cwd: w.repo, stdio: ['ignore', log, log] });
  closeSync(log);
}

async function waitForSupervisor(w) {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
    const pid = supervisorPid(w.state);
    if (pid && alive(pid)) return pid;
  }
  throw new Error(`${w.label}: no supervisor took ${join(w.state, 'watch.lock')}`);
}

function sample(w) {
  const pid = supervisorPid(w.state);
  if (!pid || !alive(pid)) return;
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    w.pids.add(pid);
    w.samples.push({ at: Date.now(), pid, rss, fds, launched: w.returned });
  } catch {
    // gone since
  }
}

/** Signals the supervisor to write a heap snapshot; waits a moment for it to be written. */
async function snapshot(w, tag) {
  const pid = supervisorPid(w.state);
  if (!SNAPSHOT_DIR || !pid || !alive(pid)) return;
  const dir = join(SNAPSHOT_DIR, `build${w.index + 1}`);
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (const end = Date.now() + 120_000; Date.now() < end; await sleep(500)) {
    const made = readdirSync(dir).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    // Written once its size stops moving.
    if (made.length) {
      const size = () => readFileSync(join(dir, made[0])).length;
      let last = -1;
      while (size() !== last) {
        last = size();
        await sleep(1000);
      }
      const named = `${String(w.snapshotCount = (w.snapshotCount ?? 0) + 1).padStart(2, '0')}-${tag}.heapsnapshot`;
      spawnSync('mv', [join(dir, made[0]), join(dir, named)]);
      console.log(`  ${w.label}: heap snapshot at ${tag}: ${join(dir, named)}`);
      return;
    }
  }
}

const recordOf = (w, name) => join(w.places, `fix--${name}.json`);

/** One worker of a build: launches the next name, waits until its place is tidied (its record gone), again. */
async function worker(w, queue) {
  for (let name = queue.shift(); name; name = queue.shift()) {
    w.launched++;
    const result = await flumeAsync(w.build, w.env, w.repo, 'launch', '--kind', 'fix', '--name', name, '--brief', `Add ${name}.`, '--json');
    w.returned++;
    w.codes[result.code] = (w.codes[result.code] ?? 0) + 1;
    if (result.code !== 0 && process.env.VERBOSE) console.log(`  ${w.label} ${name}: launch exited ${result.code}: ${(result.stdout + result.stderr).slice(0, 300)}`);
    const due = w.snapshots.find((at) => at !== 'end' && Number(at) <= w.returned);
    if (due) {
      w.snapshots = w.snapshots.filter((at) => at !== due);
      await snapshot(w, `launch${due}`);
    }
    const deadline = Date.now() + PLACE_TIMEOUT_MS;
    while (existsSync(recordOf(w, name))) {
      if (Date.now() > deadline) {
        w.stuck.push(name);
        break;
      }
      await sleep(250);
    }
  }
}

/** An operator's status, every STATUS_MS, while the build's run lasts. */
async function operator(w, done) {
  while (!done.value && STATUS_MS > 0) {
    await flumeAsync(w.build, w.env, w.repo, 'status', '--json');
    await sleep(STATUS_MS);
  }
}

async function runBuild(w) {
  const names = Array.from({ length: LAUNCHES }, (_, i) => `s${i + 1}`);
  const queue = [...names];
  const done = { value: false };
  w.began = Date.now();
  const watching = operator(w, done);
  // The builds' workers start a moment apart, so their launches interleave from the first.
  await Promise.all(Array.from({ length: AT_ONCE }, async (_, i) => {
    await sleep(i * 700);
    await worker(w, queue);
  }));
  // Every place gone from status (landed and tidied), or the time is up.
  let places = [];
  for (const end = Date.now() + PLACE_TIMEOUT_MS; ; await sleep(2000)) {
    const status = await flumeAsync(w.build, w.env, w.repo, 'status', '--json');
    if (status.code === 0) places = JSON.parse(status.stdout).places;
    if ((status.code === 0 && places.length === 0) || Date.now() > end) break;
  }
  w.ended = Date.now();
  done.value = true;
  await watching;
  if (w.snapshots.includes('end')) await snapshot(w, 'end');
  const onMain = git(w.repo, 'log', '--format=%s', 'main').split('\n');
  const branches = git(w.repo, 'branch', '--list', 'fix/*').split('\n').filter(Boolean).length;
  w.landed = names.filter((name) => onMain.includes(`Work on fix-${name}.txt`)).length;
  w.left = places;
  w.tidied = names.filter((name) => !places.some((p) => p.name === name) && !existsSync(recordOf(w, name))).length;
  w.branchesLeft = branches;
}

function report(w) {
  const taken = w.samples.filter((s) => s.at >= w.began && s.at <= w.ended);
  const mb = (v) => `${v.toFixed(1)}`;
  const span = w.ended - w.began;
  const quarters = [0, 1, 2, 3].map((q) => taken.filter((s) => s.at - w.began >= (q * span) / 4 && s.at - w.began < ((q + 1) * span) / 4 + (q === 3 ? 1 : 0)));
  const med = (rows, key) => (rows.length ? median(rows.map((r) => r[key])) : NaN);
  return {
    build: w.label,
    samples: taken.length,
    supervisors: [...w.pids].join(' '),
    rss: quarters.map((q) => mb(med(q, 'rss'))),
    rssMax: mb(Math.max(...taken.map((s) => s.rss))),
    fds: quarters.map((q) => `${med(q, 'fds')}`),
    fdsMax: Math.max(...taken.map((s) => s.fds)),
    launches: `${w.returned} (exit codes ${JSON.stringify(w.codes)})`,
    landed: w.landed,
    tidied: w.tidied,
    left: `${w.left.length} listed, ${w.branchesLeft} fix/ branches, ${w.stuck.length} past ${PLACE_TIMEOUT_MS / 1000} s${w.stuck.length ? ` (${w.stuck.join(' ')})` : ''}`,
    wall: `${(span / 1000).toFixed(0)} s`,
  };
}

/** What the probe (bench/mem-probe.mjs) saw inside the build's supervisor, by quarter of its run. */
function probeReport(w) {
  const lines = [];
  for (const pid of w.pids) {
    const file = join(PROBE_DIR, `${pid}.jsonl`);
    if (!existsSync(file)) continue;
    const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.at >= w.began && r.at <= w.ended);
    if (!rows.length) continue;
    const span = w.ended - w.began;
    const quarters = [0, 1, 2, 3].map((q) => rows.filter((r) => r.at - w.began >= (q * span) / 4 && r.at - w.began < ((q + 1) * span) / 4 + (q === 3 ? 1 : 0)));
    const mb = (pick) => quarters.map((q) => (q.length ? (median(q.map(pick)) / 1048576).toFixed(1) : '-')).join(' → ');
    lines.push(`inside supervisor ${pid} (MB, median by quarter): V8 heap used ${mb((r) => r.heapUsed)}; V8 heap committed ${mb((r) => r.heapTotal)}; external ${mb((r) => r.external)} (array buffers ${mb((r) => r.arrayBuffers)}); RSS less V8 heap ${mb((r) => r.rss - r.heapTotal)}; code space ${mb((r) => (r.spaces?.code_space ?? 0) * 1024)}`);
    const last = rows.at(-1);
    if (last.caches) lines.push(`kept caches at the end (entries): ${Object.entries(last.caches).map(([name, size]) => `${name} ${size}`).join(', ')}; active handles ${last.handles}`);
  }
  return lines;
}

const worlds = BUILDS.map((build, i) => world(build, i));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loads = [load()];
let sampler;
let failed = false;
let cleaned = false;
// Interrupted (Ctrl-C, a kill), it still stops what it started and removes its folders.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
try {
  if (!WATCH_BY_LAUNCH) {
    for (const w of worlds) startWatch(w);
    for (const w of worlds) await waitForSupervisor(w);
  }
  sampler = setInterval(() => worlds.forEach(sample), SAMPLE_MS);
  worlds.forEach(sample);
  await Promise.all(worlds.map(async (w, i) => {
    await sleep(i * 350);
    await runBuild(w);
  }));
  loads.push(load());
  clearInterval(sampler);
  console.log(`supervisor memory: ${LAUNCHES} fix launches per build, ${AT_ONCE} places at a time, the fake Claude Code; ${worlds.length} build(s) side by side; status --json every ${STATUS_MS / 1000 || '-'} s; samples every ${SAMPLE_MS / 1000} s (load average ${loads.join(' → ')})${NODE_ARGS.length ? `; supervisor node flags: ${NODE_ARGS.join(' ')}` : ''}`);
  for (const w of worlds) {
    const r = report(w);
    console.log(`  ${r.build} (supervisor ${r.supervisors}; ${r.samples} samples):`);
    console.log(`    RSS MB, median by quarter: ${r.rss.join(' → ')}; max ${r.rssMax}`);
    console.log(`    open fds, median by quarter: ${r.fds.join(' → ')}; max ${r.fdsMax}`);
    console.log(`    launches ${r.launches}; landed ${r.landed}; tidied ${r.tidied}; left: ${r.left}; wall ${r.wall}`);
    // What each place left says of itself, so a place that never ended shows why.
    for (const place of w.left) console.log(`      ${place.id}: ${place.stage?.name ?? '-'} ${place.stage?.delivery ?? ''} ${place.stage?.agent?.state ?? ''} ${place.stage?.needs ?? place.stage?.waiting?.needs ?? ''}`.trimEnd());
    if (PROBE_DIR) for (const line of probeReport(w)) console.log(`    ${line}`);
    if (w.pids.size > 1) console.log('    NOTE: more than one supervisor pid was sampled (one exited and another took the lock)');
    if (r.landed !== LAUNCHES || r.tidied !== LAUNCHES) failed = true;
    if (process.env.MEM_SAMPLES_OUT) writeFileSync(`${process.env.MEM_SAMPLES_OUT}.build${w.index + 1}.json`, JSON.stringify({ build: w.build, began: w.began, ended: w.ended, samples: w.samples }));
  }
} finally {
  await cleanup();
}

/** Stops each build's supervisor, then its tmux server (a step the supervisor ends may open a pane), then removes the folders. */
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  clearInterval(sampler);
  for (const w of worlds) {
    const pid = supervisorPid(w.state);
    if (pid && alive(pid)) {
      process.kill(pid, 'SIGTERM');
      for (const end = Date.now() + 90_000; alive(pid) && Date.now() < end; ) await sleep(200);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    spawnSync('tmux', ['-S', join(w.state, 'tmux', 'flume.sock'), 'kill-server']);
  }
  await sleep(500);
  if (!process.env.MEM_KEEP) {
    for (const w of worlds) for (const dir of [w.repo, w.state, w.configDir]) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    if (PROBE_DIR) rmSync(PROBE_DIR, { recursive: true, force: true });
  }
  else console.log(`  kept: ${worlds.map((w) => `${w.repo} ${w.state} ${w.configDir}`).join('; ')}`);
}
if (failed) {
  console.log('supervisor-memory: not every launch landed and was tidied');
  process.exitCode = 1;
}
