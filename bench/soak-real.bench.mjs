// A soak with faults against the REAL Claude Code: SOAK_LAUNCHES fix launches, SOAK_AT_ONCE at a
// time, each started as an operator starts one (the launch starts the host's supervisor when none
// runs), with the supervisor killed (SIGKILL, its pid the first field of <state>/watch.lock) after
// SOAK_KILL_SUPERVISOR_AT launches have returned and flume's tmux server killed after
// SOAK_KILL_TMUX_AT. The scripted model answers the code stage with a Bash call that commits a file
// named after the branch, and the submission stage with a Bash call that merges the branch into main
// from the main checkout (again while main's checkout is busy: several land at once), then "Merged
// into main.". The project's fake-agent soak is test/integration/stages/soak.test.ts.
//
// It reports how many places landed and were tidied, how many read never-started, or waiting because
// their agent exited, with their branch kept and not on main (their agents killed with tmux before
// landing), how many landed and were never finished (listed beside a landing of their own), how many
// launched after the faults did not land and get tidied (must be 0), whether any agent process is
// left running, and the times. It exits 1 when a place whose branch landed is not finished and tidied,
// when a place launched after the faults did not land and get tidied, when any work is lost (a commit
// an agent made that is neither on main nor on a kept branch), when the places do not settle within
// SOAK_TIMEOUT minutes, or when an agent process is left running.
//
// SOAK_KILL_SUPERVISOR_AT=0 and SOAK_KILL_TMUX_AT=0 run it without that fault (both 0: every launch
// must land and be tidied). SOAK_LOAD=K runs K busy processes beside it (a second process's load).
//
// The real program runs only in a network namespace with loopback alone (as the e2e tests do): run
// this as root and it re-executes itself under `unshare -n` (or `unshare -rn`). The agents talk to
// the scripted Messages API (test/helpers/messages-api.ts) on 127.0.0.1.
//
//   npm run build && node bench/soak-real.bench.mjs
//   SOAK_LAUNCHES=8 SOAK_AT_ONCE=3 SOAK_KILL_SUPERVISOR_AT=3 SOAK_KILL_TMUX_AT=5 SOAK_TIMEOUT=10
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJiti } from 'jiti';
import { FLUME, GIT_ENV, PROJECT, alive, flumeAsync, git, makeRepo, median, supervisorPid, temp } from './lib.mjs';

if (process.env.FLUME_IN_NETNS !== '1') {
  for (const flags of ['-n', '-rn']) {
    if (spawnSync('unshare', [flags, 'true']).status !== 0) continue;
    const result = spawnSync('unshare', [flags, 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, FLUME_IN_NETNS: '1' } });
    process.exit(result.status ?? 1);
  }
  console.error('soak-real.bench: needs a network namespace (unshare -n as root, or unshare -rn); none can be made here.');
  process.exit(1);
}

const jiti = createJiti(import.meta.url);
const { assertIsolated } = await jiti.import(join(PROJECT, 'test/helpers/netns.ts'));
const { makeClaudeEnv } = await jiti.import(join(PROJECT, 'test/helpers/claude-env.ts'));
const { startMessagesApi, toolUse } = await jiti.import(join(PROJECT, 'test/helpers/messages-api.ts'));
assertIsolated();

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const LAUNCHES = Number(process.env.SOAK_LAUNCHES ?? 60);
const AT_ONCE = Number(process.env.SOAK_AT_ONCE ?? 8);
const KILL_SUPERVISOR_AT = Number(process.env.SOAK_KILL_SUPERVISOR_AT ?? 20);
const KILL_TMUX_AT = Number(process.env.SOAK_KILL_TMUX_AT ?? 40);
const TIMEOUT_MS = Number(process.env.SOAK_TIMEOUT ?? 20) * 60_000;
const LOAD = Number(process.env.SOAK_LOAD ?? 0);
const FAULTS = KILL_SUPERVISOR_AT > 0 || KILL_TMUX_AT > 0;
const ENV = { ...process.env, ...GIT_ENV, FLUME_CONFIG_TIMEOUT_MS: '120000' };

