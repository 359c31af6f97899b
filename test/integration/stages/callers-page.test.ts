/**
 * docs/callers.md, run: its shell script and its Python program are written out exactly as the page
 * shows them and run as a caller runs them, `flume` on PATH (the built bin, first), against a
 * repository whose scripted fake agent commits (or lands) when prompted, in real tmux, with the
 * supervisor the programs' own launch starts. The shell script drives the page's `.flumerc.json`
 * through its gate; the Python program declares its own kind, is refused until the test (the
 * operator) trusts what it wrote, then runs every stage in its own order.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import { FLUME_BIN } from '../../helpers/repo.js';
import { validResult } from '../../helpers/result-schema.js';
import { LONG, PROJECT, promptsOf, repoFor, type StageRepo } from './helpers.js';

const PAGE = join(PROJECT, 'docs', 'callers.md');

/** The page's code blocks, by the file each names (`<!-- file: review.sh -->` before the block). */
function blocks(): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of readFileSync(PAGE, 'utf8').matchAll(/<!-- file: (\S+) -->\n```(?:json|sh|python)\n([\s\S]*?)```/g)) found.set(match[1], match[2]);
  return found;
}

/** Writes the page's file `name` into a folder of the test's own; answers its path. */
function pageFile(t: StageRepo, name: string): string {
  const dir = join(t.configDir, 'caller');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, blocks().get(name)!);
  chmodSync(path, 0o755);
  return path;
}

