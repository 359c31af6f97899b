// What the test suite's own helpers cost, side by side in one run (the
// suite's wall time): test files run both ways, interleaved, and the machine's busy CPU time
// (every process, from /proc/stat: the suite's children outlive the processes that start them, so a
// parent's own count misses them) and wall time compared by medians.
//
// - poll: `waitFor` waiting as long as a slow probe took against a fixed 50 ms (`FLUME_TEST_POLL=fixed`),
//   over tests that poll `flume status` and tmux.
// - runner: flume run in the test's own process (test/helpers/in-process.ts) against every run a
//   process of its own (`FLUME_TEST_PROCESSES=1`), over test files that run flume often.
// - herdr: the fake herdr as one long-lived process per test against a node start per herdr call
//   (`FAKE_HERDR_SERVER=0`), over the herdr files.
// - workers: the unit and integration files 2, 3 and 4 at a time (`FLUME_TEST_WORKERS`).
//
// Needs the build (`npm run build`) and nothing else running. ROUNDS (default 3), ONLY=poll|runner,
// FILES='a.test.ts b/' to compare over other test files or folders, ONLY=herdr|workers as well (the flume project: FILES='test/unit test/integration').
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
  // The fake herdr as one process per test (test/helpers/fake-herdr/server.mjs) against a node start per herdr call.
  herdr: { files: ['test/integration/herdr/'], variable: 'FAKE_HERDR_SERVER', before: '0' },
  // How many unit and integration files run at once: each count side by side (FILES to choose them).
  workers: { files: ['test/integration/core/', 'test/integration/agents/'], variable: 'FLUME_TEST_WORKERS', values: ['2', '3', '4'] },
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

for (const [name, { files: fixed, variable, before, values }] of Object.entries(COMPARISONS)) {
  if (process.env.ONLY && process.env.ONLY !== name) continue;
  const files = process.env.FILES ? process.env.FILES.split(/\s+/).filter(Boolean) : fixed;
  // Each way is a value of the variable ('' leaves it unset: the suite's own default).
  const ways = values ?? ['', before];
  const label = (way) => (way === '' ? 'now' : `${variable}=${way}`);
  const samples = Object.fromEntries(ways.map((way) => [way, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Turning which goes first each round, so a drift in the machine's speed hits each alike.
    const order = ways.map((_, i) => ways[(i + round) % ways.length]);
    for (const way of order) samples[way].push(runFiles(files, { [variable]: way }));
  }
  const m = (way, key) => median(samples[way].map((s) => s[key]));
  console.log(`${name}: ${files.length} files, ${ROUNDS} interleaved rounds, medians${LOAD ? ', both cores kept busy beside them' : ''}`);
  for (const way of ways) console.log(`  ${label(way).padEnd(24)} ${fmt(m(way, 'ms'))} wall, ${m(way, 'cpu').toFixed(1)} s CPU, ${m(way, 'own').toFixed(1)} s of the suite's own processes`);
  const [first, ...rest] = ways;
  for (const way of rest) console.log(`  ${label(first)} / ${label(way)}: CPU ${(m(first, 'cpu') / m(way, 'cpu')).toFixed(2)}, own ${(m(first, 'own') / m(way, 'own')).toFixed(2)}, wall ${(m(first, 'ms') / m(way, 'ms')).toFixed(2)}`);
}
