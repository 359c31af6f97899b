// The supervisor with the REAL Claude Code: from a deliverable's commit to the next
// stage's prompt taken, split into flume's steps and the program's own start, and beside it the
// program's own start measured alone (no flume) in the same run.
//
// The real program runs only in a network namespace with loopback alone (as the e2e tests do): run
// this as root and it re-executes itself under `unshare -n` (or `unshare -rn`). The agent talks to
// the scripted Messages API (test/helpers/messages-api.ts) on 127.0.0.1.
//
//   npm run build && node bench/supervisor-real.bench.mjs
//   PLACES=4 ROUNDS=2 STARTS=4 WINDOW_MS=8000 VERBOSE=1
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createJiti } from 'jiti';
import { FLUME, GIT_ENV, PROJECT, gates, makeRepo, median, temp } from './lib.mjs';

if (process.env.FLUME_IN_NETNS !== '1') {
  for (const flags of ['-n', '-rn']) {
    if (spawnSync('unshare', [flags, 'true']).status !== 0) continue;
    const result = spawnSync('unshare', [flags, 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, FLUME_IN_NETNS: '1' } });
    process.exit(result.status ?? 1);
  }
  console.error('supervisor-real.bench: needs a network namespace (unshare -n as root, or unshare -rn); none can be made here.');
  process.exit(1);
}

const jiti = createJiti(import.meta.url);
const { assertIsolated } = await jiti.import(join(PROJECT, 'test/helpers/netns.ts'));
const { makeClaudeEnv } = await jiti.import(join(PROJECT, 'test/helpers/claude-env.ts'));
const { startMessagesApi, toolUse } = await jiti.import(join(PROJECT, 'test/helpers/messages-api.ts'));
const pane = await jiti.import(join(PROJECT, 'test/helpers/claude-pane.ts'));
assertIsolated();

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const PLACES = Number(process.env.PLACES ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const STARTS = Number(process.env.STARTS ?? 4);
const WINDOW_MS = Number(process.env.WINDOW_MS ?? 8_000);
const ENV = { ...process.env, ...GIT_ENV, FLUME_CONFIG_TIMEOUT_MS: '120000' };

/** The first thing the user said in a conversation: which stage's agent is asking. */
function opening(body) {
  const first = body.messages.find((m) => m.role === 'user');
  const content = typeof first?.content === 'string' ? first.content : (first?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
  return content;
}


function flume(env, cwd, ...args) {
  const result = spawnSync(process.execPath, [FLUME, ...args], { env, cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`flume ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

function eventsOf(repo, key) {
  const file = join(repo, '.git', 'flume', 'places', `${key}.events.jsonl`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

function recordOf(repo, key) {
  return JSON.parse(readFileSync(join(repo, '.git', 'flume', 'places', `${key}.json`), 'utf8'));
}

/**
 * One round under flume: `PLACES` places of kind `fix` launched (`--no-watch`; each launch returns
 * with the code stage's prompt taken), then `flume watch`; each code-stage agent's Bash call waits
 * at its gate, which opens at a random moment within WINDOW_MS; it writes the time and commits. Per
 * place: the times from that mark to each step of the next (submission) stage's start.
 */
async function flumeRound(api) {
  const marks = temp('flume-bench-marks-');
  const gate = gates();
  const repo = makeRepo();
  const claude = makeClaudeEnv({ baseUrl: api.url, trusted: [repo], permissionMode: 'bypassPermissions' });
  const state = temp('flume-bench-state-');
  // Bash runs without a dialog: bypassPermissions, which as root needs IS_SANDBOX=1.
  const config = { agent: { host: 'tmux' }, agents: { 'claude-code': { binary: claude.binary, configDir: claude.configDir, env: { ...claude.vars, IS_SANDBOX: '1' } } }, limits: { promptTimeout: '8s', startTimeout: '40s' } };
  writeFileSync(join(repo, 'flume.config.ts'), `export default ${JSON.stringify(config)};\n`);
  spawnSync('git', ['add', '-A'], { cwd: repo });
  spawnSync('git', ['commit', '-qm', 'config'], { cwd: repo, env: ENV });
  const env = { ...ENV, FLUME_STATE_DIR: state };
  flume(env, repo, 'trust', '--repo', repo);
  api.code = `${gate.wait}; date +%s%3N > ${marks}/$(basename "$PWD") && echo x > x.txt && git add x.txt && git commit -qm work`;
  let watcher;
  const rows = [];
  try {
    for (let i = 0; i < PLACES; i++) flume(env, repo, 'launch', '--kind', 'fix', '--name', `r${i}`, '--brief', 'bench', '--no-watch');
    watcher = spawn(process.execPath, [FLUME, 'watch', '--poll', '30s', '--linger', '0', '--quiet'], { env, stdio: 'ignore' });
    await sleep(2000);
    const keys = [...Array(PLACES).keys()].map((i) => `fix--r${i}`);
    const order = keys.map((key) => ({ key, at: Math.random() * WINDOW_MS })).sort((a, b) => a.at - b.at);
    const opened = Date.now();
    for (const { key, at } of order) {
      await sleep(Math.max(0, opened + at - Date.now()));
      const deadline = Date.now() + 90_000;
      while (!gate.open(key)) {
        if (Date.now() > deadline) {
          const screens = spawnSync('sh', ['-c', `for p in $(tmux -S ${join(state, 'tmux', 'flume.sock')} list-panes -a -F '#{pane_id}'); do echo "== $p"; tmux -S ${join(state, 'tmux', 'flume.sock')} capture-pane -p -t $p | grep -v '^$' | tail -15; done`], { encoding: 'utf8' }).stdout;
          throw new Error(`${key}'s agent never reached its gate; events: ${JSON.stringify(eventsOf(repo, key).map((e) => e.event))}; requests: ${api.requests.length}; screens:\n${screens}`);
        }
        await sleep(20);
      }
    }
    const deadline = Date.now() + 180_000;
    for (const key of keys) {
      for (;;) {
        const events = eventsOf(repo, key);
        const started = events.findIndex((e) => e.event === 'stage-started' && e.stage === 'submission');
        const taken = started >= 0 ? events.slice(started).find((e) => e.event === 'prompt-taken') : undefined;
        const markFile = join(marks, key);
        if (taken && existsSync(markFile)) {
          const mark = Number(readFileSync(markFile, 'utf8'));
          const stage = recordOf(repo, key).stage;
          lastPrompt = stage.prompt;
          const at = (iso) => Date.parse(iso) - mark;
          rows.push({
            delivered: at(events.find((e) => e.event === 'mark-delivered').at),
            stopped: at(events.find((e, index) => e.event === 'agent-stopped' && index < started)?.at ?? events[started].at),
            started: at(events[started].at),
            spawned: at(stage.agent.startedAt),
            ready: at(stage.lastSentAt),
            // The program's own stamp on the prompt's line: when it took the prompt in.
            line: at(readFileSync(stage.agent.transcriptPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.type === 'user' && typeof l.message?.content === 'string').timestamp),
            taken: at(taken.at),
            sends: taken.sends,
          });
          break;
        }
        if (Date.now() > deadline) throw new Error(`${key}'s submission prompt was never taken: ${JSON.stringify(events.map((e) => e.event))}`);
        await sleep(200);
      }
    }
  } finally {
    if (watcher && watcher.exitCode === null) {
      const exited = new Promise((done) => watcher.once('exit', done));
      watcher.kill('SIGTERM');
      await Promise.race([exited, sleep(60_000)]);
    }
    spawnSync('tmux', ['-S', join(state, 'tmux', 'flume.sock'), 'kill-server']);
    await sleep(1000);
    claude.cleanup();
  }
  return rows;
}

