import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { commit, git, makeRepo, PROJECT, remove, spawnFlume, tempDir } from '../../helpers/repo.js';
import {
  branches,
  expectConsistent,
  expectRefused,
  fullSnapshot,
  MAKE_ONLY,
  NO_WATCH,
  parse,
  recordsDir,
  testFlume,
  worktreePaths,
  type Run,
  type StatusReport,
} from './helpers.js';

// Issue: "many `flume launch` with one name at once → exactly one place, the rest refused cleanly;
// many with different names at once → all made and all recorded; launch and tidy at once do not
// corrupt each other." Every contender below is a flume process of its own, started together.

const scratch = tempDir('flume-race-');
// `run` and `together` are processes (the race, and a lock's holder, are processes); what only
// looks at the outcome runs as the suite runs flume.
const { stateDir, env, cli, spawned: run } = testFlume({ limit: 2, cwd: scratch });
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) remove(root);
  remove(scratch);
  remove(stateDir);
});

const PRINTED = { config: '{ "agent": { "host": "printed" } }\n', configFile: '.flumerc.json' };
const EXISTS = ['PLACE_EXISTS', 'BRANCH_EXISTS', 'WORKTREE_EXISTS'];
const repo = (options = {}) => {
  const root = makeRepo(options);
  roots.push(root);
  return root;
};
const launchArgs = (root: string, name: string, flags = NO_WATCH) => ['launch', ...flags, '--repo', root, '--kind', 'fix', '--name', name, '--brief', `work on ${name}`];
/** Starts every run at once (no limit: the race is the point) and waits for all. */
const together = (runs: string[][]): Promise<Run[]> => Promise.all(runs.map(async (args) => parse(await spawnFlume(args, { env, timeoutMs: 60_000 }))));

/** Nothing half-written or left behind once every contender has ended: records parse, no lock or temp file stays, the host list is JSON. */
function expectNoDebris(root: string): void {
  for (const name of readdirSync(recordsDir(root))) {
    expect(name, 'a lock or temp file was left behind').toMatch(/^[a-z0-9-]+--[a-z0-9-]+\.(json|events\.jsonl)$/);
    const text = readFileSync(join(recordsDir(root), name), 'utf8');
    if (name.endsWith('.json')) expect(() => JSON.parse(text), name).not.toThrow();
    else for (const line of text.split('\n').filter(Boolean)) expect(() => JSON.parse(line), `${name}: ${line}`).not.toThrow();
  }
  const hostFiles = readdirSync(stateDir).filter((name) => name.startsWith('repositories') || name.startsWith('.repositories'));
  expect(hostFiles).toEqual(['repositories.json']);
  const list = JSON.parse(readFileSync(join(stateDir, 'repositories.json'), 'utf8')) as { repositories: Array<{ root: string }> };
  const listed = list.repositories.map((r) => r.root);
  expect(listed.length, 'a repository is listed twice').toBe(new Set(listed).size);
  const exclude = readFileSync(join(recordsDir(root), '..', '..', 'info', 'exclude'), 'utf8');
  expect(exclude.split('\n').filter((line) => line === '/places/')).toHaveLength(1);
}

describe('launches of one name at once', () => {
  it('make exactly one place; the rest are refused cleanly', async () => {
    const root = repo(PRINTED);
    const results = await together(Array.from({ length: 8 }, () => launchArgs(root, 'same')));
    const made = results.filter((r) => r.code === 0);
    expect(made, results.map((r) => `${r.code} ${r.stderr}`).join('\n')).toHaveLength(1);
    for (const refused of results.filter((r) => r.code !== 0)) expectRefused(refused, 1, EXISTS, 'a second launch of fix/same');
    const report = await expectConsistent(cli, root);
    expect(report.places.map((p) => p.id)).toEqual(['fix/same']);
    expect(report.places[0]).toMatchObject({ state: 'active', worktree: { present: true }, problems: [] });
    expect(worktreePaths(root)).toEqual([root, join(root, 'places', 'fix--same')]);
    expect(branches(root)).toEqual(['fix/same', 'main']);
    expect(readdirSync(recordsDir(root)).filter((name) => name.endsWith('.json'))).toEqual(['fix--same.json']);
    expectNoDebris(root);
  });
});

