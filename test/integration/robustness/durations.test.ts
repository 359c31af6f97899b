/**
 * Durations as a hostile caller gives them: one past what a single Node timer holds (2^31-1 ms, about
 * 24.8 days) is waited in full, and one past 100000h, or no duration at all, is refused on the command
 * line and in a config, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { FLUME_BIN, PROJECT, makeRepo, remove, write } from '../../helpers/repo.js';
import { expectRefused, fullSnapshot, MAKE_ONLY, testFlume } from './helpers.js';

const { stateDir, env, cli, spawned } = testFlume();

/** True once the process watches files (an inotify of its own): a wait does once it has begun. */
function watching(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}
let repo: string;

beforeAll(async () => {
  repo = makeRepo();
  const made = await cli(['launch', ...MAKE_ONLY, '--repo', repo, '--kind', 'fix', '--name', 'long', '--brief', 'Wait for me.']);
  expect(made.code, made.stdout + made.stderr).toBe(0);
});
afterAll(() => {
  remove(repo);
  remove(stateDir);
});

describe('a duration', () => {
  it('past 2^31-1 ms is waited in full: wait --timeout 600h is still waiting seconds later, not WAIT_TIMEOUT', async () => {
    // --no-watch: no supervisor is left behind; the wait steps the place itself (a --no-start place stays as it is).
    const waiter = spawn(process.execPath, [FLUME_BIN, 'wait', 'fix/long', '--repo', repo, '--for', 'delivered', '--timeout', '600h', '--no-watch', '--json'], { env, cwd: repo });
    let out = '';
    waiter.stdout.on('data', (chunk) => (out += chunk));
    waiter.stderr.on('data', (chunk) => (out += chunk));
    const exited = new Promise<number | null>((done) => waiter.on('exit', (code) => done(code)));
    // Seconds are counted from when the wait has begun (it then watches the branch): on a loaded
    // machine node can take seconds to load flume, and a SIGTERM before the command runs ends it by the signal.
    const begun = await Promise.race([exited.then(() => false), waitFor(() => watching(waiter.pid!), 'the wait to begin').then(() => true)]);
    expect(begun, out).toBe(true);
    const early = await Promise.race([exited, new Promise((done) => setTimeout(() => done('still waiting'), 3000))]);
    expect(early, out).toBe('still waiting');
    waiter.kill('SIGTERM');
    expect(await exited, out).toBe(130);
  });

  it('on the command line past 100000h, or no duration, is bad usage (exit 2), and nothing is done', async () => {
    const before = fullSnapshot(repo, stateDir);
    const runs = [
      ['wait', 'fix/long', '--repo', repo, '--timeout', '100001h', '--json'],
      ['wait', 'fix/long', '--repo', repo, '--timeout', 'banana', '--json'],
      ['wait', 'fix/long', '--repo', repo, '--timeout', '360000001', '--json'],
      // A command that waits after acting reads its --timeout first: the place is not made.
      ['launch', ...MAKE_ONLY, '--repo', repo, '--kind', 'fix', '--name', 'fresh', '--brief', 'b', '--wait', '--timeout', '100001h', '--json'],
      ['watch', '--poll', '100001h'],
    ];
    for (const args of runs) {
      const result = await cli(args);
      expectRefused(result, 2, ['BAD_USAGE'], args.join(' '));
      if (args.includes('--json')) expect(result.error?.message, args.join(' ')).toMatch(/^--timeout "(100001h|banana|360000001)" /);
    }
    expect(fullSnapshot(repo, stateDir)).toBe(before);
  });

  it("in flume's environment (FLUME_*_MS) set to no time limit refuses every command before it runs or asks anything, as a process too; one with its unit is taken", async () => {
    const before = fullSnapshot(repo, stateDir);
    const bad: Array<[string, string]> = [
      ['FLUME_HOST_TIMEOUT_MS', '5 s'],
      ['FLUME_CONFIG_TIMEOUT_MS', '0'],
      ['FLUME_HOST_READ_MS', '-1'],
      ['FLUME_STATUS_CONFIG_WAIT_MS', 'soon'],
      ['FLUME_CONFIG_TIMEOUT_MS', '100001h'],
    ];
    for (const [name, value] of bad) {
      const what = `${name}=${value}`;
      const launched = await cli(['launch', ...MAKE_ONLY, '--repo', repo, '--kind', 'fix', '--name', 'fresh', '--brief', 'b', '--json'], { env: { [name]: value } });
      expectRefused(launched, 2, ['BAD_USAGE'], `launch with ${what}`);
      expect(launched.error?.message, what).toBe(`${name} is ${JSON.stringify(value)}: not a time limit (a number of milliseconds above 0, or a duration such as 90s, at most 100000h).`);
      expect(launched.error?.fix, what).toContain(`unset it for the default`);
      // As a process, and before the supervisor or another host is asked: status and a routed command alike.
      expectRefused(await spawned(['status', '--json'], { env: { [name]: value } }), 2, ['BAD_USAGE'], `status with ${what}`);
      expectRefused(await spawned(['--host', 'nowhere', 'status', '--json'], { env: { [name]: value } }), 2, ['BAD_USAGE'], `status --host with ${what}`);
    }
    // On the other end of a relay (what another host runs for this one), the command it reads refuses
    // as that command asked: JSON on its standard output.
    const version = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version;
    const relayed = spawnSync(process.execPath, [FLUME_BIN, '__relay'], {
      env: { ...env, FLUME_HOST_READ_MS: 'soon' },
      input: `${JSON.stringify({ relay: 1, version, argv: ['status', '--repo', repo, '--json'], files: [] })}\n`,
      encoding: 'utf8',
    });
    expect(relayed.status, relayed.stdout + relayed.stderr).toBe(2);
    expect(JSON.parse(relayed.stdout).error).toMatchObject({ code: 'BAD_USAGE', message: expect.stringMatching(/^FLUME_HOST_READ_MS is "soon"/) });
    expect(fullSnapshot(repo, stateDir)).toBe(before);
    // A number of milliseconds, or a duration with its unit, is a time limit.
    for (const value of ['90s', '45000']) {
      const read = await cli(['status', '--repo', repo, '--json'], { env: { FLUME_HOST_TIMEOUT_MS: value } });
      expect(read.code, `${value}: ${read.stdout}${read.stderr}`).toBe(0);
    }
  });

  it('in a config past 100000h is refused with BAD_CONFIG naming its path, and nothing is done', async () => {
    write(repo, 'flume.config.ts', `export default ${JSON.stringify({
      limits: { stuckAfter: '100001h' },
      kinds: [{ name: 'unit', stages: [{ name: 'a', prompt: 'p', deliverable: 'commit', limits: { promptTimeout: 360_000_001 } }] }],
      ready: { setup: [{ run: 'true', timeout: '100000h' }] },
    })};\n`);
    try {
      const before = fullSnapshot(repo, stateDir);
      const result = await cli(['launch', ...MAKE_ONLY, '--json', '--repo', repo, '--kind', 'fix', '--name', 'fresh', '--brief', 'b']);
      expectRefused(result, 1, ['BAD_CONFIG'], 'launch');
      const problems = (result.error?.details?.problems ?? []) as Array<{ path: string; message: string }>;
      expect(problems.map((problem) => problem.path).sort()).toEqual(['kinds[0].stages[0].limits.promptTimeout', 'limits.stuckAfter']);
      for (const problem of problems) expect(problem.message, problem.path).toContain('longer than 100000h');
      expect(result.error!.message).toContain('  limits.stuckAfter: ');
      expect(fullSnapshot(repo, stateDir)).toBe(before);
    } finally {
      rmSync(join(repo, 'flume.config.ts'), { force: true });
    }
  });
});
