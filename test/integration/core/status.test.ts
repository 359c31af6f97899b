import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, readFileSync, writeFileSync, existsSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { commit, flume, flumeEnv, git, makeRepo, remove, tempDir } from '../../helpers/repo.js';
import { parseStatus } from '../../helpers/status-schema.js';
import { agentRepo } from '../../helpers/agent-repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';

const state = tempDir('flume-state-');
const env = flumeEnv(state);
afterAll(() => remove(state));


/** A `git` on PATH that logs each call, then runs the real git. */
function gitCounter(dir: string): { env: Record<string, string>; count: () => number; reset: () => void } {
  const log = join(dir, 'git-calls.log');
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(dir, 'git'), 0o755);
  return {
    env: { PATH: `${dir}:${process.env.PATH}` },
    count: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0),
    reset: () => rmSync(log, { force: true }),
  };
}

describe('status', () => {
  it('gives every place as it stands, in JSON that matches the published schema', async () => {
    const repo = makeRepo();
    for (const name of ['a', 'b', 'c']) {
      expect((await flume(['launch', '--repo', repo, '--kind', name === 'c' ? 'change' : 'fix', '--name', name, '--brief', `brief ${name}`, '--no-start'], { env })).code).toBe(0);
    }
    commit(join(repo, 'places', 'fix--a'), 'a.txt', 'a');
    git(repo, 'cherry-pick', 'fix/a');
    // --no-watch: a supervisor would tidy the dropped and the landed place before status reads them.
    await flume(['drop', 'fix/b', '--repo', repo, '--reason', 'not needed', '--no-watch'], { env });
    const result = await flume(['status', '--json'], { env });
    expect(result.code).toBe(0);
    // flume() has validated it against status.schema.json already; parseStatus says so here too.
    const report = parseStatus(result.stdout);
    const byId = Object.fromEntries(report.places.map((p: { id: string }) => [p.id, p]));
    expect(byId['fix/a']).toMatchObject({ state: 'landed', landing: { state: 'landed', missing: 0 }, branch: 'fix/a', stages: ['code', 'submission'] });
    expect(byId['fix/b']).toMatchObject({ state: 'dropped', dropped: { reason: 'not needed' } });
    expect(byId['change/c']).toMatchObject({ state: 'active', landing: { state: 'no-commits' }, stages: ['construct', 'code', 'verify', 'submission'] });
    const one = JSON.parse((await flume(['status', 'change/c', '--json'], { env })).stdout);
    expect(one.places.map((p: { id: string }) => p.id)).toEqual(['change/c']);
    const text = await flume(['status', '--repo', repo], { env });
    expect(text.stdout).toContain('fix/a  landed');
    commit(join(repo, 'places', 'change--c'), 'c.txt', 'c');
    expect((await flume(['status', 'change/c', '--repo', repo], { env })).stdout).toContain('landing: not-landed (1 patch not on main)\n');
    commit(join(repo, 'places', 'change--c'), 'd.txt', 'd');
    expect((await flume(['status', 'change/c', '--repo', repo], { env })).stdout).toContain('landing: not-landed (2 patches not on main)\n');
    remove(repo);
  });

  it('spawns as many git processes for 20 places as for 1 (one reading per repository)', async () => {
    const tools = tempDir('flume-git-');
    const counter = gitCounter(tools);
    const counts: number[] = [];
    for (const places of [1, 20]) {
      const repo = makeRepo();
      const own = flumeEnv(tempDir('flume-state-'));
      for (let i = 0; i < places; i++) {
        await flume(['launch', '--repo', repo, '--kind', 'fix', '--name', `p${i}`, '--brief', 'b', '--no-start'], { env: own });
        if (i % 2 === 0) commit(join(repo, 'places', `fix--p${i}`), `f${i}.txt`, `${i}`);
      }
      counter.reset();
      const result = await flume(['status', '--json'], { env: { ...own, ...counter.env } });
      expect(JSON.parse(result.stdout).places).toHaveLength(places);
      counts.push(counter.count());
      remove(repo);
    }
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBe(counts[0]);
    remove(tools);
  });

  it('spawns as many git processes for 4 places whose agents stopped short as for 1 (their deliverables read again in one reading)', async () => {
    // Each agent ends its turn at once, without its deliverable: each stage reads as stopped short,
    // whose deliverable status reads once more after the agent, lest a commit made just before it stopped be missed.
    const t = agentRepo({ onPrompt: [{ actions: [{ say: 'Done, I think.' }] }] });
    try {
      const tools = tempDir('flume-git-');
      const counter = gitCounter(tools);
      const counts: number[] = [];
      const calls: string[] = [];
      for (const [from, to] of [[0, 1], [1, 4]]) {
        for (let i = from; i < to; i++) {
          const launched = await t.flume(['launch', '--kind', 'fix', '--name', `p${i}`, '--brief', 'b', '--no-watch']);
          expect(launched.code, launched.stderr).toBe(0);
        }
        const stopped = async () => JSON.parse((await t.flume(['status', '--json'])).stdout).places.filter((p: any) => p.stage?.state === 'waiting').length;
        await waitFor(async () => (await stopped()) === to, `${to} agents to stop short`);
        // A repository reading is kept for a second reading in the same process only when git's files
        // are older than a second; one dated ahead is never kept, so each reading costs its git processes.
        const ahead = new Date(Date.now() + 3_600_000);
        utimesSync(join(t.repo, '.git', 'HEAD'), ahead, ahead);
        counter.reset();
        const result = await flume(['status', '--json'], { env: { ...t.env, ...counter.env }, cwd: t.repo, process: true });
        expect(JSON.parse(result.stdout).places.map((p: any) => p.stage.state)).toEqual(Array(to).fill('waiting'));
        counts.push(counter.count());
        calls.push(readFileSync(join(tools, 'git-calls.log'), 'utf8'));
      }
      // The place's reading, and the one reading its stopped agent's deliverable is read again in.
      expect(counts[0], calls[0]).toBe(4);
      expect(counts[1], calls.join('\n---\n')).toBe(counts[0]);
      remove(tools);
    } finally {
      await t.cleanup();
    }
  });

  it('explains a place whose worktree was removed by hand, and a broken record', async () => {
    const repo = makeRepo();
    await flume(['launch', '--repo', repo, '--kind', 'fix', '--name', 'gone', '--brief', 'b', '--no-start'], { env });
    rmSync(join(repo, 'places', 'fix--gone'), { recursive: true, force: true });
    git(repo, 'worktree', 'prune');
    writeFileSync(join(repo, '.git', 'flume', 'places', 'fix--junk.json'), '{ not json');
    const report = JSON.parse((await flume(['status', '--repo', repo, '--json'], { env })).stdout);
    const gone = report.places.find((p: { id: string }) => p.id === 'fix/gone');
    expect(gone.state).toBe('missing');
    expect(gone.problems.join(' ')).toMatch(/worktree .* is gone/);
    expect(report.repositories[0].broken[0].file).toMatch(/fix--junk\.json$/);
    remove(repo);
  });
});
