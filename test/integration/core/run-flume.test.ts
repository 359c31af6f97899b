/**
 * The tests' one way to run flume (runFlume, test/helpers/repo.ts). In the test's own process a run
 * gets the folder and environment it is handed, not the test's, even beside other runs started at
 * once; it leaves the test's own as they were; and it prints what the executable prints.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { flumeEnv, makeRepo, remove, runFlume, tempDir } from '../../helpers/repo.js';

const made: string[] = [];
afterAll(() => made.forEach(remove));
const fresh = (path: string) => (made.push(path), path);

/** A repository with one place made in a state folder of its own; the launch run from inside the repository. */
async function withPlace(name: string) {
  const repo = fresh(makeRepo());
  const env = flumeEnv(fresh(tempDir('flume-state-')));
  const launched = await runFlume(['launch', '--kind', 'fix', '--name', name, '--brief', `work on ${name}`, '--no-start', '--no-watch'], { env, cwd: repo });
  expect(launched.code, launched.stdout + launched.stderr).toBe(0);
  return { repo, env };
}

const ids = async (env: Record<string, string>) => (JSON.parse((await runFlume(['status', '--json'], { env })).stdout).places as Array<{ id: string }>).map((p) => p.id);

describe('runFlume', () => {
  it('runs in the folder and environment it is handed, each run its own beside others, and leaves the test\'s as they were', async () => {
    const cwd = process.cwd();
    const env = { ...process.env };
    const hosts = await Promise.all(['a', 'b', 'c'].map(withPlace));
    // Each host's state folder holds its own place only, read by runs started together.
    expect(await Promise.all(hosts.map((host) => ids(host.env)))).toEqual([['fix/a'], ['fix/b'], ['fix/c']]);
    expect(await ids(flumeEnv(fresh(tempDir('flume-state-'))))).toEqual([]);
    // A command that takes the repository from its folder finds the one it is run in.
    const shown = await runFlume(['status', 'fix/b'], { env: hosts[1].env, cwd: hosts[1].repo });
    expect(shown.code, shown.stderr).toBe(0);
    expect(process.cwd()).toBe(cwd);
    expect(process.env).toEqual(env);
  });

  it('prints what the executable prints', async () => {
    const { repo, env } = await withPlace('same');
    const untimed = (text: string) => text.replace(/"generatedAt": "[^"]*"/g, '"generatedAt": "…"');
    for (const args of [['status', '--json'], ['status'], ['status', 'fix/same'], ['kinds', '--json'], ['drop', 'fix/none'], ['launch', '--kind'], ['--help']]) {
      const [inside, spawned] = [await runFlume(args, { env, cwd: repo }), await runFlume(args, { env, cwd: repo, process: true })];
      expect({ ...inside, stdout: untimed(inside.stdout) }, args.join(' ')).toEqual({ ...spawned, stdout: untimed(spawned.stdout) });
    }
  });
});
