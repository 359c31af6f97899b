// `flume status` on the real path: N places (MANY, default 30; the issue's figure is MANY=40), each
// with a live (fake) agent in a tmux pane on the bench's own socket, real commits on each branch
// (some merged or cherry-picked onto main, so the patch-id work runs), transcripts of a few hundred
// KB. Places are of a kind whose one stage never delivers, so the supervisor launch started keeps
// watching them and moves none on. Timed interleaved against a bare `node -e 0`: `status --json` over
// N places and over 1, `status PLACE`, `kinds` (all answered by the supervisor, checked first), the
// same status run cold (an environment variable set, so the supervisor is passed over), and status
// on a host with no places. The processes a cold status spawns are counted in a separate, untimed
// pass: no wrapper is on PATH while anything is timed. AGAINST names another build's bin, whose
// cold status is timed in the same rounds. The floor of a cold status is timed beside it: the modules
// it loads (listed in an untimed pass by a resolve hook), imported by one file, with nothing run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FLUME, GIT_ENV, PROJECT, fmt, git, makeRepo, median, processCounter, sideBySide, temp } from './lib.mjs';

const FAKE = join(PROJECT, 'test/helpers/fake-claude/fake-claude.mjs');
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// What each agent does with its prompt: four commits of real content in files of its own, two
// tool outputs of about 200 KB each (the transcript's bulk, as a test run's or a log's would be),
// and a reply. Even places then keep working (a spinner, a pending turn); odd ones end their turn.
const commit = (n) => [
  'sh',
  '-c',
  `d=src/$(basename "$PWD"); mkdir -p $d && awk -v n=${n} -v p="$d" 'BEGIN { for (i = 1; i <= 120; i++) printf "export const %s_%d_%d = \\"%s line %d of part %d\\";\\n", "v", n, i, p, i, n }' > $d/part${n}.ts && git add -A && git commit -qm "part ${n} of $(basename "$PWD")" && echo committed part ${n}`,
];
const bulk = ['sh', '-c', 'seq -f "log line %g: all tests passed in this module, nothing to report" 1 3000'];
const work = (rest) => [
  { say: 'I will make the change in four parts, committing each.' },
  { run: commit(1), description: 'Write part 1 and commit' },
  { run: commit(2), description: 'Write part 2 and commit' },
  { run: bulk, description: 'Run the tests' },
  { run: commit(3), description: 'Write part 3 and commit' },
  { run: commit(4), description: 'Write part 4 and commit' },
  { run: bulk, description: 'Run the tests again' },
  { say: 'The four parts are committed and the tests pass. '.repeat(20) },
  ...rest,
];

// One stage whose deliverable (conclusion.md) never comes: the supervisor that launch starts keeps
// watching every place and never moves one on, so what is timed is status over places that stay put.
const BENCH_KIND = { name: 'bench', description: 'One stage that never ends.', stages: [{ name: 'work', prompt: '{brief}', deliverable: 'conclusion' }] };

/** A repository whose config runs the fake agent on tmux; its own state dir (so its own tmux socket). */
function setup(name, mark) {
  const state = temp(`flume-bench-status-${name}-`);
  const configDir = temp('flume-bench-claude-');
  const scriptPath = join(configDir, 'script.json');
  const done = `node -e "require('fs').writeFileSync('${mark}/'+require('path').basename(process.cwd()),'')"`;
  writeFileSync(
    scriptPath,
    JSON.stringify({
      onPrompt: [
        { match: 'KEEP-BUSY', actions: work([{ run: ['sh', '-c', done], description: 'Mark' }, { sleepMs: 3_600_000 }]) },
        { actions: work([{ run: ['sh', '-c', done], description: 'Mark' }, { say: 'Done: four commits on the branch. Shall I open a pull request?' }]) },
      ],
    }),
  );
  const repo = makeRepo();
  writeFileSync(
    join(repo, 'flume.config.ts'),
    `export default ${JSON.stringify({ agent: { host: 'tmux' }, agents: { 'claude-code': { binary: FAKE, configDir, env: { FAKE_CLAUDE_SCRIPT: scriptPath } } }, limits: { promptTimeout: '60s' }, kinds: [BENCH_KIND] })};\n`,
  );
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'config');
  // The load limit raised: on a host this loaded a first load of the config can pass 10 s.
  const env = { ...process.env, ...GIT_ENV, FLUME_STATE_DIR: state, FLUME_CONFIG_TIMEOUT_MS: '120000' };
  // The config runs only once trusted (flume trust), as a user would have done.
  const trusted = spawnSync(process.execPath, [FLUME, 'trust', '--repo', repo], { env, cwd: repo, encoding: 'utf8' });
  if (trusted.status !== 0) throw new Error(`flume trust: ${trusted.stdout}${trusted.stderr}`);
  return { state, repo, env, configDir };
}

