#!/usr/bin/env node
/**
 * Finds flaky tests before CI does: runs the chosen test files (`sh scripts/test.sh FILE…`, as
 * `npm test` runs them, several files at once) ROUNDS times in a row while LOAD busy processes of its
 * own keep the cores loaded, and prints each test that failed with its failures out of ROUNDS.
 * Where cgroup v2 is writable (root here), it also counts each file's CPU in a cgroup of the file's
 * own (every process the file starts, daemons included: test/helpers/file-cgroup.ts) and each round's
 * whole CPU, and names any process a round left running.
 *
 *   node scripts/flakes.mjs [--rounds N] [--load K] [--out FILE.md] [--] [vitest args: files, --project…]
 *
 * Defaults: 3 rounds, 2 busy processes (one per core here), every file of the run. `--load 0` runs
 * unloaded (to measure CPU alone). `--out` writes the tables as Markdown too. FLUME_TEST_WORKERS and
 * the other variables of `npm test` apply as usual.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { cgroupName } from '../test/helpers/cgroup-name.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [, value] = args.splice(at, 2);
  return value;
};
const rounds = Number(option('--rounds', '3'));
const load = Number(option('--load', '2'));
const out = option('--out', undefined);
if (args[0] === '--') args.shift();

const CGROUPS = '/sys/fs/cgroup/unified';
const work = mkdtempSync(join(tmpdir(), 'flume-flakes-'));
const cgroupRoot = (() => {
  const dir = join(CGROUPS, `flume-flakes-${process.pid}`);
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    console.error(`flakes: no cgroup v2 to write at ${CGROUPS}: no CPU counted`);
    return undefined;
  }
})();
const cpuOf = (dir) => {
  const usec = /usage_usec (\d+)/.exec(readFileSync(join(dir, 'cpu.stat'), 'utf8'))?.[1];
  return usec ? Number(usec) / 1e6 : undefined;
};
const procsUnder = (dir) => {
  const pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) pids.push(...procsUnder(join(dir, entry.name)));
  return pids;
};
const removeTree = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeTree(join(dir, entry.name));
  for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    try {
      writeFileSync(join(CGROUPS, 'cgroup.procs'), pid);
    } catch {
      // gone
    }
  }
  rmdirSync(dir);
};

// Build once; the rounds run the same dist/.
spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
const loaders = Array.from({ length: load }, () => spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' }));
const stopLoad = () => loaders.forEach((child) => child.kill('SIGKILL'));
process.on('exit', stopLoad);
process.on('SIGINT', () => process.exit(130));

const results = [];
for (let round = 1; round <= rounds; round++) {
  const outcome = join(work, `round-${round}.json`);
  const group = cgroupRoot && join(cgroupRoot, `round-${round}`);
  if (group) mkdirSync(join(group, 'files'), { recursive: true });
  const started = Date.now();
  const env = { ...process.env, FLUME_SKIP_BUILD: '1', FLUME_TEST_OUTCOME: outcome, ...(group ? { FLUME_TEST_CPU: join(group, 'files') } : {}) };
  // The run joins its round's cgroup before it starts anything.
  const script = group ? `echo $$ > '${group}/cgroup.procs' && exec sh scripts/test.sh "$@"` : 'exec sh scripts/test.sh "$@"';
  const run = spawnSync('sh', ['-c', script, 'sh', ...args], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const wallS = (Date.now() - started) / 1000;
  const cpuS = group ? cpuOf(group) : undefined;
  const left = [];
  if (group) {
    // A moment for processes ending with their test, then whatever is still there was left behind.
    await new Promise((done) => setTimeout(done, 2000));
    for (const pid of procsUnder(group)) {
      const cmd = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() : '';
      left.push(`${pid} ${cmd.slice(0, 120)}`);
    }
  }
  const files = existsSync(outcome) ? JSON.parse(readFileSync(outcome, 'utf8')).files : [];
  if (group) {
    // Files whose worker still sat in their cgroup at the run's end are read now.
    for (const file of files) {
      const dir = join(group, 'files', cgroupName(file.project, file.file));
      if (file.cpuS === undefined && existsSync(dir)) file.cpuS = Math.round(cpuOf(dir) * 100) / 100;
    }
    removeTree(group);
  }
  results.push({ round, status: run.status, wallS, cpuS, left, files });
  const failed = files.flatMap((f) => f.tests.filter((t) => t.state === 'failed'));
  console.log(`\nflakes: round ${round}/${rounds}: exit ${run.status}, ${wallS.toFixed(0)} s, ${cpuS === undefined ? '' : `${cpuS.toFixed(0)} core-s, `}${failed.length} failed test(s)${left.length ? `, ${left.length} process(es) left running` : ''}`);
}
stopLoad();
if (cgroupRoot) rmdirSync(cgroupRoot);

// Each test's failures out of the rounds, and each file's time and CPU (medians).
const median = (xs) => {
  const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : undefined;
};
const key = (f) => `${f.file}${f.project === 'flume' ? '' : ` [${f.project}]`}`;
const fails = new Map();
const perFile = new Map();
for (const { files } of results) {
  for (const file of files) {
    const entry = perFile.get(key(file)) ?? { tests: file.tests.length, wall: [], cpu: [], failedRounds: 0 };
    entry.wall.push(file.durationMs / 1000);
    entry.cpu.push(file.cpuS);
    if (file.state === 'failed') entry.failedRounds++;
    perFile.set(key(file), entry);
    for (const test of file.tests.filter((t) => t.state === 'failed')) {
      const name = `${key(file)} › ${test.name}`;
      const seen = fails.get(name) ?? { count: 0, first: test.errors[0]?.split('\n')[0] ?? '' };
      seen.count++;
      fails.set(name, seen);
    }
    if (file.errors.length) {
      const name = `${key(file)} › (the file itself)`;
      const seen = fails.get(name) ?? { count: 0, first: file.errors[0].split('\n')[0] };
      seen.count++;
      fails.set(name, seen);
    }
  }
}
const lines = [];
lines.push(`## Flaky tests: ${rounds} round(s), ${load} busy process(es) beside, ${new Date().toISOString().slice(0, 16)}Z`, '');
lines.push('| failed | test | first error |', '| --- | --- | --- |');
for (const [name, { count, first }] of [...fails].sort((a, b) => b[1].count - a[1].count)) lines.push(`| ${count}/${rounds} | ${name} | ${first.replace(/\|/g, '\\|').slice(0, 160)} |`);
if (fails.size === 0) lines.push('| 0 | (none) | |');
lines.push('', '| round | exit | wall s | core-s | left running |', '| --- | --- | --- | --- | --- |');
for (const r of results) lines.push(`| ${r.round} | ${r.status} | ${r.wallS.toFixed(0)} | ${r.cpuS?.toFixed(0) ?? '—'} | ${r.left.join('; ') || 'none'} |`);
lines.push('', '| file | tests | wall s (median) | core-s (median) |', '| --- | --- | --- | --- |');
for (const [name, f] of [...perFile].sort((a, b) => (median(b[1].cpu) ?? median(b[1].wall)) - (median(a[1].cpu) ?? median(a[1].wall)))) {
  lines.push(`| \`${name}\` | ${f.tests} | ${median(f.wall).toFixed(1)} | ${median(f.cpu)?.toFixed(1) ?? '—'} |`);
}
const text = lines.join('\n') + '\n';
console.log('\n' + text);
if (out) writeFileSync(out, text);
process.exit(results.every((r) => r.status === 0) ? 0 : 1);
