/**
 * Shared by the stage tests: a repository whose agents are the scripted fake in real tmux (agentRepo),
 * the supervisor run as a real background `flume watch`, `status --json` polled while recording
 * what it showed, shell scripts the fake's `run` actions call, and counts of the agents that run.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import type { FakeScript } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, PROJECT } from '../../helpers/repo.js';
import { launchedRecord } from '../../helpers/result-schema.js';
import { HANG_MS } from '../../helpers/wait.js';

export { PROJECT };

/**
 * A stage test's time limit. The tests take 10–25 s each on an idle two-core host; the limit is
 * generous because they wait on real agents, and a host busy with other work slows every one.
 */
// Stage tests run concurrently, several files at once, each with its agents in real tmux: on a loaded
// machine a step that takes seconds alone can take a minute, so each test and each wait is patient.
export const LONG = 300_000;

/** A running `flume watch`: its output so far, and how to end it. */
export interface Watch {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (128 + signal number when killed by a signal). */
  exited: Promise<number>;
  stop(): Promise<void>;
}

/** A test's repository with its supervisors, ended together by `cleanup`. */
export interface StageRepo extends AgentRepo {
  /**
   * Starts `flume watch --poll 2s --linger 0` with the repository's environment plus `env`; `poll`
   * sets another slow poll (a test that waits on passes while nothing writes wants a short one).
   */
  watch(env?: Record<string, string>, options?: { poll?: string }): Watch;
  /** `flume launch --no-watch --json`; throws unless it succeeds; returns the place record. */
  launch(kind: string, name: string, brief: string): Promise<any>;
  /** The place as `status --repo --json` shows it now; undefined when status no longer lists it. */
  view(id: string): Promise<any | undefined>;
  /**
   * Polls status until `probe(place)` is truthy and returns that value; every place seen is pushed
   * onto `seen` when given. Throws after `timeoutMs`, naming what it waited for and what it saw last.
   */
  until<T>(id: string, probe: (place: any | undefined) => T, what: string, options?: { timeoutMs?: number; seen?: any[] }): Promise<NonNullable<T>>;
  /** The place's event log (`<git-common-dir>/flume/places/<key>.events.jsonl`), [] once it is gone. */
  events(key: string): Array<Record<string, any>>;
  /** The place's record file, undefined once it is gone. */
  record(key: string): any | undefined;
  /** Writes an executable shell script the fake's `run` actions can call; returns its path. */
  bin(name: string, body: string): string;
  /**
   * A script line that waits (at most a minute) until the test opens the gate `name`: an agent's
   * `run` paced by what the test has seen, so no reading depends on how loaded the host is.
   */
  gate(name: string): string;
  /** Opens the gate `name`. */
  open(name: string): void;
  /** A script that commits a line added to the file `$1` (default work.txt), once the gate `$2` (if named) opens. */
  commit: string;
  /** A script that lands the place's branch on main, once the gate `$1` (if named) opens. */
  land: string;
  /** The panes of the test's tmux server whose program still runs. */
  livePanes(): Array<{ pane: string; pid: number }>;
  /** How many passes the host's supervisor has finished (its note, `<state>/watch.json`); 0 before any. */
  passes(): number;
  /** How many times the supervisor's tidying judged a place whose work is over (from the same note). */
  judged(): number;
  /**
   * Waits until the supervisor finishes `n` more passes than it had when called: what a test that
   * asserts "nothing happened" waits on, never a fixed sleep.
   */
  afterPasses(n: number, timeoutMs?: number): Promise<void>;
  /**
   * What a test that asserts "nothing happened" waits on: `n` more passes than when called (so at
   * least `n - 1` passes read the place after the test's last look), and then a pass that ended with
   * no step under way. A pass starts its steps without waiting for them: a wrong step begun in the
   * last pass counted could still be working, its effect not yet written, when the test looks.
   */
  quiet(n?: number, timeoutMs?: number): Promise<void>;
  /** The session ids of the fake agents that got a prompt in the place (one transcript each). */
  sessions(placePath: string): string[];
}

