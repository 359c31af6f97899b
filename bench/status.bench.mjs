// flume status --json over 100 places against 1 place in one repository, measured side by side; the
// git processes each spawns, counted; and `flume status` on an idle host against a bare `node -e 0`.
import { join } from 'node:path';
import { FLUME, PROJECT, fmt, git, gitCounter, makeRepo, sideBySide, temp } from './lib.mjs';

const { openRepository } = await import(join(PROJECT, 'dist/core/context.js'));
const { makePlace } = await import(join(PROJECT, 'dist/core/engine/launch.js'));
const { defaultPreset } = await import(join(PROJECT, 'dist/plugins/defaults.js'));

async function repoWithPlaces(count, stateDir) {
  process.env.FLUME_STATE_DIR = stateDir;
  const root = makeRepo();
  const repository = await openRepository(root, await defaultPreset());
  for (let i = 0; i < count; i++) {
    const record = await makePlace(repository, { kind: 'fix', name: `p${i}`, brief: 'bench' });
    if (i % 2 === 0) {
      git(record.path, 'commit', '-q', '--allow-empty-message', '-m', '', '--allow-empty');
      git(record.path, 'commit', '-q', '-m', `work ${i}`, '--allow-empty');
    }
  }
  return root;
}

const oneState = temp('flume-bench-state1-');
const manyState = temp('flume-bench-state100-');
const idleState = temp('flume-bench-idle-');
await repoWithPlaces(1, oneState);
await repoWithPlaces(100, manyState);
const counter = gitCounter();
const env = (state) => ({ ...process.env, FLUME_STATE_DIR: state, PATH: counter.path });

const counts = {};
for (const [name, state] of [['1 place', oneState], ['100 places', manyState]]) {
  counter.reset();
  sideBySide({ [name]: [process.execPath, [FLUME, 'status', '--json'], env(state)] }, 1);
  counts[name] = counter.count();
}
const rounds = Number(process.env.ROUNDS ?? 15);
const medians = sideBySide(
  {
    'status, 1 place': [process.execPath, [FLUME, 'status', '--json'], env(oneState)],
    'status, 100 places': [process.execPath, [FLUME, 'status', '--json'], env(manyState)],
    'node -e 0': [process.execPath, ['-e', '0'], env(idleState)],
    'status, no places': [process.execPath, [FLUME, 'status', '--json'], env(idleState)],
  },
  rounds,
);
console.log(`status --json, median of ${rounds} interleaved runs:`);
for (const [name, ms] of Object.entries(medians)) console.log(`  ${name.padEnd(20)} ${fmt(ms)}`);
console.log(`  100 places / 1 place      ${(medians['status, 100 places'] / medians['status, 1 place']).toFixed(2)}x  (limit 1.5x)`);
console.log(`  no places / node -e 0     ${(medians['status, no places'] / medians['node -e 0']).toFixed(2)}x  (limit 3x)`);
console.log(`git processes per status: 1 place ${counts['1 place']}, 100 places ${counts['100 places']}`);
