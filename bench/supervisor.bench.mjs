// The supervisor: (1) from a deliverable's commit to the next stage's prompt taken in its agent's
// transcript, with `flume watch` running (limit: median under 1 s), the commits at random moments;
// (2) its cost with 50 idle places, each with a live (fake) agent waiting on the operator (limits:
// under 1% of a core, under 150 MB); (3) places move independently: 8 places whose stage starts are
// slow while 8 others deliver, from each commit to its delivery's record (limits: median under 1 s,
// p90 under 2 s), optionally side by side with a supervisor whose pass waits for each step
// (bench/watch-awaiting.mjs, how it worked before; AWAITED=0 skips it).
// WATCH_NODE_ARGS passes node flags to the supervisor (e.g. `--cpu-prof --cpu-prof-dir=<dir>`).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLUME, GIT_ENV, PROJECT, fmt, gates, makeRepo, median, temp, stopSupervisor as cleanup, fakeAgentRepo, runFlume } from './lib.mjs';

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

const setup = (script) => fakeAgentRepo(script);
const flume = runFlume;



/** The shell line writing the time (ms) just before the agent's commit to the bench's mark file. */
const markLine = (marks) => `date +%s%3N > ${marks}/$(basename "$PWD")`;

/** Opens each gate at a random moment within `windowMs` (an agent not yet at its gate is waited for). */
async function openAtRandom(gate, keys, windowMs) {
  const order = keys.map((key) => ({ key, at: Math.random() * windowMs })).sort((a, b) => a.at - b.at);
  const opened = Date.now();
  for (const { key, at } of order) {
    await sleep(Math.max(0, opened + at - Date.now()));
    const deadline = Date.now() + 60_000;
    while (!gate.open(key)) {
      if (Date.now() > deadline) throw new Error(`${key}'s agent never reached its gate`);
      await sleep(20);
    }
  }
}

/**
 * A deliverable's commit → the next stage's prompt taken, with `flume watch` running. Each place's
 * code-stage agent waits at a gate the bench opens at a random moment, writes the time, commits; the
 * supervisor marks the stage delivered, stops the agent, starts the submission stage's agent, waits
 * for its input box, types the prompt and finds it in the transcript (`prompt-taken`).
 */
