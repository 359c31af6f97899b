// The plain command lines (core/cli/plain-args.ts) against the same command lines through yargs, side
// by side in one run: `--json=false` means what leaving --json out means, but is not a plain form, so
// it takes the yargs path. Each launch makes and readies a place (--no-start --no-watch: no agent)
// with a name of its own; the refused launch names a folder that is no repository.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { FLUME, fmt, makeRepo, median, temp } from './lib.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 11);
const repo = makeRepo();
const state = temp('flume-bench-state-');
const env = { ...process.env, FLUME_STATE_DIR: state, FLUME_CACHE_DIR: join(state, 'cache') };
spawnSync(process.execPath, [FLUME, 'trust', '--repo', repo], { env });

let n = 0;
function run(args, expectCode) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== expectCode) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}
const launch = (extra) => [FLUME, 'launch', '--repo', repo, '--kind', 'fix', '--name', `b${++n}`, '--brief', 'bench', '--no-start', '--no-watch', ...extra];
const refused = (extra) => [FLUME, 'launch', '--repo', join(state, 'nowhere'), '--kind', 'fix', '--name', 'x', '--brief', 'b', ...extra];
const commands = {
  'node -e 0': () => run(['-e', '0'], 0),
  'launch (plain)': () => run(launch([]), 0),
  'launch (yargs)': () => run(launch(['--json=false']), 0),
  'refused launch (plain)': () => run(refused([]), 1),
  'refused launch (yargs)': () => run(refused(['--json=false']), 1),
};
const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) for (const [name, go] of Object.entries(commands)) samples[name].push(go());
const m = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
for (const [name, ms] of Object.entries(m)) console.log(`${name.padEnd(24)} ${fmt(ms)}  ${(ms / m['node -e 0']).toFixed(2)}× node -e 0`);
console.log(`launch: plain / yargs ${(m['launch (plain)'] / m['launch (yargs)']).toFixed(2)}; refused launch: plain / yargs ${(m['refused launch (plain)'] / m['refused launch (yargs)']).toFixed(2)} (${ROUNDS} interleaved rounds, medians)`);
