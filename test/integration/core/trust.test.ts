/**
 * Trust: flume runs a repository's config only when the user trusted it as it is now, and loads a
 * trusted one first in a child process with a time limit. Each config here appends a line to a
 * marker file when it runs, so "it did not run" is read, not assumed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commit, flume, flumeEnv, git, makeRepo, remove, snapshot, tempDir, write } from '../../helpers/repo.js';
import { parseStatus } from '../../helpers/status-schema.js';
import { launchedRecord } from '../../helpers/result-schema.js';
import { waitUntil } from '../../helpers/wait.js';

const marks = tempDir('flume-marks-');
const made: string[] = [marks];
afterAll(() => made.forEach(remove));

/** A config that leaves a line in its marker file each time it runs, declaring the kind `unit`. */
function markingConfig(name: string, extra = ''): { config: string; mark: string } {
  const mark = join(marks, name);
  return {
    mark,
    config: `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(mark)}, 'ran\\n');
${extra}
export default { kinds: [{ name: 'unit', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] };
`,
  };
}

function fresh(): { state: string; env: Record<string, string> } {
  const state = tempDir('flume-state-');
  made.push(state);
  return { state, env: flumeEnv(state) };
}

function repoWith(config: string, options: { trusted?: boolean; configFile?: string } = {}): string {
  const repo = makeRepo({ config, configFile: options.configFile, trusted: options.trusted });
  made.push(repo);
  return repo;
}