describe('launches of different names at once', () => {
  it('are all made and all recorded', async () => {
    const root = repo(PRINTED);
    const names = Array.from({ length: 8 }, (_, i) => `task-${i}`);
    const results = await together(names.map((name) => launchArgs(root, name)));
    for (const [i, result] of results.entries()) expect(result.code, `${names[i]}: ${result.stderr}`).toBe(0);
    const ids = names.map((name) => `fix/${name}`).sort();
    const report = await expectConsistent(cli, root);
    expect(report.places.map((p) => p.id).sort()).toEqual(ids);
    for (const p of report.places) expect(p, p.id).toMatchObject({ state: 'active', worktree: { present: true }, problems: [] });
    // The host knows them too: status with no --repo lists every one.
    const host = (await cli(['status', '--json'])).json as StatusReport;
    expect(host.places.filter((p) => p.path.startsWith(root + '/')).map((p) => p.id).sort()).toEqual(ids);
    expect(branches(root)).toEqual([...ids, 'main'].sort());
    expectNoDebris(root);
  });
});

describe('a lock', () => {
  const deadPid = () =>
    new Promise<number>((done) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => done(child.pid!));
    });
  const lockFile = (root: string, key: string, token: string) => {
    mkdirSync(recordsDir(root), { recursive: true });
    writeFileSync(join(recordsDir(root), `${key}.lock`), token);
  };

  it('whose holder died is taken over, by exactly one of many at once', async () => {
    const root = repo(PRINTED);
    lockFile(root, 'fix--alone', `${await deadPid()} ${hostname()} ${randomUUID()}`);
    expect((await run(launchArgs(root, 'alone'))).code).toBe(0);
    lockFile(root, 'fix--crowd', `${await deadPid()} ${hostname()} ${randomUUID()}`);
    const results = await together(Array.from({ length: 6 }, () => launchArgs(root, 'crowd')));
    const log = join(recordsDir(root), 'fix--crowd.events.jsonl');
    const events = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    expect(results.filter((r) => r.code === 0), results.map((r) => `${r.code}\n${r.stdout}${r.stderr}`).join('\n---\n') + events()).toHaveLength(1);
    for (const refused of results.filter((r) => r.code !== 0)) expectRefused(refused, 1, EXISTS, 'a launch racing for a stale lock');
    // A lock file that names no holder at all (written half, or by hand) is stale too.
    lockFile(root, 'fix--garbled', 'not a token');
    expect((await run(launchArgs(root, 'garbled'))).code).toBe(0);
    const report = await expectConsistent(cli, root);
    expect(report.places.map((p) => p.id)).toEqual(['fix/alone', 'fix/crowd', 'fix/garbled']);
    expectNoDebris(root);
  });

  it('whose holder lives, or lives on another host, is never taken: the launch is refused and changes nothing', async () => {
    const root = repo();
    // The other host's holder is a pid that is dead here: only the other-host rule keeps it (pid 1 lives here).
    for (const token of [`${process.pid} ${hostname()} ${randomUUID()}`, `${await deadPid()} another-host ${randomUUID()}`]) {
      lockFile(root, 'fix--held', token);
      const before = fullSnapshot(root, stateDir);
      expectRefused(await run(launchArgs(root, 'held', MAKE_ONLY)), 1, ['PLACE_EXISTS', 'PLACE_BUSY'], `a launch while ${token} holds the lock`);
      expect(fullSnapshot(root, stateDir)).toBe(before);
      expect(readFileSync(join(recordsDir(root), 'fix--held.lock'), 'utf8')).toBe(token);
    }
    // The supervisor's lock works the same way: a second watch is refused while the first lives.
    const watchLock = join(stateDir, 'watch.lock');
    writeFileSync(watchLock, `${process.pid} ${hostname()} ${randomUUID()}`);
    try {
      expectRefused(await run(['watch', '--quiet'], { timeoutMs: 20_000 }), 1, ['WATCH_RUNNING'], 'a second watch');
    } finally {
      remove(watchLock);
    }
  });

  it('is held by one process at a time, however many contend and however many die holding it', async () => {
    // Ten processes take one lock in turn; some are SIGKILLed while holding it, leaving it stale.
    const dir = join(scratch, 'lock-stress');
    mkdirSync(dir, { recursive: true });
    const worker = join(PROJECT, 'test', 'integration', 'robustness', 'lock-worker.mjs');
    const lockModule = join(PROJECT, 'dist', 'core', 'state', 'lock.js');
    await Promise.all(
      Array.from({ length: 10 }, () => new Promise<void>((done) => spawn(process.execPath, [worker, lockModule, join(dir, 'the.lock'), dir, '40', '0.04'], { stdio: 'ignore' }).on('exit', () => done()))),
    );
    const increments = readFileSync(join(dir, 'increments'), 'utf8').split('\n').filter(Boolean).length;
    expect(existsSync(join(dir, 'violations')) ? readFileSync(join(dir, 'violations'), 'utf8') : '').toBe('');
    // Every increment made under the lock is in the counter: no two holders ever overlapped.
    expect(Number(readFileSync(join(dir, 'counter'), 'utf8'))).toBe(increments);
    expect(increments).toBeGreaterThan(8);
  });
});