function launch(env, repo, name, brief) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLUME, 'launch', '--kind', 'bench', '--name', name, '--brief', brief], { env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`flume launch ${name}: ${out}`))));
  });
}

/** N places with live agents that committed; a third merged onto main, a third half cherry-picked. */
async function repoWithAgents(count) {
  const marks = temp('flume-bench-marks-');
  const bench = setup(String(count), marks);
  const names = [...Array(count).keys()].map((i) => `p${i}`);
  // A few launches at once: each waits for its agent to take the prompt.
  for (let i = 0; i < names.length; i += 4) {
    await Promise.all(names.slice(i, i + 4).map((name, j) => launch(bench.env, bench.repo, name, `${(i + j) % 2 === 0 ? 'KEEP-BUSY' : 'END-TURN'}: make the change for ${name}`)));
  }
  const deadline = Date.now() + 300_000;
  while (!names.every((name) => existsSync(join(marks, `bench--${name}`)))) {
    if (Date.now() > deadline) throw new Error(`agents never finished: ${names.filter((name) => !existsSync(join(marks, `bench--${name}`))).join(' ')}`);
    await sleep(500);
  }
  names.forEach((name, i) => {
    const branch = `bench/${name}`;
    if (i % 3 === 0) git(bench.repo, 'merge', '-q', '--no-ff', '-m', `merge ${branch}`, branch);
    if (i % 3 === 1) {
      const commits = git(bench.repo, 'rev-list', '--reverse', `main..${branch}`).split('\n');
      git(bench.repo, 'cherry-pick', commits[0], commits[1]);
    }
  });
  return bench;
}

/**
 * The modules a cold `status --json` loads (a resolve hook records each file: URL it resolves, the bin
 * itself left out) and a file that imports them all and runs nothing else.
 */
function coldModules(env) {
  const dir = temp('flume-bench-modules-');
  const log = join(dir, 'resolved.txt');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  if (result.url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, result.url + '\\n');\n  return result;\n}\n`);
  const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(pathToFileURL(hooks).href)})`;
  const result = spawnSync(process.execPath, ['--import', register, FLUME, 'status', '--json'], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`flume status (listing modules): ${result.stderr}`);
  const self = pathToFileURL(FLUME).href;
  const urls = [...new Set(readFileSync(log, 'utf8').split('\n').filter((url) => url && url !== self))];
  const file = join(dir, 'modules.mjs');
  writeFileSync(file, urls.map((url) => `import ${JSON.stringify(url)};`).join('\n') + '\n');
  return { file, length: urls.length };
}