const launchArgs = (repo: string, name: string, kind = 'unit') => ['launch', '--repo', repo, '--kind', kind, '--name', name, '--brief', 'b', '--no-start', '--no-watch', '--json'];
const errorOf = (stdout: string) => JSON.parse(stdout).error;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('trust', () => {
  it('refuses to launch with an untrusted config, changing nothing and running nothing; flume trust lets it run', async () => {
    const { state, env } = fresh();
    const { config, mark } = markingConfig('untrusted');
    const repo = repoWith(config, { trusted: false });
    const before = snapshot(repo);
    const refused = await flume(launchArgs(repo, 'one'), { env });
    expect(refused.code).toBe(1);
    const error = errorOf(refused.stdout);
    expect(error.code).toBe('UNTRUSTED_CONFIG');
    expect(error.fix).toContain(`flume trust --repo ${repo}`);
    expect(error.details).toMatchObject({ root: repo, file: join(repo, 'flume.config.ts'), state: 'untrusted' });
    expect(snapshot(repo)).toBe(before);
    expect(existsSync(join(repo, 'places'))).toBe(false);
    expect(existsSync(join(state, 'repositories.json'))).toBe(false);
    // Read-only: kinds says so rather than run it.
    const kinds = await flume(['kinds', '--repo', repo, '--json'], { env });
    expect(errorOf(kinds.stdout).code).toBe('UNTRUSTED_CONFIG');
    expect(existsSync(mark)).toBe(false);

    const trusted = await flume(['trust', '--repo', repo], { env });
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(join(repo, 'flume.config.ts'));
    expect(trusted.stdout).toContain(sha256(config));
    expect(trusted.stdout).toMatch(/run this file as you/);
    expect(statSync(join(state, 'trust.json')).mode & 0o777).toBe(0o600);
    const launched = await flume(launchArgs(repo, 'one'), { env });
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(launchedRecord(launched.stdout)).toMatchObject({ id: 'unit/one' });
    expect(existsSync(mark)).toBe(true);
  });

  it('refuses a config changed since it was trusted, and one whose trust was taken back; package.json trust follows its flume key only', async () => {
    const { env } = fresh();
    const { config, mark } = markingConfig('changed');
    const repo = repoWith(config, { trusted: false });
    expect((await flume(['trust', '--repo', repo], { env })).code).toBe(0);
    expect((await flume(['kinds', '--repo', repo, '--json'], { env })).code).toBe(0);
    write(repo, 'flume.config.ts', config + '// one more line\n');
    rmSync(mark, { force: true });
    const before = snapshot(repo);
    const refused = await flume(launchArgs(repo, 'two'), { env });
    expect(errorOf(refused.stdout)).toMatchObject({ code: 'UNTRUSTED_CONFIG', details: { state: 'changed', digest: sha256(config + '// one more line\n'), trusted: sha256(config) } });
    expect(snapshot(repo)).toBe(before);
    expect(existsSync(mark)).toBe(false);
    // Trusted again, then taken back.
    expect((await flume(['trust', '--repo', repo], { env })).code).toBe(0);
    expect((await flume(['kinds', '--repo', repo, '--json'], { env })).code).toBe(0);
    const revoked = await flume(['trust', '--repo', repo, '--revoke'], { env });
    expect(revoked.code).toBe(0);
    expect(errorOf((await flume(['kinds', '--repo', repo, '--json'], { env })).stdout).code).toBe('UNTRUSTED_CONFIG');

    const pkg = { name: 'x', version: '1.0.0', flume: { kinds: [{ name: 'pkg', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] } };
    const pkgRepo = repoWith(JSON.stringify(pkg), { trusted: false, configFile: 'package.json' });
    expect(errorOf((await flume(['kinds', '--repo', pkgRepo, '--json'], { env })).stdout).code).toBe('UNTRUSTED_CONFIG');
    expect((await flume(['trust', '--repo', pkgRepo], { env })).code).toBe(0);
    write(pkgRepo, 'package.json', JSON.stringify({ ...pkg, version: '1.0.1', scripts: { test: 'true' } }));
    expect((await flume(['kinds', '--repo', pkgRepo, '--json'], { env })).code).toBe(0);
    write(pkgRepo, 'package.json', JSON.stringify({ ...pkg, flume: { ...pkg.flume, target: 'main' } }));
    expect(errorOf((await flume(['kinds', '--repo', pkgRepo, '--json'], { env })).stdout)).toMatchObject({ code: 'UNTRUSTED_CONFIG', details: { state: 'changed' } });
  });

  it('status reports an untrusted repository without running its config, and lists its places from their records', async () => {
    const { env } = fresh();
    const { config, mark } = markingConfig('status');
    const repo = repoWith(config, { trusted: false });
    await flume(['trust', '--repo', repo], { env });
    expect((await flume(launchArgs(repo, 'u1'), { env })).code).toBe(0);
    expect((await flume(launchArgs(repo, 'f1', 'fix'), { env })).code).toBe(0);
    await flume(['trust', '--repo', repo, '--revoke'], { env });
    rmSync(mark, { force: true });
    for (const args of [['status', '--repo', repo, '--json'], ['status', '--json']]) {
      const result = await flume(args, { env });
      expect(result.code).toBe(0);
      const report = parseStatus(result.stdout);
      expect(report.repositories).toEqual([expect.objectContaining({ root: repo, trust: 'untrusted', error: expect.objectContaining({ code: 'UNTRUSTED_CONFIG' }) })]);
      expect(report.places.map((p: { id: string }) => p.id).sort()).toEqual(['fix/f1', 'unit/u1']);
      const unit = report.places.find((p: { id: string }) => p.id === 'unit/u1');
      expect(unit.problems.join(' ')).toContain('UNTRUSTED_CONFIG');
    }
    // Commands that act on a place refuse the same way, and run nothing.
    for (const args of [['drop', 'fix/f1', '--repo', repo, '--json'], ['tidy', '--repo', repo, '--json'], ['retry', 'unit/u1', '--json'], ['tell', 'fix/f1', 'more', '--json']]) {
      expect(errorOf((await flume(args, { env })).stdout).code, args.join(' ')).toBe('UNTRUSTED_CONFIG');
    }
    const text = await flume(['status'], { env });
    expect(text.stdout).toContain('UNTRUSTED_CONFIG');
    expect(text.stdout).toContain(`flume trust --repo ${repo}`);
    expect(existsSync(mark)).toBe(false);
  });

  it('a config that never finishes loading: status answers at once (loading, then hung), the probe ends in the background; launch names it', async () => {
    const { env: base } = fresh();
    // A limit long enough that the second status surely comes while the probe still runs, on a loaded machine too.
    const env = { ...base, FLUME_CONFIG_TIMEOUT_MS: '15000', FLUME_STATUS_CONFIG_WAIT_MS: '1000' };
    const repo = repoWith(markingConfig('hung').config);
    expect((await flume(launchArgs(repo, 'h1', 'fix'), { env })).code).toBe(0);
    // Trusted as it is (the helper trusts the test's repositories): trusted, and it hangs.
    write(repo, 'flume.config.ts', 'while (true) {}\nexport default {};\n');
    commit(repo, 'flume.config.ts', 'while (true) {}\nexport default {};\n');
    const started = Date.now();
    const first = await timed(() => flume(['status', '--json'], { env }));
    expect(first.result.code).toBe(0);
    const report = JSON.parse(first.result.stdout);
    const mine = report.repositories.find((r: { root: string }) => r.root === repo);
    expect(mine.error).toMatchObject({ code: 'CONFIG_LOADING' });
    expect(mine.error.message).toContain('is still loading');
    expect(mine.error.fix).toContain('flume status');
    expect(report.places.map((p: { id: string }) => p.id)).toEqual(['fix/h1']);
    // It did not wait for the config's 15 s limit: the config is named as still loading, not hung.
    // The probe goes on in the background, alone: a second status starts no other.
    const second = await timed(() => flume(['status', '--repo', repo, '--json'], { env }));
    expect(JSON.parse(second.result.stdout).repositories[0].error.code).toBe('CONFIG_LOADING');
    expect(probesRunning(repo).length).toBe(1);
    // It is killed at its limit and its outcome recorded: then status names it at once.
    await waitUntil(() => probesRunning(repo).length === 0 && Date.now() - started > 15_000, 'the probe ended at its limit');
    const third = await timed(() => flume(['status', '--repo', repo, '--json'], { env }));
    const hung = JSON.parse(third.result.stdout).repositories[0].error;
    expect(hung.code).toBe('CONFIG_HUNG');
    expect(hung.message).toContain('did not finish loading within 15 s');
    // From the probe's record: probing again would have taken the config's whole 15 s limit.
    expect(third.ms).toBeLessThan(15_000);
    const before = snapshot(repo);
    const launch = await timed(() => flume(launchArgs(repo, 'h2', 'fix'), { env }));
    expect(errorOf(launch.result.stdout).code).toBe('CONFIG_HUNG');
    expect(launch.ms).toBeLessThan(15_000);
    expect(snapshot(repo)).toBe(before);
  });

  it('a status that does not wait for its probe leaves it on record as loading, so no command after it starts a second', async () => {
    const { state, env: base } = fresh();
    // The background probe's node starts slowly (three seconds, as on a loaded machine), and status
    // waits a millisecond: the second status comes before the probe could have said a word.
    const slow = join(state, 'slow-probe.cjs');
    writeFileSync(slow, "if ((process.argv[1] || '').endsWith('probe-background.js')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);\n");
    const env = { ...base, FLUME_CONFIG_TIMEOUT_MS: '15000', FLUME_STATUS_CONFIG_WAIT_MS: '1', NODE_OPTIONS: `--require=${slow}` };
    const repo = repoWith(markingConfig('loading-once').config);
    expect((await flume(launchArgs(repo, 'l1'), { env: base })).code).toBe(0);
    commit(repo, 'flume.config.ts', 'while (true) {}\nexport default {};\n');
    const first = await flume(['status', '--repo', repo, '--json'], { env });
    expect(JSON.parse(first.stdout).repositories[0].error.code).toBe('CONFIG_LOADING');
    const record = JSON.parse(readFileSync(join(state, 'config-probes.json'), 'utf8')).repositories[repo];
    expect(record).toMatchObject({ outcome: 'loading', pid: expect.any(Number) });
    try {
      // The pid on record is the background probe's own.
      expect(backgroundProbes(repo)).toEqual([record.pid]);
      const second = await flume(['status', '--repo', repo, '--json'], { env });
      expect(JSON.parse(second.stdout).repositories[0].error.code).toBe('CONFIG_LOADING');
      expect(backgroundProbes(repo)).toEqual([record.pid]);
    } finally {
      for (const pid of backgroundProbes(repo)) process.kill(-pid, 'SIGKILL');
    }
  });

  it('a config that throws is named with its own words, by status and by launch', async () => {
    const { env } = fresh();
    const repo = repoWith(markingConfig('throws', "throw new Error('config exploded');").config);
    const status = await flume(['status', '--repo', repo, '--json'], { env });
    expect(JSON.parse(status.stdout).repositories[0]).toMatchObject({ trust: 'trusted' });
    const before = snapshot(repo);
    const launch = await flume(launchArgs(repo, 't1', 'fix'), { env });
    expect(errorOf(launch.stdout).code).toBe('BAD_CONFIG');
    expect(errorOf(launch.stdout).message).toContain('config exploded');
    expect(snapshot(repo)).toBe(before);
    expect(git(repo, 'branch', '--list', 'fix/t1')).toBe('');
  });
});

async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = Date.now();
  const result = await fn();
  return { result, ms: Date.now() - start };
}


/** Processes whose command line runs flume's config probe on `repo`. */
/** The pids of the background probes (`probe-background.js`) of `repo` that run. */
function backgroundProbes(repo: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(join('/proc', pid, 'cmdline'), 'utf8').split('\0');
        return argv.some((a) => a.endsWith('probe-background.js')) && argv.includes(repo);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function probesRunning(repo: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(join('/proc', pid, 'cmdline'), 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('probe.js')) && argv.includes(repo)) found.push(`${pid}: ${argv.join(' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