/** Makes a repository for stage tests; `config` is merged into its flume config. */
export function stageRepo(script: FakeScript, config: Record<string, unknown> = {}): StageRepo {
  const own = agentRepo(script, config);
  // Stage tests run concurrently within a file, and many hold one flume command while others run
  // (a launch that holds its place while status reads it): in-process runs take turns per worker,
  // so here every run is a process of its own, as the tests were written for.
  const base = { ...own, flume: (args: string[], options: { process?: boolean } = {}) => own.flume(args, { process: true, ...options }) };
  const watches: Watch[] = [];
  const commonDir = join(base.repo, '.git');
  const socket = join(base.state, 'tmux', 'flume.sock');
  const view = async (id: string) => {
    const result = await base.flume(['status', '--repo', base.repo, '--json']);
    if (result.code !== 0) throw new Error(`status failed: ${result.stdout}${result.stderr}`);
    return (JSON.parse(result.stdout).places as any[]).find((place) => place.id === id);
  };
  const gate = (name: string) => {
    const file = join(base.configDir, 'gates', name);
    return `gate_waited=0; while [ ! -e "${file}" ] && [ $gate_waited -lt 1800 ]; do sleep 0.1; gate_waited=$((gate_waited + 1)); done`;
  };
  const bin = (name: string, body: string) => {
    const dir = join(base.configDir, 'bin');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\nset -e\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  return {
    ...base,
    commit: bin('commit.sh', `if [ -n "$2" ]; then ${gate('$2')}; fi\n${COMMIT}`),
    land: bin('land.sh', `if [ -n "$1" ]; then ${gate('$1')}; fi\n${LAND}`),
    watch(env = {}, options = {}) {
      const child = spawn(process.execPath, [FLUME_BIN, 'watch', '--poll', options.poll ?? '2s', '--linger', '0'], {
        cwd: base.repo,
        env: { ...base.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const exited = new Promise<number>((done) => child.on('exit', (code, signal) => done(code ?? 128 + (signal ? osConstants.signals[signal] : 0))));
      const watch: Watch = {
        child,
        output: () => output,
        exited,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const ended = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
          if (!ended) {
            child.kill('SIGKILL');
            await exited;
          }
        },
      };
      watches.push(watch);
      return watch;
    },
    async launch(kind, name, brief) {
      const result = await base.flume(['launch', '--kind', kind, '--name', name, '--brief', brief, '--no-watch', '--json']);
      if (result.code !== 0) throw new Error(`launch failed (${result.code}): ${result.stdout}${result.stderr}`);
      return launchedRecord(result.stdout);
    },
    view,
    async until(id, probe, what, options = {}) {
      // A hang guard, not an assertion (test/helpers/wait.ts).
      const deadline = Date.now() + Math.max(options.timeoutMs ?? 120_000, HANG_MS);
      const key = id.replace('/', '--');
      let last: any;
      let lastStamp = '';
      let lastRead = 0;
      for (;;) {
        // status --json costs a node process: read it when the place's files moved, else every 2 s.
        const stamp = changeStamp(commonDir, key);
        if (stamp !== lastStamp || Date.now() - lastRead >= 2000) {
          lastStamp = stamp;
          lastRead = Date.now();
          last = await view(id);
          options.seen?.push(last);
          const value = probe(last);
          if (value) return value as NonNullable<typeof value>;
        }
        if (Date.now() > deadline) {
          const logs = watches.map((w) => w.output()).join('\n---\n');
          throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last?.stage ?? last)}\nwatch said:\n${logs}`);
        }
        await sleep(100);
      }
    },
    events(key) {
      const file = join(commonDir, 'flume', 'places', `${key}.events.jsonl`);
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    },
    record(key) {
      const file = join(commonDir, 'flume', 'places', `${key}.json`);
      return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
    },
    bin,
    gate,
    open(name) {
      mkdirSync(join(base.configDir, 'gates'), { recursive: true });
      writeFileSync(join(base.configDir, 'gates', name), '');
    },
    livePanes() {
      let text = '';
      try {
        text = execFileSync('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_id} #{pane_dead} #{pane_pid}'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      } catch {
        return [];
      }
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '))
        .filter(([, dead, pid]) => dead === '0' && running(Number(pid)))
        .map(([pane, , pid]) => ({ pane, pid: Number(pid) }));
    },
    passes() {
      return passesIn(base.state);
    },
    judged() {
      return noteOf(base.state).judged ?? 0;
    },
    async afterPasses(n, timeoutMs = 120_000) {
      const start = noteOf(base.state);
      const deadline = Date.now() + timeoutMs;
      while (passesSince(start, noteOf(base.state)) < n) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} supervisor passes (last note: ${JSON.stringify(noteOf(base.state))}, from ${JSON.stringify(start)})`);
        await sleep(50);
      }
    },
    async quiet(n = 2, timeoutMs = 120_000) {
      const start = noteOf(base.state);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const note = noteOf(base.state);
        if (passesSince(start, note) >= n && note.steps === 0) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} supervisor passes and one with no step under way (last note: ${JSON.stringify(note)}; from ${JSON.stringify(start)})`);
        await sleep(50);
      }
    },
    sessions(placePath) {
      const dir = join(base.configDir, 'projects', placePath.replace(/[^a-zA-Z0-9]/g, '-'));
      if (!existsSync(dir)) return [];
      return readdirSync(dir).filter((name) => name.endsWith('.jsonl')).map((name) => name.slice(0, -'.jsonl'.length));
    },
    async cleanup() {
      await Promise.all(watches.map((watch) => watch.stop()));
      await base.cleanup();
    },
  };
}

/** A stage repository ended when its test ends, so tests of one file may run at once. */
export function repoFor(context: { onTestFinished: (fn: () => Promise<void>) => void }, script: FakeScript, config: Record<string, unknown> = {}): StageRepo {
  const repo = stageRepo(script, config);
  context.onTestFinished(() => repo.cleanup());
  return repo;
}

/** When the place's record, event log, branch or agent transcript last changed, as one string. */
function changeStamp(commonDir: string, key: string): string {
  const dir = join(commonDir, 'flume', 'places');
  const paths = [join(dir, `${key}.json`), join(dir, `${key}.events.jsonl`)];
  try {
    const record = JSON.parse(readFileSync(paths[0], 'utf8'));
    paths.push(join(commonDir, 'logs', 'refs', 'heads', record.branch));
    if (record.stage?.agent?.transcriptPath) paths.push(record.stage.agent.transcriptPath);
  } catch {
    // no record (yet, or any more)
  }
  return paths.map((path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0).join(' ');
}

/** The supervisor's count of finished passes, from its note in the state folder. */
function passesIn(state: string): number {
  return noteOf(state).passes ?? 0;
}

/**
 * How many passes the note `now` shows since the note `start`: a note of another supervisor (one
 * started since, its count begun afresh) counts all of its passes.
 */
function passesSince(start: { pid?: number; passes?: number }, now: { pid?: number; passes?: number }): number {
  return now.pid === start.pid ? (now.passes ?? 0) - (start.passes ?? 0) : (now.passes ?? 0);
}

/** The note the supervisor writes after each pass; {} before any. */
function noteOf(state: string): { pid?: number; passes?: number; judged?: number; steps?: number } {
  try {
    return JSON.parse(readFileSync(join(state, 'watch.json'), 'utf8'));
  } catch {
    return {};
  }
}

/** The prompts a fake agent's transcript holds, in order. */
export function promptsOf(transcript: string): string[] {
  if (!existsSync(transcript)) return [];
  return readFileSync(transcript, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((r) => r.type === 'user' && typeof r.message?.content === 'string')
    .map((r) => unpasted(r.message.content as string));
}

/**
 * A prompt as it was typed: 2.1.332 (and the fake, as it) records a pasted prompt of four or more
 * lines inside `<pasted_content id="…">` tags with blank lines around them.
 */
function unpasted(content: string): string {
  return content.replace(/\n*<pasted_content id="[^"]*">\n([\s\S]*?)\n<\/pasted_content id="[^"]*">\n*/g, '$1');
}

/** True while the process runs (a zombie not yet reaped has ended). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie has ended: tmux 3.3a can be slow to reap a killed pane's program (tmux/tmux#311).
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A script body that lands the place's branch: merges it into the main checkout's branch. */
export const LAND = 'git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." merge -q --no-edit "$(git branch --show-current)"';

/** A script body that commits one file (`$1`, default work.txt) with a line added. */
export const COMMIT = 'f="${1:-work.txt}"; echo "work $(date +%s%N)" >> "$f"; git add -- "$f"; git commit -qm "Work on $f"';

/** The branch tip of `branch` in `repo`, or undefined when the branch is gone. */
export function tip(repo: string, branch: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { cwd: repo, encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** True when `commit` is on `branch` of `repo`. */
export function isAncestor(repo: string, commit: string, branch: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, branch], { cwd: repo, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