describe('launch and tidy at once', () => {
  it('do not corrupt each other', async () => {
    const root = repo(PRINTED);
    // Places whose work is over: dropped, some with work their target lacks (their branches are kept).
    const over = Array.from({ length: 5 }, (_, i) => `over-${i}`);
    for (const name of over) expect((await cli(launchArgs(root, name, MAKE_ONLY))).code).toBe(0);
    const kept = over.slice(0, 2).map((name) => commit(join(root, 'places', `fix--${name}`), 'w.txt', `${name}\n`));
    for (const name of over) expect((await cli(['drop', '--repo', root, `fix/${name}`])).code).toBe(0);

    // New launches, two tidies, and a launch of a name being tidied, all at once.
    const fresh = Array.from({ length: 5 }, (_, i) => `fresh-${i}`);
    const results = await together([
      ...fresh.map((name) => launchArgs(root, name)),
      ['tidy', '--json', '--repo', root],
      ['tidy', '--json', '--repo', root],
      launchArgs(root, 'over-4'),
    ]);
    const [launches, tidies, relaunch] = [results.slice(0, 5), results.slice(5, 7), results[7]];
    for (const [i, result] of launches.entries()) expect(result.code, `${fresh[i]}: ${result.stderr}`).toBe(0);
    for (const result of tidies) expect(result.code, result.stdout + result.stderr).toBe(0);
    if (relaunch.code !== 0) expectRefused(relaunch, 1, EXISTS, 'a launch of a name being tidied');

    // A tidy that found a place busy left it for the next: one more finishes the work.
    expect((await cli(['tidy', '--repo', root])).code).toBe(0);
    const report = await expectConsistent(cli, root);
    const ids = report.places.map((p) => p.id).sort();
    for (const name of fresh) expect(ids).toContain(`fix/${name}`);
    for (const name of over.slice(2, 4)) expect(ids).not.toContain(`fix/${name}`);
    for (const name of over.slice(0, 2)) expect(report.places.find((p) => p.id === `fix/${name}`)).toMatchObject({ state: 'kept', worktree: { present: false } });
    if (relaunch.code === 0) expect(report.places.find((p) => p.id === 'fix/over-4')).toMatchObject({ state: 'active', worktree: { present: true } });
    else expect(ids).not.toContain('fix/over-4');
    for (const [i, commitId] of kept.entries()) expect(git(root, 'rev-parse', `fix/${over[i]}`), over[i]).toBe(commitId);
    // The host still lists the repository (it has places), and its list is whole.
    const host = (await cli(['status', '--json'])).json as StatusReport;
    for (const name of fresh) expect(host.places.map((p) => p.path)).toContain(join(root, 'places', `fix--${name}`));
    expectNoDebris(root);
  });

  it('never lets a tidy that emptied a repository forget it while a launch records a place there', async () => {
    // The repository's only places are over, so each tidy ends by forgetting the repository on the host;
    // a launch racing it must still be listed when both have ended.
    for (let round = 0; round < 2; round++) {
      const root = repo(PRINTED);
      for (const name of ['gone-a', 'gone-b']) {
        expect((await cli(launchArgs(root, name, MAKE_ONLY))).code).toBe(0);
        expect((await cli(['drop', '--repo', root, `fix/${name}`])).code).toBe(0);
      }
      const results = await together([['tidy', '--repo', root], launchArgs(root, 'late', MAKE_ONLY), ['tidy', '--repo', root]]);
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const host = (await cli(['status', '--json'])).json as StatusReport;
      expect(host.places.map((p) => p.path), `round ${round}`).toContain(join(root, 'places', 'fix--late'));
      expectNoDebris(root);
    }
  });
});