function flumeStatus(env) {
  const result = spawnSync(process.execPath, [FLUME, 'status', '--json'], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`flume status: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** What status reports, in brief: so a figure is never taken over places status could not read. */
function summary(report) {
  const count = (f) => report.places.reduce((acc, p) => ((acc[f(p)] = (acc[f(p)] ?? 0) + 1), acc), {});
  return `agents ${JSON.stringify(count((p) => p.stage?.agent?.state ?? 'none'))}, landing ${JSON.stringify(count((p) => `${p.landing.state}${p.landing.missing ? ` (${p.landing.missing} missing)` : ''}`))}`;
}

const manyCount = Number(process.env.MANY ?? 30);
const rounds = Number(process.env.ROUNDS ?? 15);
const benches = [];
try {
  const started = Date.now();
  const one = await repoWithAgents(1);
  benches.push(one);
  const many = await repoWithAgents(manyCount);
  benches.push(many);
  const idle = { env: { ...process.env, FLUME_STATE_DIR: temp('flume-bench-idle-') } };
  console.log(`set up 1 + ${manyCount} places with live agents in ${((Date.now() - started) / 1000).toFixed(0)} s`);

  // What the timed runs will read, checked first.
  for (const [name, bench] of [['1 place', one], [`${manyCount} places`, many]]) {
    const report = flumeStatus(bench.env);
    const transcripts = report.places.map((p) => p.stage?.agent?.transcript).filter((t) => t && existsSync(t));
    const sizes = transcripts.map((t) => readFileSync(t).length / 1024);
    console.log(`  ${name}: ${summary(report)}; transcripts ${transcripts.length}, median ${median(sizes).toFixed(0)} KB`);
  }

  // Untimed: how many processes one cold status spawns (git and tmux, counted by wrappers first on PATH).
  const counter = processCounter(['git', 'tmux']);
  for (const [name, bench] of [['1 place', one], [`${manyCount} places`, many]]) {
    counter.reset();
    flumeStatus({ ...bench.env, PATH: counter.path });
    console.log(`  processes one status run cold spawns (a wrapper on PATH changes the environment, so the supervisor is passed over), ${name}: ${Object.entries(counter.counts()).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }

  // Untimed: the modules one cold status loads, as a resolve hook sees them; one file importing them
  // all (nothing run) is the floor of module loading a cold status stands on.
  const modules = coldModules({ ...many.env, FLUME_BENCH_COLD: '1' });
  console.log(`  modules one status run cold loads: ${modules.length}`);

  // Every read below is answered by each host's supervisor (launch started it; core/cli/warm.ts):
  // checked first, so no figure is taken from a command that ran cold by mistake.
  const { askWarm } = await import(join(PROJECT, 'dist/core/cli/warm.js'));
  for (const bench of [one, many]) {
    const answer = await askWarm(['status', '--json'], { stateDir: bench.state, self: FLUME, env: bench.env });
    if (!answer) throw new Error(`the supervisor of ${bench.state} does not answer status`);
  }
  // The same status with the supervisor passed over: a variable flume reads differs, so it runs cold.
  const cold = { ...many.env, FLUME_BENCH_COLD: '1' };

  // Timed: interleaved, nothing on PATH but the user's own.
  const status = (env, ...args) => [process.execPath, [FLUME, 'status', ...args], env];
  const place = `bench/p${manyCount - 1}`;
  const medians = sideBySide(
    {
      'node -e 0': [process.execPath, ['-e', '0'], idle.env],
      [`status --json, ${manyCount} places`]: status(many.env, '--json'),
      [`status ${place}`]: status(many.env, place),
      kinds: [process.execPath, [FLUME, 'kinds', '--repo', many.repo], many.env],
      'status --json, 1 place': status(one.env, '--json'),
      [`status --json, ${manyCount} places, cold`]: status(cold, '--json'),
      'status --json, no places': status(idle.env, '--json'),
      [`the modules of a cold status, nothing run`]: [process.execPath, [modules.file], idle.env],
      // AGAINST=<another build's dist/bin/flume.js>: the same cold status by that build, side by side.
      ...(process.env.AGAINST ? { [`status --json, ${manyCount} places, cold, AGAINST`]: [process.execPath, [process.env.AGAINST, 'status', '--json'], cold] } : {}),
    },
    rounds,
  );
  const node = medians['node -e 0'];
  const ratio = (name) => (medians[name] / node).toFixed(2);
  console.log(`median of ${rounds} interleaved runs (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}):`);
  for (const [name, ms] of Object.entries(medians)) console.log(`  ${name.padEnd(34)} ${fmt(ms).padStart(10)}  ${ratio(name)}x node -e 0`);
  console.log(`  ${manyCount} places / node -e 0             ${ratio(`status --json, ${manyCount} places`)}x  (limit 2x)`);
  console.log(`  status PLACE / node -e 0             ${ratio(`status ${place}`)}x  (limit 2x)`);
  console.log(`  kinds / node -e 0                    ${ratio('kinds')}x  (limit 2x)`);
  console.log(`  ${manyCount} places / 1 place                ${(medians[`status --json, ${manyCount} places`] / medians['status --json, 1 place']).toFixed(2)}x  (limit 1.5x)`);
  console.log(`  no places / node -e 0                ${ratio('status --json, no places')}x  (limit 3x)`);
  console.log(`  modules alone / node -e 0            ${ratio('the modules of a cold status, nothing run')}x  (what a cold status cannot go below on this node)`);
  if (process.env.AGAINST) console.log(`  cold / cold by ${process.env.AGAINST}  ${(medians[`status --json, ${manyCount} places, cold`] / medians[`status --json, ${manyCount} places, cold, AGAINST`]).toFixed(2)}x`);
} finally {
  // KEEP=1 leaves the agents running, for profiling (the state dirs are printed).
  if (process.env.KEEP) console.log(`kept: ${benches.map((b) => `FLUME_STATE_DIR=${b.state}`).join(' ')}`);
  else {
    for (const bench of benches) {
      const holder = existsSync(join(bench.state, 'watch.lock')) ? Number(readFileSync(join(bench.state, 'watch.lock'), 'utf8').split(' ')[0]) : 0;
      if (holder > 0) spawnSync('kill', [String(holder)]);
      spawnSync('tmux', ['-S', join(bench.state, 'tmux', 'flume.sock'), 'kill-server']);
    }
  }
}