async function latency() {
  const marks = temp('flume-bench-marks-');
  const gate = gates();
  const setupResult = setup({
    onPrompt: [
      { match: 'Submit the branch', actions: [{ say: 'Submitting.' }, { sleepMs: 600_000 }] },
      { actions: [{ say: 'Working.' }, { run: ['sh', '-c', `${gate.wait}; ${markLine(marks)} && echo x > x.txt && git add x.txt && git commit -qm work`] }, { sleepMs: 600_000 }] },
    ],
  });
  const { repo, env } = setupResult;
  const places = Number(process.env.PLACES ?? 8);
  const windowMs = Number(process.env.WINDOW_MS ?? 10_000);
  let watcher;
  const rows = [];
  try {
    // Each launch starts its first stage itself and returns once the prompt is taken.
    for (let i = 0; i < places; i++) flume(env, repo, 'launch', '--kind', 'fix', '--name', `l${i}`, '--brief', 'bench', '--no-watch');
    const nodeArgs = (process.env.WATCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    watcher = spawn(process.execPath, [...nodeArgs, FLUME, 'watch', '--poll', '30s', '--linger', '0', '--quiet'], { env, stdio: 'ignore' });
    await sleep(2000);
    await openAtRandom(gate, [...Array(places).keys()].map((i) => `fix--l${i}`), windowMs);
    const deadline = Date.now() + 120_000;
    for (let i = 0; i < places; i++) {
      for (;;) {
        const events = eventsOf(repo, `fix--l${i}`);
        const started = events.findIndex((e) => e.event === 'stage-started' && e.stage === 'submission');
        const taken = started >= 0 ? events.slice(started).find((e) => e.event === 'prompt-taken') : undefined;
        const mark = join(marks, `fix--l${i}`);
        if (taken && existsSync(mark)) {
          const at = Number(readFileSync(mark, 'utf8'));
          const since = (name) => Date.parse(events.find((e, index) => e.event === name && (name === 'mark-delivered' || index >= started)).at) - at;
          rows.push({ delivered: since('mark-delivered'), started: since('stage-started'), taken: since('prompt-taken') });
          break;
        }
        if (Date.now() > deadline) throw new Error(`place l${i}'s submission prompt was never taken`);
        await sleep(200);
      }
    }
  } finally {
    await cleanup(setupResult, watcher);
  }
  const line = (name, key) => {
    const values = rows.map((row) => row[key]);
    return `  ${name}: median ${fmt(median(values))}, p90 ${fmt(percentile(values, 90))}, max ${fmt(Math.max(...values))}`;
  };
  console.log(`deliverable's commit → (supervisor running, ${places} places, commits at random moments within ${windowMs} ms):`);
  console.log(line('its delivery recorded (mark-delivered)', 'delivered'));
  console.log(line('the next stage started (stage-started, before its agent)', 'started'));
  console.log(`${line('the next stage\'s prompt taken (prompt-taken)', 'taken')} (limit: median 1000 ms)`);
  if (process.env.VERBOSE) for (const row of rows) console.log(`    ${JSON.stringify(row)}`);
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function rssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function idle() {
  const count = Number(process.env.IDLE_PLACES ?? 50);
  const setupResult = setup({ onPrompt: [{ actions: [{ say: 'Which database should I use?' }] }] });
  const { repo, env } = setupResult;
  let watcher;
  try {
    for (let i = 0; i < count; i++) flume(env, repo, 'launch', '--kind', 'fix', '--name', `i${i}`, '--brief', 'bench', '--no-watch');
    watcher = spawn(process.execPath, [FLUME, 'watch', '--linger', '0', '--quiet'], { env, stdio: 'ignore' });
    // Let it take its first passes (it marks every place waiting), then measure it at rest.
    await sleep(Number(process.env.SETTLE_MS ?? 45_000));
    const seconds = Number(process.env.MEASURE_S ?? 120);
    const ticks = cpuTicks(watcher.pid);
    const start = Date.now();
    await sleep(seconds * 1000);
    const used = (cpuTicks(watcher.pid) - ticks) / 100;
    const elapsed = (Date.now() - start) / 1000;
    const status = JSON.parse(flume(env, repo, 'status', '--json'));
    const waiting = status.places.filter((p) => p.stage?.state === 'waiting').length;
    console.log(`supervisor with ${count} idle places (${waiting} waiting on the operator), over ${elapsed.toFixed(0)} s: ${((used / elapsed) * 100).toFixed(2)}% of a core, ${rssMb(watcher.pid).toFixed(0)} MB resident (limits: 1%, 150 MB)`);
  } finally {
    await cleanup(setupResult, watcher);
  }
}

function eventsOf(repo, key) {
  const file = join(repo, '.git', 'flume', 'places', `${key}.events.jsonl`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * One run of the independence scenario: `count` places deliver (a commit, each at a random moment
 * the bench picks) while `count` others' stages start slowly (their agents show the input box only
 * after `slowMs`). Returns, for each delivering place, the ms from the mark written just before its
 * `git commit` to the `mark-delivered` event in its events.jsonl.
 */
async function independentRun(awaitSteps, count, slowMs) {
  const marks = temp('flume-bench-marks-');
  const gate = gates();
  const setupResult = setup({
    onPrompt: [
      { match: 'Make the change', actions: [{ say: 'Working.' }, { run: ['sh', '-c', `${gate.wait}; ${markLine(marks)} && echo x > x.txt && git add x.txt && git commit -qm work`] }, { sleepMs: 600_000 }] },
      { actions: [{ sleepMs: 600_000 }] },
    ],
  });
  const { repo, env, configDir } = setupResult;
  let watcher;
  try {
    for (let i = 0; i < count; i++) flume(env, repo, 'launch', '--kind', 'fix', '--name', `d${i}`, '--brief', 'bench', '--no-watch');
    // Launches cut short once their places were made and readied: the supervisor starts their stages.
    for (let i = 0; i < count; i++) spawnSync(process.execPath, [FLUME, 'launch', '--kind', 'fix', '--name', `s${i}`, '--brief', 'bench', '--no-watch'], { env: { ...env, FLUME_CRASH_AT: 'launch:readied' }, cwd: repo });
    // Agents started from now on (the slow places', and the delivering places' next stage) are slow.
    writeFileSync(join(configDir, 'script.json'), JSON.stringify({ startDelayMs: slowMs, onPrompt: [{ actions: [{ sleepMs: 600_000 }] }] }));
    const nodeArgs = (process.env.WATCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    watcher = spawn(process.execPath, [...nodeArgs, ...(awaitSteps ? [join(PROJECT, 'bench', 'watch-awaiting.mjs')] : [FLUME, 'watch', '--poll', '30s', '--linger', '0', '--quiet'])], { env, stdio: 'ignore' });
    const startDeadline = Date.now() + 60_000;
    while (![...Array(count).keys()].every((i) => eventsOf(repo, `fix--s${i}`).some((e) => e.event === 'stage-started'))) {
      if (Date.now() > startDeadline) throw new Error('the slow places never started');
      await sleep(100);
    }
    // The deliveries come at random moments while the slow starts wait (within their first 60%).
    await openAtRandom(gate, [...Array(count).keys()].map((i) => `fix--d${i}`), slowMs * 0.6);
    const delays = [];
    const deadline = Date.now() + slowMs * 4 + 60_000;
    for (let i = 0; i < count; i++) {
      for (;;) {
        const delivered = eventsOf(repo, `fix--d${i}`).find((e) => e.event === 'mark-delivered');
        const file = join(marks, `fix--d${i}`);
        if (delivered && existsSync(file)) {
          delays.push(Date.parse(delivered.at) - Number(readFileSync(file, 'utf8')));
          if (process.env.VERBOSE) console.log(`  d${i}: mark ${readFileSync(file, 'utf8')} delivered ${Date.parse(delivered.at)} (+${delays[delays.length - 1]} ms)`);
          break;
        }
        if (Date.now() > deadline) throw new Error(`place d${i}'s delivery was never recorded`);
        await sleep(100);
      }
    }
    return delays;
  } finally {
    await cleanup(setupResult, watcher);
  }
}

async function independent() {
  const count = Number(process.env.PLACES ?? 8);
  const slowMs = Number(process.env.SLOW_MS ?? 20_000);
  const runs = Number(process.env.RUNS ?? 2);
  const own = [];
  const awaited = [];
  // Interleaved, so the machine's drift hits both alike.
  for (let r = 0; r < runs; r++) {
    own.push(...(await independentRun(false, count, slowMs)));
    if (process.env.AWAITED !== '0') awaited.push(...(await independentRun(true, count, slowMs)));
  }
  const line = (name, d) => `${name}: median ${fmt(median(d))}, p90 ${fmt(percentile(d, 90))}, max ${fmt(Math.max(...d))} (${d.length} deliveries)`;
  console.log(`commit → its delivery recorded, ${count} places delivering while ${count} start stages slowly (${slowMs} ms to the input box):`);
  console.log(`  ${line('steps on their own', own)} (limits: median 1000 ms, p90 2000 ms)`);
  if (awaited.length === 0) return;
  console.log(`  ${line('pass awaits each step', awaited)}`);
  console.log(`  ratio awaited / own: median ${(median(awaited) / median(own)).toFixed(1)}×, p90 ${(percentile(awaited, 90) / percentile(own, 90)).toFixed(1)}×`);
}

if (!process.env.ONLY || process.env.ONLY === 'independent') await independent();
if (!process.env.ONLY || process.env.ONLY === 'latency') await latency();
if (!process.env.ONLY || process.env.ONLY === 'idle') await idle();
