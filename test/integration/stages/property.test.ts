import { describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { isAncestor, repoFor, running, tip, type StageRepo } from './helpers.js';

// Issue 9: a property test of the supervisor. Random interleavings of deliveries, kills of agents
// and of the supervisor, tmux server restarts and commands (tell, stop, retry, drop), over several
// places at once; after every step no line of `status --json` claims what the agent's process, its
// pane, its transcript or git disagree with. Each run is seeded; a failure names its seed and step,
// and FLUME_PROPERTY_SEED=<seed> replays that run alone.

const PLACES = 3;
const STEPS = 24;
/** A run stops taking steps after this long, so the file stays within about two minutes (FLUME_PROPERTY_BUDGET_MS for longer runs). */
const RUN_BUDGET_MS = Number(process.env.FLUME_PROPERTY_BUDGET_MS ?? 75_000);
const SEEDS = process.env.FLUME_PROPERTY_SEED ? [Number(process.env.FLUME_PROPERTY_SEED)] : [11, 23, 37];

/** mulberry32: a small seeded generator, so a run replays from its seed. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Step = 'deliver' | 'kill-agent' | 'kill-supervisor' | 'restart-tmux' | 'tell' | 'stop' | 'retry' | 'drop' | 'launch';
const WEIGHTS: Array<[Step, number]> = [
  ['deliver', 5],
  ['kill-agent', 2],
  ['kill-supervisor', 1],
  ['restart-tmux', 1],
  ['tell', 2],
  ['stop', 1],
  ['retry', 2],
  ['drop', 1],
  ['launch', 1],
];

describe.concurrent('the supervisor under random steps', { timeout: 240_000 }, () => {
  for (const seed of SEEDS) {
    it(`status never claims what process, pane, transcript or git deny (seed ${seed})`, async ({ expect, onTestFinished }) => {
      const random = generator(seed);
      const pick = <T,>(items: T[]): T => items[Math.floor(random() * items.length)];
      const t = repoFor({ onTestFinished }, {}, { limits: { promptTimeout: '5s', startTimeout: '20s' } });
      // Each agent's work waits for the test to open its place's gate, then commits (code) or lands
      // (submission), and removes the gate so a later attempt waits again.
      const gates = join(t.configDir, 'gates');
      const deliver = t.bin(
        'deliver.sh',
        [
          `gate="${gates}/deliver-$(basename "$PWD")"`,
          'n=0; while [ ! -e "$gate" ] && [ $n -lt 3000 ]; do sleep 0.1; n=$((n + 1)); done',
          '[ -e "$gate" ] || exit 1',
          'rm -f "$gate"',
          'if [ "$1" = land ]; then ' + t.land + '; else ' + t.commit + '; fi',
        ].join('\n'),
      );
      t.script({
        onPrompt: [
          { match: 'Make the change the brief asks for', actions: [{ say: 'Working.' }, { run: [deliver, 'commit'] }, { say: 'Committed.' }] },
          { match: 'Submit the branch for landing', actions: [{ say: 'Submitting.' }, { run: [deliver, 'land'] }, { say: 'Landed.' }] },
          { actions: [{ say: 'Noted.' }] },
        ],
      });
      const socket = join(t.state, 'tmux', 'flume.sock');
      let made = 0;
      const names: string[] = [];
      const launch = async () => {
        const name = `p${made++}`;
        const result = await t.flume(['launch', '--kind', 'fix', '--name', name, '--brief', `Work ${name}.`, '--no-watch', '--json']);
        if (result.code === 0) names.push(name);
        return `launch ${name}: ${result.code}`;
      };
      const log: string[] = [];
      const launched = Date.now();
      // One after another, so the panes' ids (and what a seed replays) do not depend on timing.
      for (let i = 0; i < PLACES; i++) await launch();
      log.push(`launched in ${Date.now() - launched} ms`);
      let watch = t.watch();
      await t.afterPasses(1);

      const started = Date.now();
      const fail = (step: number, what: string) => {
        throw new Error(`seed ${seed}, step ${step}: ${what}\nsteps:\n${log.join('\n')}\nreplay: FLUME_PROPERTY_SEED=${seed}`);
      };
      for (let step = 1; step <= STEPS && Date.now() - started < RUN_BUDGET_MS; step++) {
        const stepStart = Date.now();
        const passNote = passNoteOf(t.state);
        const live = names.filter((name) => t.record(`fix--${name}`)).sort();
        const kind = pickWeighted(random, live.length ? WEIGHTS : [['launch', 1]]);
        const name = live.length ? pick(live) : '';
        const id = `fix/${name}`;
        const record = name ? t.record(`fix--${name}`) : undefined;
        let note = '';
        switch (kind) {
          case 'deliver':
            execFileSync('sh', ['-c', `mkdir -p "${gates}" && touch "${gates}/deliver-fix--${name}"`]);
            break;
          case 'kill-agent': {
            const pid = record?.stage?.agent?.pid;
            if (pid && running(pid)) process.kill(pid, 'SIGKILL');
            note = `pid ${pid}`;
            break;
          }
          case 'kill-supervisor':
            if (watch.child.pid) process.kill(watch.child.pid, 'SIGKILL');
            await watch.exited;
            watch = t.watch();
            break;
          case 'restart-tmux':
            // Every agent dies with the server; the next one started gets pane ids from %0 again.
            try {
              execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' });
            } catch {
              // no server was running
            }
            break;
          case 'tell':
            note = String((await t.flume(['tell', id, `Note ${step}.`])).code);
            break;
          case 'stop':
            note = String((await t.flume(['stop', id, '--force'])).code);
            break;
          case 'retry':
            note = String((await t.flume(['retry', id])).code);
            break;
          case 'drop':
            note = String((await t.flume(['drop', id, '--reason', 'property test'])).code);
            break;
          case 'launch':
            note = await launch();
            break;
        }
        const acted = Date.now() - stepStart;
        log.push(`${step}. ${kind}${name && kind !== 'launch' ? ` ${id}` : ''}${note ? ` (${note})` : ''}`);
        // Judged twice: at once, before a pass records what the step did (status alone must not lie
        // meanwhile), and after the supervisor's next pass.
        const now = await violations(t, names, socket, log);
        if (now.length) fail(step, `at once: ${now.join('\n')}`);
        await nextPass(t.state, passNote, 60_000);
        const later = await violations(t, names, socket, log);
        if (later.length) fail(step, `after a pass: ${later.join('\n')}`);
        log[log.length - 1] += ` [${acted} ms acting, ${Date.now() - stepStart} ms in all]`;
      }
      if (process.env.FLUME_PROPERTY_LOG) console.log(`seed ${seed}:\n${log.join('\n')}`);
      expect(log.length).toBeGreaterThan(5);
    });
  }
});

/** The supervisor's note of its last pass, as written; '' before any. */
function passNoteOf(state: string): string {
  try {
    return readFileSync(join(state, 'watch.json'), 'utf8');
  } catch {
    return '';
  }
}

/**
 * Waits until the supervisor writes a note other than `before`: a pass ended since. Not a count of
 * passes, since a supervisor started after one was killed counts its own from zero.
 */
async function nextPass(state: string, before: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (passNoteOf(state) === before) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a supervisor pass');
    await sleep(50);
  }
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

/**
 * What one `status --json` claims that the facts deny. Facts are read before and after the status
 * call and a claim is judged only against facts that held on both sides of it (a pid seen gone stays
 * gone; a pane held by the same program before and after held it during), so no race reads as a lie.
 */
async function violations(t: StageRepo, names: string[], socket: string, seenLog: string[]): Promise<string[]> {
  const records = new Map(names.map((name) => [name, t.record(`fix--${name}`)]));
  const deadBefore = new Set<number>();
  for (const record of records.values()) {
    const pid = record?.stage?.agent?.pid;
    if (pid && !runningNotZombie(pid)) deadBefore.add(pid);
  }
  const panesBefore = panes(socket);
  const present = names.filter((name) => {
    const record = records.get(name);
    return record && record.phase === 'made' && existsSync(record.path);
  });

  const result = await t.flume(['status', '--repo', t.repo, '--json']);
  if (result.code !== 0) return [`status failed: ${result.stdout}${result.stderr}`];
  const places = JSON.parse(result.stdout).places as any[];
  seenLog.push(places.map((p) => `${p.id} ${p.stage?.name}:${p.stage?.state}/${p.stage?.agent?.state ?? '-'}${p.stage?.agent?.pane ? `@${p.stage.agent.pane}` : ''}`).join(', '));
  const panesAfter = panes(socket);
  const problems: string[] = [];
  const pidOfSession = new Map<string, number>();
  for (const record of [...records.values(), ...names.map((name) => t.record(`fix--${name}`))]) {
    const agent = record?.stage?.agent;
    if (agent?.pid) pidOfSession.set(agent.sessionId, agent.pid);
  }

  for (const name of present) {
    const after = t.record(`fix--${name}`);
    if (after && after.phase === 'made' && existsSync(after.path) && !places.some((p) => p.id === `fix/${name}`)) {
      problems.push(`fix/${name}: its worktree and record exist but status lists no such place`);
    }
  }
  for (const place of places) {
    const stage = place.stage;
    const agent = stage?.agent;
    const pid = agent ? pidOfSession.get(agent.sessionId) : undefined;
    const claim = `${place.id}: status says stage ${stage?.name} ${stage?.state}, agent ${agent?.state}${agent?.pane ? ` in ${agent.pane}` : ''}`;
    if (pid !== undefined && deadBefore.has(pid)) {
      if (['working', 'idle', 'asking', 'starting'].includes(agent.state)) problems.push(`${claim}, though its pid ${pid} was gone before status read it`);
      if (stage.state === 'working') problems.push(`${claim}: working, though its agent's pid ${pid} was gone before status read it`);
    }
    if (agent?.pane && pid !== undefined) {
      const before = panesBefore.get(agent.pane);
      const after = panesAfter.get(agent.pane);
      if (before !== undefined && before === after && before !== pid) problems.push(`${claim}, but that pane holds pid ${before}, not its agent's ${pid}`);
      if (before === undefined && after === undefined) problems.push(`${claim}, but no such pane is there`);
    }
    if (stage?.state === 'delivered' && stage.delivered) {
      const branch = `fix/${place.id.split('/')[1]}`;
      const head = tip(t.repo, branch);
      const sha = /commit ([0-9a-f]{7,40})/.exec(stage.delivered.what)?.[1];
      if (stage.name === 'code' && sha && head && !isAncestor(t.repo, sha, branch)) problems.push(`${claim} (${stage.delivered.what}), but ${sha} is not on ${branch}`);
      if (stage.name === 'code' && !sha && head && aheadOfMain(t.repo, branch) === '') problems.push(`${claim} (${stage.delivered.what}), but git has no commit for it`);
      if (stage.name === 'submission' && head && !isAncestor(t.repo, head, 'main')) problems.push(`${claim} (${stage.delivered.what}), but ${branch} is not on main`);
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

