import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CRASH_POINTS } from '../../../core/support/crash.js';
import { commit, git, makeRepo, remove, tempDir, write } from '../../helpers/repo.js';
import {
  branches,
  expectConsistent,
  expectRefused,
  KILLED,
  MAKE_ONLY,
  NO_WATCH,
  reachable,
  recordsDir,
  testFlume,
  worktreePaths,
  type StatusPlace,
} from './helpers.js';

// Issue: "Kill flume at any point of launch or tidy and the next command finds a consistent state:
// no worktree without its record, no record pointing at nothing that status does not explain, never
// a removed commit." Each run below is killed with SIGKILL at one crash point (FLUME_CRASH_AT), as a
// power cut would; the next commands (status, launch, tidy) must find and finish or undo what it began.

const scratch = tempDir('flume-crash-');
// The commands after a crash run as the suite runs flume (in this process by default); every crashed
// run is a process of its own (the crash point kills the process it is reached in).
const { stateDir, cli, spawned: run } = testFlume({ limit: 2, cwd: scratch });
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) remove(root);
  remove(scratch);
  remove(stateDir);
});

// The printed host: launch starts the first stage with no pane, so launch reaches stage:agent-started.
const PRINTED = { config: '{ "agent": { "host": "printed" } }\n', configFile: '.flumerc.json' };
const LAUNCH_POINTS = [...CRASH_POINTS.filter((p) => p.startsWith('launch:')), 'stage:agent-started'];
const TIDY_POINTS = CRASH_POINTS.filter((p) => p.startsWith('tidy:'));
// Reached only with a live agent (a prompt typed into a pane, a deliverable read): the stage tests' points.
const AGENT_POINTS = ['stage:agent-opened', 'stage:prompt-sent', 'stage:ended', 'stage:recorded'];
// Points before the worktree is recorded as made: the next launch of the name rolls the launch back and makes it.
const ROLLED_BACK = ['launch:locked', 'launch:recorded', 'launch:branch-made', 'launch:worktree-added'];

const repo = (options = {}) => {
  const root = makeRepo(options);
  roots.push(root);
  return root;
};
const launchArgs = (root: string, name: string, flags = NO_WATCH) => ['launch', ...flags, '--repo', root, '--kind', 'fix', '--name', name, '--brief', `work on ${name}`];
const crashed = (args: string[], point: string) => run(args, { env: { FLUME_CRASH_AT: point } });
const place = (places: StatusPlace[], id: string) => places.find((p) => p.id === id);

/** The repository as it was before any launch: the main worktree and branch, no record, no place folder. */
function expectClean(root: string): void {
  expect(worktreePaths(root)).toEqual([root]);
  expect(branches(root)).toEqual(['main']);
  const records = existsSync(recordsDir(root)) ? readdirSync(recordsDir(root)).filter((name) => name.endsWith('.json')) : [];
  expect(records).toEqual([]);
  expect(existsSync(join(root, 'places')) ? readdirSync(join(root, 'places')) : []).toEqual([]);
}

describe('the crash points', () => {
  it('are each walked here, but those only a live agent reaches', () => {
    expect([...LAUNCH_POINTS, ...TIDY_POINTS, ...AGENT_POINTS].sort()).toEqual([...CRASH_POINTS].sort());
  });
});

describe('a launch killed at', () => {
  it.concurrent.each(LAUNCH_POINTS)('%s converges on the next launch and tidy', async (point) => {
    const root = repo(PRINTED);
    const [work, other] = await Promise.all([crashed(launchArgs(root, 'work'), point), crashed(launchArgs(root, 'other'), point)]);
    expect([work.code, other.code], work.stderr + other.stderr).toEqual([KILLED, KILLED]);
    await expectConsistent(cli, root);

    // The next launch of the same name: made, or refused with a code, never half of either.
    const retry = await cli(launchArgs(root, 'work'));
    if (ROLLED_BACK.includes(point)) expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    else expectRefused(retry, 1, ['PLACE_EXISTS'], `launch after ${point}`);
    let report = await expectConsistent(cli, root);
    expect(place(report.places, 'fix/work')).toMatchObject({ state: 'active', worktree: { present: true }, problems: [] });

    // The next tidy: an interrupted launch with nothing in it is rolled back; a made place is left alone.
    const tidy = await cli(['tidy', '--json', '--repo', root]);
    expect(tidy.code, tidy.stdout + tidy.stderr).toBe(0);
    report = await expectConsistent(cli, root);
    if (ROLLED_BACK.includes(point)) {
      expect(place(report.places, 'fix/other')).toBeUndefined();
      expect(branches(root)).not.toContain('fix/other');
      expect(existsSync(join(root, 'places', 'fix--other'))).toBe(false);
    } else {
      expect(place(report.places, 'fix/other')).toMatchObject({ state: 'active', worktree: { present: true }, problems: [] });
    }

    // Dropping and tidying what is left brings the repository back to where it began.
    for (const p of report.places) expect((await cli(['drop', '--repo', root, p.id])).code).toBe(0);
    expect((await cli(['tidy', '--repo', root])).code).toBe(0);
    expect((await expectConsistent(cli, root)).places).toEqual([]);
    expectClean(root);
  });

  it('after its worktree was added keeps the work done in it, never rolls it back', async () => {
    const root = repo();
    expect((await crashed(launchArgs(root, 'kept', MAKE_ONLY), 'launch:worktree-added')).code).toBe(KILLED);
    expect((await crashed(launchArgs(root, 'untracked', MAKE_ONLY), 'launch:worktree-added')).code).toBe(KILLED);
    const work = commit(join(root, 'places', 'fix--kept'), 'work.txt', 'work\n', 'work done before flume came back');
    write(join(root, 'places', 'fix--untracked'), 'notes.txt', 'not committed\n');
    await expectConsistent(cli, root);

    expectRefused(await cli(launchArgs(root, 'kept', MAKE_ONLY)), 1, ['PLACE_EXISTS'], 'launch of a place with work');
    expect((await cli(['tidy', '--repo', root])).code).toBe(0);
    const report = await expectConsistent(cli, root);
    for (const id of ['fix/kept', 'fix/untracked']) expect(place(report.places, id), id).toMatchObject({ state: 'active', worktree: { present: true } });
    expect(reachable(root, work)).toBe(true);
    expect(git(root, 'rev-parse', 'fix/kept')).toBe(work);
    expect(existsSync(join(root, 'places', 'fix--untracked', 'notes.txt'))).toBe(true);
  });
});

