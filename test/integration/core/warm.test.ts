/**
 * Read commands answered by the running supervisor (core/cli/warm.ts): what the bin prints must be
 * what the same command prints run alone, and a command line answered warm must run no git of its
 * own. Every git run is logged with the pid of the process that ran it, by a wrapper first on PATH
 * for the supervisor and the commands alike (the same environment, so the supervisor answers).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { FLUME_BIN, git } from '../../helpers/repo.js';
import { LONG, repoFor } from '../stages/helpers.js';
import { askWarm } from '../../../core/cli/warm.js';
import { waitForFile } from '../../helpers/wait.js';

/** A kind whose one stage never delivers (conclusion.md never comes): the place stays put. */
const HOLD = { name: 'hold', description: 'One stage that waits.', stages: [{ name: 'work', prompt: 'Work on {brief}', deliverable: 'conclusion' }] };

/** Runs the bin and says which pid it had. */
function run(args: string[], options: { env: Record<string, string>; cwd: string }): Promise<{ pid: number; code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLUME_BIN, ...args], { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ pid: child.pid!, code: code ?? -1, stdout, stderr }));
  });
}

/** What may differ between two runs a moment apart: when the report was made, when the last pass ended. */
const steady = (text: string) => text.replace(/"(generatedAt|lastPassAt)": "[^"]*"/g, '"$1": "…"');

describe('read commands answered by the supervisor', { timeout: LONG }, () => {
  it('status, status PLACE and kinds print what they print run alone, and the command line runs no git of its own', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'Working on it; nothing to ask.' }] }] }, { kinds: [HOLD] });
    const wrappers = join(t.configDir, 'wrappers');
    const log = join(t.configDir, 'git.log');
    mkdirSync(wrappers, { recursive: true });
    writeFileSync(join(wrappers, 'git'), `#!/bin/sh\necho "$PPID $*" >> '${log}'\nexec '${git(t.repo, '--exec-path').trim()}/git' "$@"\n`);
    chmodSync(join(wrappers, 'git'), 0o755);
    const env = { ...t.env, PATH: `${wrappers}:${t.env.PATH}` };
    const launched = await run(['launch', '--kind', 'hold', '--name', 'one', '--brief', 'the one thing', '--no-watch', '--json'], { env, cwd: t.repo });
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    t.watch({ PATH: env.PATH });
    const socket = join(t.state, 'watch.sock');
    await waitForFile(socket, "the supervisor's socket");
    await t.until('hold/one', (p) => p?.stage?.agent?.state === 'idle', 'the agent to end its turn');

    mkdirSync(join(t.configDir, 'not-a-repository'));
    const gitBy = (pid: number) => (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((line) => line.startsWith(`${pid} `));
    // A variable flume reads, set: the supervisor passes over such a caller, which runs the command itself.
    const cold = { ...env, FLUME_TEST_COLD: '1' };
    const commands = [
      ['status', '--json'],
      ['status'],
      ['status', 'hold/one', '--json'],
      ['status', 'hold--one'],
      ['status', '--repo', '.', '--json'],
      ['kinds'],
      ['kinds', '--json'],
      ['status', 'hold/none', '--json'],
      ['kinds', '--repo', join(t.configDir, 'not-a-repository')],
    ];
    for (const args of commands) {
      const alone = await run(args, { env: cold, cwd: t.repo });
      const warm = await run(args, { env, cwd: t.repo });
      expect(gitBy(alone.pid).length, `${args.join(' ')} run alone runs git itself`).toBeGreaterThan(args[0] === 'kinds' ? 0 : 1);
      expect(gitBy(warm.pid), `${args.join(' ')} answered warm`).toEqual([]);
      expect({ code: warm.code, stdout: steady(warm.stdout), stderr: warm.stderr }, args.join(' ')).toEqual({ code: alone.code, stdout: steady(alone.stdout), stderr: alone.stderr });
    }
    // Run alone, status only reads the repository: it never loads simple-git (docs/decisions/git-reads.md).
    const hook = join(t.configDir, 'loads.mjs');
    const loaded = join(t.configDir, 'loaded.txt');
    const recorder = `import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { appendFileSync(${JSON.stringify(loaded)}, url + '\\n'); return next(url, context); }`;
    writeFileSync(hook, `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(${JSON.stringify(recorder)}));\n`);
    const traced = spawnSync(process.execPath, ['--import', hook, FLUME_BIN, 'status', '--json'], { env: cold, cwd: t.repo, encoding: 'utf8' });
    expect(traced.status, traced.stderr).toBe(0);
    const modules = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
    expect(modules.some((url) => url.includes('/dist/core/support/git.js'))).toBe(true);
    expect(modules.filter((url) => url.includes('/node_modules/simple-git/'))).toEqual([]);

    // Asked again after a change (another place, made by a command of its own), the answer is the change.
    const before = await run(['status', '--json'], { env, cwd: t.repo });
    const made = await run(['launch', '--kind', 'hold', '--name', 'two', '--brief', 'the next thing', '--no-start', '--no-watch', '--json'], { env, cwd: t.repo });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const after = await run(['status', '--json'], { env, cwd: t.repo });
    expect(gitBy(after.pid), 'status answered warm after a change').toEqual([]);
    const ids = (out: string) => (JSON.parse(out).places as Array<{ id: string }>).map((p) => p.id).sort();
    expect(ids(before.stdout)).toEqual(['hold/one']);
    expect(ids(after.stdout)).toEqual(['hold/one', 'hold/two']);
    // The refusals kept their codes: an unknown place, a folder that is no repository.
    expect((await run(['status', 'hold/none', '--json'], { env, cwd: t.repo })).code).toBe(1);
    expect((await run(['kinds', '--repo', join(t.configDir, 'not-a-repository')], { env, cwd: t.repo })).code).not.toBe(0);

    // Asked directly: another build or another environment gets no answer; nothing but a read command runs.
    expect(await askWarm(['status', '--json'], { stateDir: t.state, self: FLUME_BIN, env })).toBeDefined();
    expect(await askWarm(['status', '--json'], { stateDir: t.state, self: FLUME_BIN, env: cold })).toBeUndefined();
    expect(await askWarm(['status', '--json'], { stateDir: t.state, self: join(t.configDir, 'wrappers', 'git'), env })).toBeUndefined();
    expect(await askWarm(['tidy', '--repo', t.repo], { stateDir: t.state, self: FLUME_BIN, env })).toBeUndefined();
    const { buildOf, environmentOf } = await import('../../../core/cli/warm.js');
    const raw = await new Promise<string>((done) => {
      const client = createConnection(socket);
      let text = '';
      client.on('connect', () => client.write(JSON.stringify({ argv: ['drop', 'hold/one', '--repo', t.repo], build: buildOf(FLUME_BIN), env: environmentOf(env), isTTY: false }) + '\n'));
      client.on('data', (d) => (text += d));
      client.on('close', () => done(text));
    });
    expect(JSON.parse(raw)).toEqual({ refused: 'not a read command' });
    expect(t.record('hold--one')?.dropped).toBeUndefined();
  });

  it('the socket goes with the supervisor, and status then runs alone', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'Working on it.' }] }] }, { kinds: [HOLD] });
    await t.launch('hold', 'two', 'the other thing');
    const watch = t.watch();
    const socket = join(t.state, 'watch.sock');
    await waitForFile(socket, "the supervisor's socket");
    await watch.stop();
    expect(existsSync(socket)).toBe(false);
    const after = await t.flume(['status', '--json']);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout).supervisor).toMatchObject({ running: false });
  });
});