/** Runs a program as a caller would, with `flume` (the built bin) first on PATH; never throws. */
async function runCaller(t: StageRepo, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = join(t.configDir, 'path');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'flume'), `#!/bin/sh\nexec "${process.execPath}" "${FLUME_BIN}" "$@"\n`);
  chmodSync(join(bin, 'flume'), 0o755);
  const env = { ...t.env, PATH: `${bin}:${t.env.PATH}` };
  try {
    const { stdout, stderr } = await promisify(execFile)(argv[0], argv.slice(1), { cwd: t.repo, env, encoding: 'utf8', timeout: 240_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** Every event of the repository's stream, checked against events.schema.json. */
async function streamOf(t: StageRepo): Promise<any[]> {
  const result = await t.flume(['events', '--repo', t.repo, '--json']);
  if (result.code !== 0) throw new Error(`events failed: ${result.stdout}${result.stderr}`);
  return result.stdout.split('\n').filter(Boolean).map((line) => validResult('events', JSON.parse(line), 'events --json'));
}

/** An event by its name and the stage it concerns (for `awaits-caller`, the stage that delivered). */
function step(event: any): string {
  return `${event.event} ${(event.event === 'awaits-caller' ? event.after : event.stage) ?? ''}`.trim();
}

describe.concurrent('the "Driving flume from a program" page', { timeout: LONG }, () => {
  it('has a config, a shell script and a Python program using its standard library alone, and is linked from the README', ({ expect }) => {
    expect([...blocks().keys()]).toEqual(['.flumerc.json', 'review.sh', 'crew.py']);
    for (const [, module] of blocks().get('crew.py')!.matchAll(/^(?:import|from) (\S+)/gm)) expect(['json', 'os', 'subprocess', 'sys']).toContain(module);
    expect(readFileSync(join(PROJECT, 'README.md'), 'utf8')).toContain('docs/callers.md');
  });

  it('runs the shell script: the gate holds after the code stage, `next` goes on with its note, and the stream shows it all', async ({ expect, onTestFinished }) => {
    // The page's .flumerc.json, with the test's agent settings beside it.
    const t = repoFor({ onTestFinished }, {}, JSON.parse(blocks().get('.flumerc.json')!));
    t.script({
      onPrompt: [
        { match: '^Fix this', actions: [{ run: [t.commit, 'fix.txt'] }, { say: 'Fixed.' }] },
        // Unanchored: a prompt of four lines or more reaches the fake pasted, inside tags.
        { match: 'Review ', actions: [{ run: [t.commit, 'REVIEW.md'] }, { say: 'Reviewed.' }] },
      ],
    });
    // Trusted as the operator trusts it (the program run below goes through no helper that would).
    expect((await t.flume(['trust', '--repo', t.repo])).code).toBe(0);
    const ran = await runCaller(t, ['sh', pageFile(t, 'review.sh'), t.repo, 'one', 'the typo in README.md.']);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const lines = ran.stdout.trimEnd().split('\n').map((line) => line.trimEnd());
    expect(lines[0]).toMatch(/^at the gate after code: commit [0-9a-f]{7,}$/);
    expect(lines[1]).toMatch(/^review delivered commit [0-9a-f]{7,}$/);
    // The place's events as the stream had them when the script read it (more may follow: its agent
    // stopped, the launch finished): ids in order, the gate between the two stages.
    const events = (await streamOf(t)).filter((e) => e.place === 'reviewed/one');
    const printed = lines.slice(2);
    expect(printed).toEqual(events.slice(0, printed.length).map((e) => `#${e.id} ${e.event} ${e.stage ?? ''}`.trimEnd()));
    const names = events.slice(0, printed.length).map(step);
    expect(names.indexOf('awaits-caller code')).toBeGreaterThan(names.indexOf('stage-started code'));
    expect(names.indexOf('stage-started review')).toBeGreaterThan(names.indexOf('awaits-caller code'));
    expect(promptsOf(t.record('reviewed--one').stage.agent.transcriptPath)[0]).toMatch(/\n\nThe operator's notes for this round:\nKeep the old behaviour behind a flag\.$/);
  });

  it('runs the Python program: refused until its kind is trusted, then each stage in its own order, each end read with what it delivered', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        { match: '^Settle', actions: [{ run: [t.commit, 'settled.txt'] }, { say: 'Settled.' }] },
        { match: '^Fix round', actions: [{ run: [t.commit, 'fixed.txt'] }, { say: 'Fixed.' }] },
        { match: '^Merge', actions: [{ run: [t.land] }, { say: 'Merged.' }] },
      ],
    });
    const before = JSON.parse(readFileSync(join(t.repo, '.flumerc.json'), 'utf8'));
    expect((await t.flume(['trust', '--repo', t.repo])).code).toBe(0);
    const crew = pageFile(t, 'crew.py');
    const argv = ['python3', crew, t.repo, 'u1', 'Ship the parser.'];

    // Its kind written in, the config has changed: nothing is launched until a person trusts it.
    const refused = await runCaller(t, argv);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/^UNTRUSTED_CONFIG: /);
    const config = JSON.parse(readFileSync(join(t.repo, '.flumerc.json'), 'utf8'));
    expect(config).toMatchObject({ ...before, kinds: [{ name: 'unit', advance: 'caller' }] });
    expect(await t.view('unit/u1')).toBeUndefined();
    const trusted = await t.flume(['trust', '--repo', t.repo]);
    expect(trusted.code, trusted.stdout + trusted.stderr).toBe(0);

    const ran = await runCaller(t, argv);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    // The file was left as it was: the trust holds.
    expect(JSON.parse(readFileSync(join(t.repo, '.flumerc.json'), 'utf8'))).toEqual(config);
    const lines = ran.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^fixround: commit [0-9a-f]{7,}$/);
    expect(lines[1]).toMatch(/^settle: commit [0-9a-f]{7,}$/);
    expect(lines[2]).toMatch(/^merge: \S/);
    // Each stage started by the program alone, in its order, each after the one before had ended.
    const events = (await streamOf(t)).filter((e) => e.place === 'unit/u1');
    const steps = events.filter((e) => e.event === 'stage-started' || e.event === 'awaits-caller').map(step);
    expect(steps).toEqual(['awaits-caller', 'stage-started fixround', 'awaits-caller fixround', 'stage-started settle', 'awaits-caller settle', 'stage-started merge']);
    expect(events.filter((e) => e.event === 'delivered').map((e) => e.what)).toEqual(lines.map((line) => line.slice(line.indexOf(': ') + 2)));
  });
});