/**
 * A repository with four places: fix/a dropped with a commit its target lacks (its branch must be
 * kept), fix/b landed (merged into main), fix/c dropped with no commit, fix/d active with a commit.
 */
async function fourPlaces() {
  const root = repo();
  for (const name of ['a', 'b', 'c', 'd']) expect((await cli(launchArgs(root, name, MAKE_ONLY))).code).toBe(0);
  const path = (name: string) => join(root, 'places', `fix--${name}`);
  const commits = {
    a: commit(path('a'), 'a.txt', 'a\n', 'work on a, never landed'),
    b: commit(path('b'), 'b.txt', 'b\n', 'work on b, landed'),
    d: commit(path('d'), 'd.txt', 'd\n', 'work on d, still going'),
  };
  git(root, 'merge', '--ff-only', '-q', 'fix/b');
  for (const id of ['fix/a', 'fix/c']) expect((await cli(['drop', '--repo', root, id])).code).toBe(0);
  return { root, commits };
}

/** What tidying leaves of the four places once it has finished. */
async function expectTidied(root: string, commits: Record<string, string>, done: string[]): Promise<void> {
  const report = await expectConsistent(cli, root);
  for (const commitId of Object.values(commits)) expect(reachable(root, commitId), `commit ${commitId} was lost`).toBe(true);
  if (done.includes('a')) {
    expect(place(report.places, 'fix/a')).toMatchObject({ state: 'kept', worktree: { present: false } });
    expect(git(root, 'rev-parse', 'fix/a')).toBe(commits.a);
  }
  for (const name of ['b', 'c'].filter((n) => done.includes(n))) {
    expect(place(report.places, `fix/${name}`), name).toBeUndefined();
    expect(branches(root)).not.toContain(`fix/${name}`);
  }
  expect(place(report.places, 'fix/d')).toMatchObject({ state: 'active', worktree: { present: true }, problems: [] });
  expect(git(root, 'rev-parse', 'fix/d')).toBe(commits.d);
  const worktrees = worktreePaths(root);
  expect(worktrees).toContain(join(root, 'places', 'fix--d'));
  for (const name of done) expect(worktrees).not.toContain(join(root, 'places', `fix--${name}`));
}

describe('a tidy killed at', () => {
  // Per point, one repository: a tidy of every place is cut first (it dies at fix/a, the first place
  // tidied, or at fix/b for tidy:branch-deleted, which fix/a's kept branch never reaches); then tidies of
  // fix/b and fix/c alone are cut at the same point. Each kind of place is cut at each point it reaches,
  // and the next tidy, of the place or of everything, finishes what the cut one began.
  // Five repositories of four places tidied at once, each cut three times: on a loaded machine that takes minutes.
  it.concurrent.each(TIDY_POINTS)('%s is finished by the next tidy, for every kind of place, with no commit lost', async (point) => {
    const { root, commits } = await fourPlaces();
    const expectIntact = async (what: string) => {
      await expectConsistent(cli, root);
      for (const commitId of Object.values(commits)) expect(reachable(root, commitId), `commit ${commitId} lost ${what}`).toBe(true);
    };
    const all = await crashed(['tidy', '--repo', root], point);
    expect(all.code, all.stdout + all.stderr).toBe(KILLED);
    await expectIntact(`after tidying every place was cut at ${point}`);

    const done: string[] = [];
    for (const name of ['b', 'c']) {
      const cut = await crashed(['tidy', '--repo', root, `fix/${name}`], point);
      // fix/b already died at tidy:branch-deleted above; what is left of its tidy reaches no point.
      const reaches = !(name === 'b' && point === 'tidy:branch-deleted');
      expect(cut.code, `${name}: ${cut.stdout}${cut.stderr}`).toBe(reaches ? KILLED : 0);
      await expectIntact(`after tidying fix/${name} was cut at ${point}`);
      if (reaches) {
        const again = await cli(['tidy', '--json', '--repo', root, `fix/${name}`]);
        expect(again.code, again.stdout + again.stderr).toBe(0);
      }
      done.push(name);
      await expectTidied(root, commits, done);
    }
    // The next tidy of everything finishes fix/a; once more changes nothing.
    for (let round = 0; round < 2; round++) {
      expect((await cli(['tidy', '--repo', root])).code).toBe(0);
      await expectTidied(root, commits, ['a', 'b', 'c']);
    }
    // The host still lists the repository: it has places (fix/a kept, fix/d active).
    const host = (await cli(['status', '--json'])).json as { places: StatusPlace[] };
    expect(host.places.map((p) => p.path)).toContain(join(root, 'places', 'fix--d'));
  }, 300_000);
});
