import { describe, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isAncestor, promptsOf, repoFor, running, tip, type StageRepo } from './helpers.js';
import { sameProcess } from '../../../core/support/process.js';
import { prng } from '../../helpers/prng.js';

// A property test of the supervisor. Random interleavings of deliveries, kills of agents
// and of the supervisor, tmux server restarts and commands (tell, stop, retry, drop, go-on, stage,
// launch), over several places of two kinds at once; after every step no line of status claims what
// the agent's process, its pane, its transcript, git or the supervisor's lock disagree with. Each run
// is seeded; a failure names its seed and step, and FLUME_PROPERTY_SEED=<seed> replays that run alone.
//
// What a step costs is what it does, not what the test waits: status is read through one long-lived
// reader per run (the built status() the CLI prints, without a node start per reading; the CLI itself
// every few steps), and the judge after a step waits for a supervisor pass that began after the step
// (two new pass notes, or a note of a new supervisor), under a 1 s poll.

/** Places launched at the start: fix places (code, then submission) and a question (one session). */
const START: Array<[kind: string, name: string]> = [
  ['fix', 'p0'],
  ['fix', 'p1'],
  ['question', 'q0'],
];
const STEPS = 30;
/** Taken whatever the budget: on a host so loaded that a step takes 20 s, a run still judges these. */
const MIN_STEPS = 3;
/** A run stops taking steps (past MIN_STEPS) after this long, so the file keeps to about a minute beside the rest of the suite (FLUME_PROPERTY_BUDGET_MS for longer runs: a nightly or a hunt for a seed). */
const RUN_BUDGET_MS = Number(process.env.FLUME_PROPERTY_BUDGET_MS ?? 25_000);
/**
 * Seeds whose first three steps between them kill agents, restart the tmux server, kill the
 * supervisor and deliver: a loaded host that allows a run few steps still tries the sharp edges.
 */
const SEEDS = process.env.FLUME_PROPERTY_SEED ? [Number(process.env.FLUME_PROPERTY_SEED)] : [12, 19, 21];
/** Every this many steps, the judge after the pass reads the CLI's `status --json` rather than the reader. */
const CLI_EVERY = 6;
const STAGES: Record<string, string[]> = { fix: ['code', 'submission'], question: ['session'] };
const READER = fileURLToPath(new URL('../../helpers/status-reader.mjs', import.meta.url));

type Step = 'deliver' | 'kill-agent' | 'kill-supervisor' | 'restart-tmux' | 'tell' | 'stop' | 'retry' | 'drop' | 'go-on' | 'stage' | 'launch';
const WEIGHTS: Array<[Step, number]> = [
  ['deliver', 5],
  ['kill-agent', 2],
  ['kill-supervisor', 1],
  ['restart-tmux', 1],
  ['tell', 2],
  ['stop', 1],
  ['retry', 2],
  ['drop', 1],
  ['go-on', 1],
  ['stage', 1],
  ['launch', 1],
];

