// What the test suite's own helpers cost, side by side in one run (the
// suite's wall time): test files run both ways, interleaved, and the machine's busy CPU time
// (every process, from /proc/stat: the suite's children outlive the processes that start them, so a
// parent's own count misses them) and wall time compared by medians.
//
// - poll: `waitFor` waiting as long as a slow probe took against a fixed 50 ms (`FLUME_TEST_POLL=fixed`),
//   over tests that poll `flume status` and tmux.
// - runner: flume run in the test's own process (test/helpers/in-process.ts) against every run a
//   process of its own (`FLUME_TEST_PROCESSES=1`), over test files that run flume often.
//
// Needs the build (`npm run build`) and nothing else running. ROUNDS (default 3), ONLY=poll|runner,
// FILES='a.test.ts b/' to compare over other test files or folders (the flume project: FILES='test/unit test/integration').
// LOAD=1 keeps both cores busy beside the tests with two spinning processes at the lowest priority
// (`nice -n 19`), as the whole suite keeps them busy; their time is left out of the CPU counted.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fmt, median, PROJECT } from './lib.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const LOAD = process.env.LOAD === '1';
const spinners = LOAD ? [0, 1].map(() => spawn('nice', ['-n', '19', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' })) : [];
process.on('exit', () => spinners.forEach((child) => child.kill('SIGKILL')));
const COMPARISONS = {
  poll: { files: ['test/integration/herdr/launch.test.ts', 'test/integration/agents/tell-stop.test.ts'], variable: 'FLUME_TEST_POLL', before: 'fixed' },
  runner: {
    files: ['test/integration/core/trust.test.ts', 'test/integration/core/config.test.ts', 'test/integration/core/version.test.ts', 'test/integration/agents/tell-stop.test.ts'],
    variable: 'FLUME_TEST_PROCESSES',
    before: '1',
  },
};

/** Busy time of every CPU so far, in seconds (user, nice, system, irq, softirq, steal). */
function busySeconds() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user + (LOAD ? 0 : nice) + system + irq + softirq + steal) / 100;
}

function runFiles(files, env) {
  const busy = busySeconds();
  const start = process.hrtime.bigint();
  // `times` after the run: the CPU of every process the suite waited for (its workers and what they
  // ran to its end), which other work on a shared machine does not reach; detached ones are left out.
  const script = 'sh scripts/test.sh "$@"; code=$?; times >&2; exit $code';
  const result = spawnSync('sh', ['-c', script, 'sh', ...files], { cwd: PROJECT, env: { ...process.env, FLUME_SKIP_BUILD: '1', ...env }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`the tests failed (${JSON.stringify(env)}):\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-2000)}`);
  const [user, system] = result.stderr.trim().split('\n').at(-1).split(/\s+/).map((time) => {
    const [, minutes, seconds] = /(\d+)m([\d.]+)s/.exec(time);
    return Number(minutes) * 60 + Number(seconds);
  });
  return { ms, cpu: busySeconds() - busy, own: user + system };
}

for (const [name, { files: fixed, variable, before }] of Object.entries(COMPARISONS)) {
  if (process.env.ONLY && process.env.ONLY !== name) continue;
  const files = process.env.FILES ? process.env.FILES.split(/\s+/).filter(Boolean) : fixed;
  const samples = { now: [], before: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which goes first, so a drift in the machine's speed hits both alike.
    const order = round % 2 === 0 ? ['before', 'now'] : ['now', 'before'];
    for (const way of order) samples[way].push(runFiles(files, way === 'before' ? { [variable]: before } : { [variable]: '' }));
  }
  const m = (way, key) => median(samples[way].map((s) => s[key]));
  console.log(`${name}: ${files.length} files, ${ROUNDS} interleaved rounds, medians${LOAD ? ', both cores kept busy beside them' : ''}`);
  console.log(`  now:    ${fmt(m('now', 'ms'))} wall, ${m('now', 'cpu').toFixed(1)} s CPU, ${m('now', 'own').toFixed(1)} s of the suite's own processes`);
  console.log(`  before: ${fmt(m('before', 'ms'))} wall, ${m('before', 'cpu').toFixed(1)} s CPU, ${m('before', 'own').toFixed(1)} s of the suite's own processes (${variable}=${before})`);
  console.log(`  now / before: CPU ${(m('now', 'cpu') / m('before', 'cpu')).toFixed(2)}, own ${(m('now', 'own') / m('before', 'own')).toFixed(2)}, wall ${(m('now', 'ms') / m('before', 'ms')).toFixed(2)}`);
}