/**
 * The program's own start, no flume: the real Claude Code started in a tmux pane (as flume starts
 * it), its screen looked at every 50 ms until the input box shows and until its footer's second
 * render (`← for agents`, when it takes keys: what flume waits for); then the submission prompt of
 * the round before pasted, Enter pressed 300 ms later (as flume does), and the time from that Enter
 * until its `user` line is in the transcript.
 */
async function ownStart(api) {
  const claude = makeClaudeEnv({ baseUrl: api.url });
  const cwd = join(claude.root, 'repo');
  mkdirSync(cwd);
  spawnSync('git', ['init', '-q'], { cwd });
  claude.trust(cwd);
  const spawned = Date.now();
  const p = await pane.startClaudePane(claude, cwd);
  try {
    let box;
    for (;;) {
      const screen = await p.tmux.capture().catch(() => '');
      if (box === undefined && pane.hasInputBox(screen)) box = Date.now() - spawned;
      if (pane.isReady(screen)) break;
      if (Date.now() - spawned > 60_000) throw new Error(`the real program never showed its input box:\n${screen}`);
      await sleep(50);
    }
    const ready = Date.now() - spawned;
    // The submission prompt flume sent in the round before, pasted as flume pastes a multi-line prompt.
    await p.tmux.paste(lastPrompt);
    await sleep(300);
    const enter = Date.now();
    await p.tmux.keys('Enter');
    let line;
    for (;;) {
      line = claude.readTranscript(p.sessionId).find((l) => l.type === 'user' && typeof l.message?.content === 'string' && l.message.content.includes(lastPrompt.slice(0, 40)));
      if (line) break;
      if (Date.now() - enter > 20_000) throw new Error('the prompt never reached the transcript');
      await sleep(20);
    }
    const written = Date.now() - enter;
    // The program's own stamp on the line, against the Enter: where in between it stamps it.
    const stamp = Date.parse(line.timestamp) - enter;
    // Hung up as flume ends a delivered stage's agent (its pane closed), mid-reply: until it is gone.
    const hangUp = Date.now();
    await pane.stopClaudePane(p, 10_000);
    return { box, ready, written, stamp, exit: Date.now() - hangUp };
  } finally {
    await pane.stopClaudePane(p);
    claude.cleanup();
  }
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (v) => `${Math.round(v)} ms`;
const stats = (values) => `median ${ms(median(values))}, p90 ${ms(percentile(values, 90))}, max ${ms(Math.max(...values))}`;

const api = await startMessagesApi({
  script: (request) => {
    const first = opening(request.body);
    const results = request.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result').length;
    // A submission stage's agent, and the program alone (given the same prompt).
    if (first.includes('Submit the branch')) return 'Submitting.';
    // The Bash tool's own limit is 2 minutes unless the call asks for more: a gate may wait longer.
    return results === 0 ? toolUse('Bash', { command: api.code, description: 'Commit the work', timeout: 600_000 }, { before: 'Working.' }) : 'Committed.';
  },
});

/** The submission prompt flume sent last: what the program alone is given. */
let lastPrompt;
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const rows = [];
const starts = [];
const loads = [load()];
try {
  for (let round = 0; round < ROUNDS; round++) {
    rows.push(...(await flumeRound(api)));
    for (let i = 0; i < STARTS; i++) starts.push(await ownStart(api));
    loads.push(load());
  }
} finally {
  await api.close();
}

const col = (key) => rows.map((r) => r[key]);
const diff = (a, b) => rows.map((r) => r[b] - r[a]);
console.log(`the real Claude Code (${rows.length} deliveries, ${ROUNDS} rounds of ${PLACES} places, commits at random moments within ${WINDOW_MS} ms; load average ${loads.join(' → ')}):`);
console.log(`  commit → prompt-taken (the next stage's prompt in its transcript): ${stats(col('taken'))} (limit: median 1000 ms)`);
console.log(`  commit → mark-delivered: ${stats(col('delivered'))}`);
console.log(`  commit → the old agent stopped (agent-stopped): ${stats(col('stopped'))}`);
console.log(`  commit → stage-started: ${stats(col('started'))}`);
console.log(`    of it, mark-delivered → agent-stopped (the old program hung up and gone): ${stats(diff('delivered', 'stopped'))}`);
console.log(`  commit → the new agent spawned (its handle's startedAt): ${stats(col('spawned'))}`);
console.log(`  commit → its input box ready as flume saw it (lastSentAt, before typing): ${stats(col('ready'))}`);
console.log('  split:');
console.log(`    flume, commit → spawned: ${stats(col('spawned'))}`);
console.log(`    spawned → input box ready (the program's start, and flume's wait for its footer): ${stats(diff('spawned', 'ready'))}`);
console.log(`    ready → prompt-taken (flume types, waits, Enter; the program writes its line; flume reads it): ${stats(diff('ready', 'taken'))}`);
console.log(`    of it, ready → the prompt's line stamped by the program (flume pastes, waits 300 ms, Enter; the program takes it): ${stats(diff('ready', 'line'))}
    of it, the line stamped → prompt-taken (the program writes the line; flume sees it and records it): ${stats(diff('line', 'taken'))}
    sends per prompt: ${[...new Set(col('sends'))].join(', ')}`);
console.log(`the program alone (${starts.length} starts, no flume, screen polled every 50 ms):`);
console.log(`  spawn → input box drawn: ${stats(starts.map((s) => s.box))}`);
console.log(`  spawn → footer's second render (takes keys): ${stats(starts.map((s) => s.ready))}`);
console.log(`  Enter → its user line in the transcript: ${stats(starts.map((s) => s.written))}`);
console.log(`  Enter → the program's stamp on that line: ${stats(starts.map((s) => s.stamp))}`);
console.log(`  pane closed (SIGHUP) → its process gone: ${stats(starts.map((s) => s.exit))}`);
if (process.env.VERBOSE) {
  for (const row of rows) console.log(`    ${JSON.stringify(row)}`);
  for (const s of starts) console.log(`    start ${JSON.stringify(s)}`);
}