/** The first thing the user said in a conversation: which stage's agent is asking. */
function opening(body) {
  const first = body.messages.find((m) => m.role === 'user');
  return typeof first?.content === 'string' ? first.content : (first?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
}

/**
 * The live processes whose environment carries this run's Claude config dir: the agents and
 * whatever their tools started (other runs' agents on the host have a config dir of their own).
 */
function agentProcesses(configDir) {
  const mark = `CLAUDE_CONFIG_DIR=${configDir}`;
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(mark) || !alive(Number(entry))) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      // gone since
    }
    found.push({ pid: Number(entry), command: command.slice(0, 120) });
  }
  return found;
}

/** The panes of flume's tmux server whose program still runs. */
function livePanes(socket) {
  const result = spawnSync('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_id} #{pane_dead} #{pane_pid}'], { encoding: 'utf8' });
  if (result.status !== 0) return [];
  return result.stdout.split('\n').filter(Boolean).map((line) => line.split(' ')).filter(([, dead, pid]) => dead === '0' && alive(Number(pid))).map(([pane, , pid]) => ({ pane, pid: Number(pid) }));
}

function isAncestor(repo, commit, ref) {
  return spawnSync('git', ['merge-base', '--is-ancestor', commit, ref], { cwd: repo }).status === 0;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const stats = (values) => (values.length ? `median ${s(median(values))}, p90 ${s(percentile(values, 90))}, max ${s(Math.max(...values))}` : '-');
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// The agents' two scripts; each commit an agent makes is logged (branch and hash), to find lost work.
const bin = temp('flume-bench-soak-bin-');
const commits = join(bin, 'commits.log');
writeFileSync(commits, '');
const script = (name, body) => {
  const path = join(bin, name);
  writeFileSync(path, `#!/bin/sh\nset -e\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
};
// A moment's work first, so the kills find agents at work.
const commit = script('commit-own.sh', `sleep 2
cd "$(git rev-parse --show-toplevel)"
b="$(git branch --show-current)"; f="$(echo "$b" | tr / -).txt"
echo "work $(date +%s%N)" >> "$f"; git add -- "$f"; git commit -qm "Work on $f"
echo "$b $(git rev-parse HEAD)" >> '${commits}'`);
// Several land at once: a merge that finds main's checkout busy tries again. The merges take turns
// (flock): two at once in one checkout can leave it mid-merge, and every later landing then fails.
const land = script('land-retry.sh', `main="$(git rev-parse --path-format=absolute --git-common-dir)/.."; b="$(git branch --show-current)"
for i in $(seq 300); do flock "$main/.git/land.lock" git -C "$main" merge -q --no-edit "$b" && exit 0; sleep 0.2; done; exit 1`);

const api = await startMessagesApi({
  script: (request) => {
    const first = opening(request.body);
    const results = request.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result').length;
    // The Bash tool's own limit is 2 minutes unless the call asks for more.
    if (first.includes('Submit the branch for landing')) return results === 0 ? toolUse('Bash', { command: land, description: 'Merge the branch into main', timeout: 600_000 }, { before: 'Landing.' }) : 'Merged into main.';
    if (first.includes('Make the change the brief asks for')) return results === 0 ? toolUse('Bash', { command: commit, description: 'Commit the work', timeout: 600_000 }, { before: 'Working.' }) : 'Committed.';
    return undefined;
  },
});

const repo = makeRepo();
const claude = makeClaudeEnv({ baseUrl: api.url, trusted: [repo], permissionMode: 'bypassPermissions' });
const state = temp('flume-bench-state-');
const socket = join(state, 'tmux', 'flume.sock');
// Bash runs without a dialog: bypassPermissions, which as root needs IS_SANDBOX=1.
const config = { agent: { host: 'tmux' }, agents: { 'claude-code': { binary: claude.binary, configDir: claude.configDir, env: { ...claude.vars, ...GIT_ENV, IS_SANDBOX: '1' } } }, limits: { promptTimeout: '8s', startTimeout: '40s' } };
writeFileSync(join(repo, 'flume.config.ts'), `export default ${JSON.stringify(config)};\n`);
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'config');
const env = { ...ENV, FLUME_STATE_DIR: state };
const trusted = spawnSync(process.execPath, [FLUME, 'trust', '--repo', repo], { env, cwd: repo, encoding: 'utf8' });
if (trusted.status !== 0) throw new Error(`flume trust: ${trusted.stdout}${trusted.stderr}`);

const names = Array.from({ length: LAUNCHES }, (_, i) => `s${i + 1}`);
const loads = [load()];
const loaders = Array.from({ length: LOAD }, () => spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' }));
// The supervisor's resident memory and open files, every 5 s, by supervisor (a killed one is replaced).
const samples = new Map();
const sampler = setInterval(() => {
  const pid = supervisorPid(state);
  if (!pid || !alive(pid)) return;
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    if (!samples.has(pid)) samples.set(pid, []);
    samples.get(pid).push({ at: Date.now() - began, rss, fds });
  } catch {
    // gone since
  }
}, 5000);
const began = Date.now();
const faults = {};
const results = new Map();
let launched = 0;
let afterFaults = [];

const launchOne = async (name) => {
  const result = await flumeAsync(FLUME, env, repo, 'launch', '--kind', 'fix', '--name', name, '--brief', `Add ${name}.`, '--json');
  results.set(name, result);
  launched++;
  if (launched === KILL_SUPERVISOR_AT) {
    const pid = supervisorPid(state);
    faults.supervisor = { at: Date.now() - began, pid, killed: pid > 0 && alive(pid) };
    if (faults.supervisor.killed) process.kill(pid, 'SIGKILL');
  }
  if (launched === KILL_TMUX_AT) {
    faults.tmux = { at: Date.now() - began, panes: livePanes(socket).length };
    spawnSync('tmux', ['-S', socket, 'kill-server']);
    // The launches under way may have been cut; the ones not yet started are after both faults.
    afterFaults = [...queue];
  }
};

const queue = [...names];
let checked = false;
let failed = false;
try {
  await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    for (let name = queue.shift(); name; name = queue.shift()) await launchOne(name);
  }));
  const launchesDone = Date.now();
  loads.push(load());

  // Every place ends tidied (gone from status) or waiting / never-started; none is left at work. A
  // waiting place counts as settled once it has stayed so past the supervisor's slow poll (30 s), which
  // reads every place afresh: one its landing would still move is not taken for one left behind.
  let places;
  let still;
  for (const end = Date.now() + TIMEOUT_MS; ; ) {
    const status = await flumeAsync(FLUME, env, repo, 'status', '--repo', repo, '--json');
    if (status.code === 0) {
      places = JSON.parse(status.stdout).places;
      const now = JSON.stringify(places.map((p) => [p.name, p.stage?.name, p.stage?.state]));
      if (!places.every((p) => ['waiting', 'never-started'].includes(p.stage?.state))) still = undefined;
      else if (places.length === 0 || (still?.now === now && Date.now() - still.since > 35_000)) break;
      else if (still?.now !== now) still = { now, since: Date.now() };
    }
    if (Date.now() > end) {
      places = undefined;
      break;
    }
    await sleep(3000);
  }
  const settled = Date.now();
  loads.push(load());

  const agents = agentProcesses(claude.configDir);
  const panes = livePanes(socket);
  const listed = new Map((places ?? []).map((p) => [p.name, p]));
  const onMain = git(repo, 'log', '--format=%s', 'main').split('\n');
  const branchExists = (name) => git(repo, 'branch', '--list', `fix/${name}`) !== '';
  const rows = names.map((name) => {
    const place = listed.get(name);
    const kept = branchExists(name);
    const landed = onMain.includes(`Work on fix-${name}.txt`);
    let outcome;
    if (!place && !kept && landed) outcome = 'landed';
    // Kept only when its work is not on main: a landed place still listed was never finished.
    else if (place && kept && !landed && (place.stage?.state === 'never-started' || (place.stage?.state === 'waiting' && /its agent exited/.test(place.stage.needs ?? '')))) outcome = 'kept';
    else if (landed) outcome = 'unfinished';
    else outcome = 'other';
    return { name, outcome, place, kept, landed, launch: results.get(name) };
  });
  // Lost work: a commit an agent made that no branch holds, main included.
  const heads = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads').split('\n').filter(Boolean);
  const made = readFileSync(commits, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' '));
  const lost = made.filter(([, sha]) => !heads.some((ref) => isAncestor(repo, sha, ref)));
  const notConverged = afterFaults.filter((name) => rows.find((r) => r.name === name).outcome !== 'landed');
  const codes = {};
  for (const result of results.values()) codes[result.code] = (codes[result.code] ?? 0) + 1;
  const launchMs = [...results.values()].map((r) => r.ms);
  const kept = rows.filter((r) => r.outcome === 'kept');
  const needs = {};
  for (const r of kept) {
    const why = r.place.stage.state === 'never-started' ? 'never-started' : `waiting: ${r.place.stage.needs}`;
    needs[why] = (needs[why] ?? 0) + 1;
  }

  console.log(`the real Claude Code, ${LAUNCHES} fix launches ${AT_ONCE} at a time; ${FAULTS ? `supervisor killed after ${KILL_SUPERVISOR_AT || 'no'} launches, tmux after ${KILL_TMUX_AT || 'none'}` : 'no faults'}${LOAD ? `, ${LOAD} busy processes beside` : ''} (load average ${loads.join(' → ')}):`);
  console.log(`  faults: supervisor ${faults.supervisor ? (faults.supervisor.killed ? `pid ${faults.supervisor.pid} SIGKILLed at ${s(faults.supervisor.at)}` : `none running at ${s(faults.supervisor.at)}`) : 'never reached'}; tmux server ${faults.tmux ? `killed at ${s(faults.tmux.at)} (${faults.tmux.panes} live panes)` : 'never reached'}`);
  console.log(`  launches: exit codes ${JSON.stringify(codes)}; each ${stats(launchMs)}`);
  console.log(`  landed and tidied: ${rows.filter((r) => r.outcome === 'landed').length}`);
  console.log(`  waiting or never-started, branch kept: ${kept.length}${kept.length ? ` (${Object.entries(needs).map(([why, n]) => `${n} ${why}`).join('; ')})` : ''}`);
  const unfinished = rows.filter((r) => r.outcome === 'unfinished');
  console.log(`  landed and never finished: ${unfinished.length}${unfinished.length ? ` (${unfinished.map((r) => `${r.name}: ${r.place ? `${r.place.stage?.name} ${r.place.stage?.state}${r.place.stage?.needs ? ` (needs: ${r.place.stage.needs})` : ''}` : 'not listed'}, branch ${r.kept ? 'kept' : 'gone'}`).join('; ')})` : ''}`);
  console.log(`  neither: ${rows.filter((r) => r.outcome === 'other').map((r) => `${r.name} (${r.place ? `listed, ${r.place.stage?.state}` : 'not listed'}, branch ${r.kept ? 'kept' : 'gone'}, ${r.landed ? 'on main' : 'not on main'}, launch exit ${r.launch?.code})`).join(', ') || 'none'}`);
  console.log(`  launched after the faults (${afterFaults.length}: ${afterFaults[0] ?? '-'}…${afterFaults.at(-1) ?? ''}) that did not land and get tidied: ${notConverged.length}${notConverged.length ? ` (${notConverged.join(', ')})` : ''}`);
  console.log(`  commits the agents made: ${made.length}; lost (on no branch, main included): ${lost.length}${lost.length ? ` (${lost.map(([b, sha]) => `${b} ${sha.slice(0, 10)}`).join(', ')})` : ''}`);
  console.log(`  agent processes left running: ${agents.length}${agents.length ? ` (${agents.map((a) => `${a.pid} ${a.command}`).join('; ')})` : ''}; live panes: ${panes.length}`);
  console.log(`  times: launches ${s(launchesDone - began)}; then settled in ${places ? s(settled - launchesDone) : `no (gave up after ${s(settled - launchesDone)})`}; whole ${s(settled - began)}`);
  for (const [pid, taken] of samples) {
    if (taken.length < 4) continue;
    const half = Math.floor(taken.length / 2);
    const mean = (rows, key) => rows.reduce((sum, row) => sum + row[key], 0) / rows.length;
    const first = taken.slice(0, half);
    const last = taken.slice(half);
    console.log(`  supervisor ${pid} (${taken.length} samples, ${s(taken[0].at)}–${s(taken.at(-1).at)}): RSS first half ${mean(first, 'rss').toFixed(0)} MB, second ${mean(last, 'rss').toFixed(0)} MB, max ${Math.max(...taken.map((t) => t.rss)).toFixed(0)} MB; open files first half ${mean(first, 'fds').toFixed(0)}, second ${mean(last, 'fds').toFixed(0)}, max ${Math.max(...taken.map((t) => t.fds))}`);
  }
  console.log(`  the scripted API: ${api.requests.length} turns; unscripted or unknown: ${api.unexpected().length}`);
  if (process.env.VERBOSE) for (const r of rows) console.log(`    ${r.name} ${r.outcome} ${r.place ? `${r.place.stage?.state} ${r.place.stage?.needs ?? ''}` : ''} launch ${r.launch?.code} ${s(r.launch?.ms ?? 0)}`);
  // What a launch that did not exit 0 said: its error, as a caller reads it.
  const said = (launch) => {
    // A --json launch prints its error as JSON: its code and message say what happened.
    for (const text of [launch.stdout, launch.stderr]) {
      try {
        const { error } = JSON.parse(text);
        if (error?.code) return `${error.code}: ${String(error.message ?? '').split('\n')[0]}`;
      } catch {
        // not JSON
      }
    }
    return (launch.stderr || launch.stdout).trim().split('\n').slice(0, 3).join(' | ');
  };
  for (const r of rows.filter((row) => row.launch && row.launch.code !== 0)) console.log(`    ${r.name}'s launch exited ${r.launch.code}: ${said(r.launch).slice(0, 400)}`);
  const reasons = [
    !places && `the places did not settle within ${s(TIMEOUT_MS)}`,
    notConverged.length > 0 && 'places launched after the faults did not land and get tidied',
    unfinished.length > 0 && 'places whose branch landed were not finished and tidied',
    !FAULTS && rows.some((r) => r.outcome !== 'landed') && 'without faults, not every launch landed and was tidied',
    FAULTS && afterFaults.length === 0 && 'no launch started after the faults (raise SOAK_LAUNCHES or lower SOAK_KILL_TMUX_AT)',
    lost.length > 0 && 'work was lost',
    agents.length > 0 && 'agent processes are left running',
  ].filter(Boolean);
  if (reasons.length > 0) console.log(`soak-real: FAILED: ${reasons.join('; ')}`);
  failed = reasons.length > 0;
  checked = true;
} finally {
  clearInterval(sampler);
  for (const loader of loaders) loader.kill('SIGKILL');
  // The supervisor ends its steps under way before it exits: the tmux server goes after it.
  const pid = supervisorPid(state);
  if (pid > 0 && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    for (const end = Date.now() + 60_000; alive(pid) && Date.now() < end; ) await sleep(200);
  }
  spawnSync('tmux', ['-S', socket, 'kill-server']);
  await sleep(1000);
  await api.close();
  if (checked && !failed) {
    for (const dir of [repo, state, bin]) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    claude.cleanup();
  } else {
    console.log(`  kept for a look: repo ${repo}, state ${state}, Claude config ${claude.configDir}`);
  }
}
if (failed) process.exitCode = 1;
