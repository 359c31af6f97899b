// Places in containers against places on this machine, side by side in one run: a launch (the place
// made and readied, its agent started and its prompt confirmed in its transcript) into a podman
// container against one on the host, and `status --json` over MANY (default 20) places of each, each
// with a live (fake) agent at work. Podman as the tests run it (runc, cgroupfs, no default ulimits,
// an image made here with `podman import` that runs this machine's /usr read-only). Timed
// interleaved; medians of ROUNDS (default 7). No supervisor runs: what is timed is the command alone.
// The container has the default network: its agent's endpoint alone, through flume's proxy.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLUME, PROJECT, fakeAgentRepo, fmt, median, runFlume, sideBySide, stopSupervisor, temp } from './lib.mjs';

// As a user's shell runs them: no NODE_EXTRA_CA_CERTS for either side (../shared/facts/node.md).
delete process.env.NODE_EXTRA_CA_CERTS;
const rounds = Number(process.env.ROUNDS ?? 7);
const many = Number(process.env.MANY ?? 20);

// Podman as ../shared/facts/podman.md says it runs here, and an image with nothing in it.
const box = temp('flume-bench-container-');
const conf = join(box, 'containers.conf');
writeFileSync(conf, '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n');
process.env.CONTAINERS_CONF = conf;
const empty = join(box, 'empty');
mkdirSync(empty);
for (const link of ['bin', 'sbin', 'lib', 'lib64']) execFileSync('ln', ['-s', `usr/${link}`, join(empty, link)]);
execFileSync('tar', ['-C', empty, '-cf', join(box, 'empty.tar'), '.']);
const image = `localhost/flume-bench:${process.pid}`;
execFileSync('podman', ['import', '-q', join(box, 'empty.tar'), image]);

// Each agent says a word and then works for an hour: status reads a live agent in every place.
const script = { onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 3_600_000 }] }] };
const scriptDir = temp('flume-bench-container-script-');
const scriptPath = join(scriptDir, 'script.json');
writeFileSync(scriptPath, JSON.stringify(script));
const kind = { name: 'bench', stages: [{ name: 'work', prompt: '{brief}', deliverable: 'conclusion' }] };
const fake = join(PROJECT, 'test/helpers/fake-claude/fake-claude.mjs');
const agents = { 'claude-code': { binary: fake, env: { FAKE_CLAUDE_SCRIPT: scriptPath } } };
const host = fakeAgentRepo(script, { kinds: [kind], limits: { promptTimeout: '20s', startTimeout: '60s' } });
const boxed = fakeAgentRepo(script, {
  kinds: [kind],
  agents,
  agent: { host: 'tmux', container: { engine: 'podman', image, mounts: ['/usr:ro', '/etc/alternatives:ro', `${PROJECT}:ro`, `${scriptDir}:ro`] } },
  limits: { promptTimeout: '20s', startTimeout: '60s' },
});

const launch = (repo, name) => {
  const start = process.hrtime.bigint();
  runFlume(repo.env, repo.repo, 'launch', '--kind', 'bench', '--name', name, '--brief', 'Work.', '--no-watch', '--json');
  return Number(process.hrtime.bigint() - start) / 1e6;
};

try {
  // Launches, interleaved: each round one place on the host, one in a container.
  const launches = { host: [], container: [] };
  for (let i = 0; i < Math.max(rounds, many); i++) {
    launches.host.push(launch(host, `p${i}`));
    launches.container.push(launch(boxed, `p${i}`));
  }
  const launchHost = median(launches.host);
  const launchContainer = median(launches.container);

  // Status over every place of each (MANY, or the launches' count if more), no supervisor: a cold read.
  const status = (repo) => [process.execPath, [FLUME, 'status', '--repo', repo.repo, '--json'], repo.env];
  const count = (repo) => JSON.parse(runFlume(repo.env, repo.repo, 'status', '--repo', repo.repo, '--json')).places.length;
  const times = sideBySide({ host: status(host), container: status(boxed), node: [process.execPath, ['-e', '0'], process.env] }, rounds);
  const ps = sideBySide({ ps: ['podman', ['ps', '-a', '--filter', 'label=flume.place', '--format', 'json'], process.env] }, rounds);

  console.log(`launch, median of ${launches.host.length}: host ${fmt(launchHost)}, container ${fmt(launchContainer)} (${(launchContainer / launchHost).toFixed(2)}x)`);
  console.log(`status --json over ${count(host)} host places ${fmt(times.host)}, over ${count(boxed)} container places ${fmt(times.container)} (${(times.container / times.host).toFixed(2)}x); node -e 0 ${fmt(times.node)}; the one podman ps it adds ${fmt(ps.ps)}`);
} finally {
  for (const repo of [host, boxed]) await stopSupervisor(repo);
  const names = execFileSync('podman', ['ps', '-aq', '--filter', `ancestor=${image}`], { encoding: 'utf8' }).split('\n').filter(Boolean);
  if (names.length) spawnSync('podman', ['rm', '-f', '-t', '0', ...names]);
  spawnSync('podman', ['rmi', image]);
}