describe.concurrent('the supervisor under random steps', { timeout: 360_000 }, () => {
  for (const seed of SEEDS) {
    it(`status never claims what process, pane, transcript, git or the lock deny (seed ${seed})`, async ({ expect, onTestFinished }) => {
      const random = prng(seed);
      const pick = <T,>(items: T[]): T => items[Math.floor(random() * items.length)];
      const t = repoFor({ onTestFinished }, {}, { limits: { promptTimeout: '5s', startTimeout: '20s' } });
      // Each agent's work waits for the test to open its place's gate, then commits (code), lands
      // (submission) or writes a conclusion (question), and removes the gate so a later attempt waits again.
      const gates = join(t.configDir, 'gates');
      const deliver = t.bin(
        'deliver.sh',
        [
          `gate="${gates}/deliver-$(basename "$PWD")"`,
          'n=0; while [ ! -e "$gate" ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done',
          '[ -e "$gate" ] || exit 1',
          'rm -f "$gate"',
          'case "$1" in land) ' + t.land + ' ;; conclude) echo "Concluded $(date +%s%N)." > conclusion.md ;; *) ' + t.commit + ' ;; esac',
        ].join('\n'),
      );
      t.script({
        onPrompt: [
          { match: 'Make the change the brief asks for', actions: [{ say: 'Working.' }, { run: [deliver, 'commit'] }, { say: 'Committed.' }] },
          { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { run: [deliver, 'land'] }, { say: 'Landed.' }] },
          { match: 'Work the question in this place', actions: [{ say: 'Thinking.' }, { run: [deliver, 'conclude'] }, { say: 'Concluded.' }] },
          { actions: [{ say: 'Noted.' }] },
        ],
      });
      const socket = join(t.state, 'tmux', 'flume.sock');
      const reader = statusReader(t);
      onTestFinished(() => reader.close());
      const keys: string[] = [];
      let made = 0;
      const launch = async (kind: string, name: string) => {
        const result = await t.flume(['launch', '--kind', kind, '--name', name, '--brief', `Work ${name}.`, '--no-watch', '--json']);
        if (result.code === 0) keys.push(`${kind}--${name}`);
        return `launch ${kind}/${name}: ${result.code}`;
      };
      const log: string[] = [];
      const launched = Date.now();
      // One after another, so the panes' ids (and what a seed replays) do not depend on timing. Once
      // there is a place, the supervisor and the reader load the config (their first reading costs
      // most) while the others launch.
      log.push(await launch(...START[0]));
      let watch = t.watch({}, { poll: '1s' });
      const warm = reader.read().catch(() => undefined);
      for (const [kind, name] of START.slice(1)) log.push(await launch(kind, name));
      await warm;
      let supervisorCpu = 0;
      await t.afterPasses(1);
      log.push(`launched in ${Date.now() - launched} ms`);

      const started = Date.now();
      const fail = (step: number, what: string) => {
        throw new Error(`seed ${seed}, step ${step}: ${what}\nsteps:\n${log.join('\n')}\nreplay: FLUME_PROPERTY_SEED=${seed}`);
      };
      let step = 0;
      const judged: Judged = { pid: 0, pane: 0, transcript: 0, git: 0, supervisor: 0 };
      while (step < STEPS && (step < MIN_STEPS || Date.now() - started < RUN_BUDGET_MS)) {
        step++;
        const stepStart = Date.now();
        const live = keys.filter((key) => t.record(key)).sort();
        const kind = pickWeighted(random, live.length ? WEIGHTS : [['launch', 1]]);
        const key = live.length ? pick(live) : '';
        const id = key.replace('--', '/');
        const record = key ? t.record(key) : undefined;
        let note = '';
        switch (kind) {
          case 'deliver':
            execFileSync('sh', ['-c', `mkdir -p "${gates}" && touch "${gates}/deliver-${key}"`]);
            break;
          case 'kill-agent': {
            const pid = record?.stage?.agent?.pid;
            // An agent that ended long ago left its pid in the record; by now it may be another test's program.
            if (pid && running(pid) && sameProcess(pid, record?.stage?.agent?.pidStart)) process.kill(pid, 'SIGKILL');
            // Judged once the kernel has ended it: a pid still running is no fact against status.
            if (pid) await gone([pid]);
            note = `pid ${pid}`;
            break;
          }
          case 'kill-supervisor':
            supervisorCpu += cpuSeconds(watch.child.pid!);
            if (watch.child.pid) process.kill(watch.child.pid, 'SIGKILL');
            await watch.exited;
            watch = t.watch({}, { poll: '1s' });
            break;
          case 'restart-tmux':
            // Every agent dies with the server; the next one started gets pane ids from %0 again.
            try {
              execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' });
            } catch {
              // no server was running
            }
            // The agents end as their ptys close: judged once they have.
            await gone(live.map((k) => t.record(k)?.stage?.agent?.pid).filter((pid): pid is number => Boolean(pid)));
            break;
          case 'tell':
            note = outcome(await t.flume(['tell', id, `Note ${step}.`]));
            break;
          case 'stop':
            note = outcome(await t.flume(['stop', id, '--force']));
            break;
          case 'retry':
            note = outcome(await t.flume(['retry', id]));
            break;
          case 'drop':
            note = outcome(await t.flume(['drop', id, '--reason', 'property test']));
            break;
          case 'go-on':
            // A question's: runs its session again; a fix refuses it and must change nothing.
            note = outcome(await t.flume(['go-on', id, '--note', `Look again ${step}.`]));
            break;
          case 'stage': {
            const name = pick(STAGES[key.split('--')[0]]);
            note = `${name}: ${outcome(await t.flume(['stage', id, name]))}`;
            break;
          }
          case 'launch': {
            const kindOf = pick(['fix', 'question']);
            note = await launch(kindOf, `${kindOf[0]}${made++ + START.length}`);
            break;
          }
        }
        // The note as it stood once the step had acted: the judge after the pass waits for one that began later.
        const passBefore = noteOf(t.state);
        const acted = Date.now() - stepStart;
        log.push(`${step}. ${kind}${key && kind !== 'launch' ? ` ${id}` : ''}${note ? ` (${note})` : ''}`);
        // Judged twice: at once, before a pass records what the step did (status alone must not lie
        // meanwhile), and after a pass that began after the step.
        const now = await violations(t, keys, socket, log, reader.read, judged);
        if (now.length) fail(step, `at once: ${now.join('\n')}`);
        const first = Date.now();
        await passAfter(t.state, passBefore, watch.child.pid!, 60_000);
        const passed = Date.now();
        const cli = step % CLI_EVERY === 0;
        const later = await violations(t, keys, socket, log, cli ? () => cliStatus(t) : reader.read, judged);
        if (later.length) fail(step, `after a pass${cli ? ' (the CLI)' : ''}: ${later.join('\n')}`);
        log.push(`   [${acted} ms acting, ${first - stepStart - acted} judging, ${passed - first} for a pass, ${Date.now() - passed} judging${cli ? ' (CLI)' : ''}; ${Date.now() - stepStart} ms in all]`);
      }
      log.push(`claims judged against facts: ${JSON.stringify(judged)}`);
      log.push(`${step} steps in ${Date.now() - started} ms; CPU: supervisor ${(supervisorCpu + cpuSeconds(watch.child.pid!)).toFixed(1)} s, status reader ${cpuSeconds(reader.pid).toFixed(1)} s; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
      if (process.env.FLUME_PROPERTY_LOG) console.log(`seed ${seed}:\n${log.join('\n')}`);
      // Every kind of claim met a fact it could have contradicted at least once, or the run proved little.
      expect(judged.pid + judged.pane, log.join('\n')).toBeGreaterThan(0);
      expect(judged.transcript, log.join('\n')).toBeGreaterThan(0);
    });
  }
});

/** A long-lived status reader (test/helpers/status-reader.mjs) with the run's environment. */
function statusReader(t: StageRepo): { read: () => Promise<any>; close: () => void; pid: number } {
  const child = spawn(process.execPath, [READER], { cwd: t.repo, env: t.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => waiting.shift()?.(line));
  child.on('exit', () => {
    for (const done of waiting.splice(0)) done(JSON.stringify({ error: `the status reader exited: ${stderr}` }));
  });
  return {
    async read() {
      const line = await new Promise<string>((done) => {
        waiting.push(done);
        child.stdin!.write(JSON.stringify({ repo: t.repo }) + '\n');
      });
      const answer = JSON.parse(line);
      if (answer.error) throw new Error(`status failed: ${answer.error}`);
      return answer.report;
    },
    close: () => child.kill('SIGKILL'),
    pid: child.pid!,
  };
}

/** A command's exit code, and the code of the error it refused with. */
function outcome(result: { code: number; stdout: string; stderr: string }): string {
  return result.code === 0 ? '0' : `${result.code} ${/[A-Z][A-Z_]{3,}/.exec(result.stderr + result.stdout)?.[0] ?? ''}`.trim();
}

/** The CLI's `status --repo --json`, as an operator reads it. */
async function cliStatus(t: StageRepo): Promise<any> {
  const result = await t.flume(['status', '--repo', t.repo, '--json']);
  if (result.code !== 0) throw new Error(`status failed: ${result.stdout}${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The supervisor's note of its last pass (`<state>/watch.json`); {} before any. */
function noteOf(state: string): { pid?: number; passes?: number } {
  try {
    return JSON.parse(readFileSync(join(state, 'watch.json'), 'utf8'));
  } catch {
    return {};
  }
}

/**
 * Waits for a pass that began after `before` was read: two more passes of the same supervisor (the
 * first may have been under way), or any pass of the one now running when `before` was another's.
 */
async function passAfter(state: string, before: { pid?: number; passes?: number }, pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const note = noteOf(state);
    if (note.pid === pid && (note.pid !== before.pid || (note.passes ?? 0) >= (before.passes ?? 0) + 2)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for a supervisor pass (note ${JSON.stringify(note)}, before ${JSON.stringify(before)}, supervisor ${pid})`);
    await sleep(25);
  }
}

/** The CPU time (user and system) a process has used so far, s; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Waits (at most 5 s) until none of `pids` runs. */
async function gone(pids: number[]): Promise<void> {
  const deadline = Date.now() + 5000;
  while (pids.some(runningNotZombie) && Date.now() < deadline) await sleep(10);
}

/** True while the process runs; a zombie its parent has not reaped yet has ended. */
function runningNotZombie(pid: number): boolean {
  if (!running(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function pickWeighted(random: () => number, weights: Array<[Step, number]>): Step {
  let left = random() * weights.reduce((sum, [, w]) => sum + w, 0);
  for (const [step, weight] of weights) {
    left -= weight;
    if (left < 0) return step;
  }
  return weights[weights.length - 1][0];
}

/** The panes of the server, live or dead (kept by remain-on-exit): id → the pid of its program. */
function panes(socket: string): Map<string, number> {
  try {
    const text = execFileSync('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_id} #{pane_pid}'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return new Map(
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '))
        .map(([pane, pid]) => [pane, Number(pid)] as [string, number]),
    );
  } catch {
    return new Map();
  }
}

/** The pid holding the supervisor's lock, and whether it runs; undefined when no lock is held. */
function lockPid(state: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(state, 'watch.lock'), 'utf8').split(' ')[0]);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What one status reading claims that the facts deny. Facts are read before and after the reading
 * and a claim is judged only against facts that held on both sides of it (a pid seen gone stays
 * gone; a pane held by the same program before and after held it during; a transcript only grows),
 * so no race reads as a lie.
 */
/** How many claims met a fact that could have denied them, by kind of fact. */
type Judged = Record<'pid' | 'pane' | 'transcript' | 'git' | 'supervisor', number>;

async function violations(t: StageRepo, keys: string[], socket: string, seenLog: string[], read: () => Promise<any>, judged: Judged): Promise<string[]> {
  const records = new Map(keys.map((key) => [key, t.record(key)]));
  const deadBefore = new Set<number>();
  for (const record of records.values()) {
    const pid = record?.stage?.agent?.pid;
    if (pid && !runningNotZombie(pid)) deadBefore.add(pid);
  }
  const panesBefore = panes(socket);
  const present = keys.filter((key) => {
    const record = records.get(key);
    return record && record.phase === 'made' && existsSync(record.path);
  });
  const lockBefore = lockPid(t.state);
  const lockAliveBefore = lockBefore !== undefined && runningNotZombie(lockBefore);

  let report: any;
  try {
    report = await read();
  } catch (error) {
    return [(error as Error).message];
  }
  const places = report.places as any[];
  seenLog.push(
    places
      .map((p) => `${p.id} ${p.stage?.name}:${p.stage?.state}/${p.stage?.delivery}/${p.stage?.agent?.state ?? '-'}${p.stage?.agent?.pane ? `@${p.stage.agent.pane}` : ''}`)
      .join(', ') + ` | supervisor ${report.supervisor?.running ? report.supervisor.pid : 'none'}`,
  );
  const panesAfter = panes(socket);
  const lockAfter = lockPid(t.state);
  const lockAliveAfter = lockAfter !== undefined && runningNotZombie(lockAfter);
  const recordsAfter = new Map(keys.map((key) => [key, t.record(key)]));
  const problems: string[] = [];
  // Which pid and prompt belong to a session: from the records read on either side of the reading.
  const sessions = new Map<string, { pid?: number; prompt?: string }>();
  for (const record of [...records.values(), ...recordsAfter.values()]) {
    const agent = record?.stage?.agent;
    if (agent?.sessionId) sessions.set(agent.sessionId, { pid: agent.pid, prompt: record.stage.prompt });
  }

  for (const key of present) {
    const after = recordsAfter.get(key);
    if (after && after.phase === 'made' && existsSync(after.path) && !places.some((p) => p.id === key.replace('--', '/'))) {
      problems.push(`${key.replace('--', '/')}: its worktree and record exist but status lists no such place`);
    }
  }
  // The supervisor: running names a live lock holder; none running while one held the lock throughout is a lie.
  const supervisor = report.supervisor;
  // (Nothing in this test ends a supervisor during a reading: one gone after it and not the lock's
  // live holder before it never ran while status read.)
  if (supervisor) judged.supervisor++;
  if (supervisor?.running && supervisor.pid !== undefined && !runningNotZombie(supervisor.pid) && !(supervisor.pid === lockBefore && lockAliveBefore)) {
    problems.push(`status says supervisor ${supervisor.pid} runs, but that pid ran neither before nor after the reading`);
  }
  if (supervisor && !supervisor.running && lockAliveBefore && lockAliveAfter && lockBefore === lockAfter) {
    problems.push(`status says no supervisor runs, but ${lockBefore} held its lock, alive, before and after the reading`);
  }
  for (const place of places) {
    const stage = place.stage;
    const agent = stage?.agent;
    const session = agent ? sessions.get(agent.sessionId) : undefined;
    const pid = session?.pid;
    const claim = `${place.id}: status says stage ${stage?.name} ${stage?.state} (prompt ${stage?.delivery}), agent ${agent?.state}${agent?.pane ? ` in ${agent.pane}` : ''}`;
    // Status's own reading: an agent it reads exited is never working in the same reading.
    if (stage?.state === 'working' && agent && (agent.state === 'exited' || agent.state === 'not-up')) problems.push(`${claim}: working, in the reading that sees its agent ${agent.state}`);
    if (pid !== undefined && deadBefore.has(pid)) {
      judged.pid++;
      if (['working', 'idle', 'asking', 'starting'].includes(agent.state)) problems.push(`${claim}, though its pid ${pid} was gone before status read it`);
      if (stage.state === 'working') problems.push(`${claim}: working, though its agent's pid ${pid} was gone before status read it`);
    }
    if (agent?.pane && pid !== undefined) {
      const before = panesBefore.get(agent.pane);
      const after = panesAfter.get(agent.pane);
      judged.pane++;
      if (before !== undefined && before === after && before !== pid) problems.push(`${claim}, but that pane holds pid ${before}, not its agent's ${pid}`);
      if (before === undefined && after === undefined) problems.push(`${claim}, but no such pane is there`);
    }
    // A prompt status calls taken is in the agent's transcript (which only grows): read after status.
    if (stage?.delivery === 'taken' && agent?.transcript && session?.prompt) {
      const prompts = promptsOf(agent.transcript);
      judged.transcript++;
      if (!prompts.includes(session.prompt)) problems.push(`${claim}, but its transcript holds ${prompts.length} prompt(s), none of them its stage's`);
    }
    if (stage?.state === 'delivered' && stage.delivered) {
      const branch = place.branch;
      const head = tip(t.repo, branch);
      judged.git++;
      const sha = /commit ([0-9a-f]{7,40})/.exec(stage.delivered.what)?.[1];
      if (stage.name === 'code' && sha && head && !isAncestor(t.repo, sha, branch)) problems.push(`${claim} (${stage.delivered.what}), but ${sha} is not on ${branch}`);
      if (stage.name === 'code' && !sha && head && aheadOfMain(t.repo, branch) === '') problems.push(`${claim} (${stage.delivered.what}), but git has no commit for it`);
      if (stage.name === 'submission' && head && !isAncestor(t.repo, head, 'main')) problems.push(`${claim} (${stage.delivered.what}), but ${branch} is not on main`);
      // A conclusion is not removed while its place stands (tidying removes the whole folder).
      if (stage.name === 'session' && existsSync(place.path) && !existsSync(join(place.path, 'conclusion.md'))) problems.push(`${claim} (${stage.delivered.what}), but ${place.path} has no conclusion.md`);
    }
  }
  return problems;
}

/** The commits on `branch` that main lacks, one a line; '' when none. */
function aheadOfMain(repo: string, branch: string): string {
  try {
    return execFileSync('git', ['log', '--format=%h', `main..${branch}`], { cwd: repo, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}
