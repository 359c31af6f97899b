/**
 * A soak with faults: many fix launches, a few at a time, each started as an operator starts one
 * (the launch starts the host's supervisor when none runs), with the supervisor killed (SIGKILL) a
 * third of the way in and flume's tmux server killed two thirds of the way in. Nothing is lost and
 * everything converges: each place lands and is tidied, or (its agent killed with the tmux server
 * before it landed) reads waiting with its branch and work kept; every place launched after the
 * faults lands and is tidied; no agent is left running. The fake agent; bench/soak-real.bench.mjs
 * runs the same soak against the real Claude Code.
 */
import { describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { lockHolder } from '../../../core/state/lock.js';
import { git } from '../../helpers/repo.js';
import { COMMIT, LAND, LONG, repoFor, running } from './helpers.js';

const LAUNCHES = 12;
const AT_ONCE = 3;
const KILL_SUPERVISOR_AT = 4;
const KILL_TMUX_AT = 8;

describe('a soak of fix launches with the supervisor and tmux killed mid-run', { timeout: LONG * 2 }, () => {
  it('lands and tidies every place it can, keeps the work of the rest, and leaves no agent running', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    // Several land at once, beside flume's own readings of main's checkout: a merge that finds its
    // index locked tries again, for up to two minutes (on a loaded machine twenty seconds ran out).
    // The merges take turns (flock): two at once in one checkout can leave it mid-merge ("you are
    // still merging"), and every later landing then fails, as people merging by hand would not.
    const land = t.bin('land-retry.sh', `for i in $(seq 600); do flock "$(git rev-parse --path-format=absolute --git-common-dir)/land.lock" sh -c '${LAND}' && exit 0; sleep 0.2; done; exit 1`);
    const commit = t.bin('commit-own.sh', `cd "$(git rev-parse --show-toplevel)" && ${COMMIT.replace('"${1:-work.txt}"', '"$(git branch --show-current | tr / -).txt"')}`);
    t.script({
      onPrompt: [
        // A moment's work first: the launch returns with its agent still working, so the kills find agents running.
        { match: 'Make the change the brief asks for', actions: [{ sleepMs: 5000 }, { run: [commit] }, { say: 'Committed.' }] },
        { match: 'Submit the branch for landing', actions: [{ run: [land] }, { say: 'Merged into main.' }] },
      ],
    });
    const names = Array.from({ length: LAUNCHES }, (_, i) => `s${i + 1}`);
    const queue = [...names];
    const socket = join(t.state, 'tmux', 'flume.sock');
    let launched = 0;
    let afterFaults: string[] = [];
    let tmuxKilled = false;
    const codes = new Map<string, { code: number; stdout: string; stderr: string }>();
    const launchOne = async (name: string) => {
      const result = await t.flume(['launch', '--kind', 'fix', '--name', name, '--brief', `Add ${name}.`, '--json']);
      codes.set(name, result);
      launched++;
      if (launched === KILL_SUPERVISOR_AT) {
        const holder = await lockHolder(join(t.state, 'watch.lock'));
        if (holder?.pid && holder.alive) process.kill(holder.pid, 'SIGKILL');
      }
      // The tmux server exits with its last pane: where none runs at this launch's return, the next tries.
      if (launched >= KILL_TMUX_AT && !tmuxKilled) {
        try {
          execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' });
        } catch {
          return;
        }
        tmuxKilled = true;
        // Those not yet started: launches return out of order, so none under way now counts.
        afterFaults = [...queue];
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, async () => {
      for (let name = queue.shift(); name; name = queue.shift()) await launchOne(name);
    }));
    expect(afterFaults.length).toBeGreaterThan(0);
    for (const [name, result] of codes) {
      // A launch under way when tmux was killed says its agent is gone (AGENT_NOT_UP, exit 1) or never
      // took its prompt (exit 3); every other launch succeeded.
      if (result.code === 0) continue;
      expect(afterFaults, `${name}: ${result.stdout}${result.stderr}`).not.toContain(name);
      expect([1, 3], `${name}: ${result.stdout}${result.stderr}`).toContain(result.code);
    }

    // Every place ends tidied or waiting; none is left working, however the faults fell.
    const settled = async () => {
      const report = JSON.parse((await t.flume(['status', '--repo', t.repo, '--json'])).stdout);
      return report.places.every((p: any) => ['waiting', 'never-started'].includes(p.stage?.state)) ? report.places : undefined;
    };
    let rest: any[] | undefined;
    for (const end = Date.now() + 240_000; !(rest = await settled()) && Date.now() < end; ) await new Promise((done) => setTimeout(done, 1000));
    expect(rest, 'every place tidied or waiting within 4 minutes').toBeDefined();
    for (const place of rest!) {
      // Its agent was killed with the tmux server before it landed: its branch keeps its work.
      if (place.stage.state === 'waiting') expect(place.stage.needs).toMatch(/its agent exited/);
      expect(git(t.repo, 'branch', '--list', place.branch)).not.toBe('');
    }
    const waiting = new Set(rest!.map((p: any) => p.name));
    for (const name of afterFaults) expect(waiting.has(name), `${name}, launched after the faults, landed and was tidied`).toBe(false);
    for (const name of names.filter((n) => !waiting.has(n))) {
      // Landed: its work is on main, its branch deleted, its place gone.
      expect(git(t.repo, 'log', '--format=%s', 'main'), name).toContain(`Work on fix-${name}.txt`);
      expect(git(t.repo, 'branch', '--list', `fix/${name}`)).toBe('');
    }
    expect(t.livePanes()).toEqual([]);
    for (const name of names) {
      const record = t.record(`fix--${name}`);
      if (record?.stage?.agent?.pid) expect(running(record.stage.agent.pid), name).toBe(false);
    }
  });
});
