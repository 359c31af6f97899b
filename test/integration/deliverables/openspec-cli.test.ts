import { describe, it, expect, afterAll } from 'vitest';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { run } from '../../../core/support/exec.js';
import { countTasks } from '../../../deliverables/index.js';
import { prng, randomTasksFile } from './random-tasks.js';

const MAIN = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(MAIN, 'node_modules/.bin/openspec');
const SAMPLE = join(MAIN, 'test/fixtures/openspec-1.13.2/tasks.sample.md');
const SEED = 0x5eed_f1;
const CASES = 300;
const PER_CALL = 50;

const folders: string[] = [];
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

/** Writes each text as a change's tasks.md (undefined: no tasks.md) and returns what `openspec list --json` counted. */
async function openspecList(texts: Array<string | undefined>): Promise<Map<string, { done: number; total: number }>> {
  const folder = await mkdtemp(join(tmpdir(), 'flume-openspec-'));
  folders.push(folder);
  await Promise.all(
    texts.map(async (text, index) => {
      const change = join(folder, 'openspec/changes', name(index));
      await mkdir(change, { recursive: true });
      await writeFile(join(change, 'proposal.md'), '## Why\n\nA test.\n');
      if (text !== undefined) await writeFile(join(change, 'tasks.md'), text);
    }),
  );
  const out = await run(CLI, ['list', '--json'], { cwd: folder, env: { OPENSPEC_TELEMETRY: '0', NO_COLOR: '1' } });
  expect(out.exitCode, out.stderr).toBe(0);
  const listed: Array<{ name: string; completedTasks: number; totalTasks: number }> = JSON.parse(out.stdout).changes;
  return new Map(listed.map((change) => [change.name, { done: change.completedTasks, total: change.totalTasks }]));
}

const name = (index: number) => `c${String(index).padStart(3, '0')}`;

describe('countTasks agrees with the openspec CLI 1.13.2', () => {
  it('is the installed CLI 1.13.2', async () => {
    const pkg = JSON.parse(await readFile(join(MAIN, 'node_modules/@fission-ai/openspec/package.json'), 'utf8'));
    expect(pkg.version).toBe('1.13.2');
  });

  it(`on ${CASES} random tasks.md files, the sample fixture and a missing file (openspec list --json)`, async () => {
    const random = prng(SEED);
    const texts: Array<string | undefined> = [await readFile(SAMPLE, 'utf8'), undefined];
    while (texts.length < CASES + 2) texts.push(randomTasksFile(random));
    const disagreements: Array<{ change: string; text: string | undefined; cli: unknown; ours: unknown }> = [];
    for (let start = 0; start < texts.length; start += PER_CALL) {
      const batch = texts.slice(start, start + PER_CALL);
      const listed = await openspecList(batch);
      expect(listed.size).toBe(batch.length);
      batch.forEach((text, offset) => {
        const cli = listed.get(name(offset));
        const ours = countTasks(text ?? '');
        if (JSON.stringify(cli) !== JSON.stringify(ours)) disagreements.push({ change: name(start + offset), text, cli, ours });
      });
    }
    expect(disagreements).toEqual([]);
    expect(countTasks(texts[0]!)).toEqual({ done: 5, total: 14 });
  });

  it('on 20,000 more random files, against the CLI\'s own counting function in process', async () => {
    const module = pathToFileURL(join(MAIN, 'node_modules/@fission-ai/openspec/dist/utils/task-progress.js')).href;
    const { countTasksFromContent } = (await import(module)) as { countTasksFromContent(text: string): { total: number; completed: number } };
    const random = prng(SEED + 1);
    let checked = 0;
    let withTasks = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = randomTasksFile(random);
      const cli = countTasksFromContent(text);
      expect(countTasks(text), JSON.stringify(text)).toEqual({ done: cli.completed, total: cli.total });
      checked++;
      if (cli.total > 0) withTasks++;
    }
    expect(checked).toBe(20_000);
    expect(withTasks).toBeGreaterThan(10_000);
  });

  it('draws files that the grammars openspec dropped would count differently', () => {
    const random = prng(SEED);
    const old = /^\s*[-*]\s*\[([\sxX])\]\s*(.*)/;
    let differ = 0;
    for (let i = 0; i < CASES; i++) {
      const text = randomTasksFile(random);
      const lines = text.split('\n').filter((line) => old.test(line));
      const oldCount = { done: lines.filter((line) => /[xX]/.test(old.exec(line)![1])).length, total: lines.length };
      if (JSON.stringify(oldCount) !== JSON.stringify(countTasks(text))) differ++;
    }
    expect(differ).toBeGreaterThan(CASES / 3);
  });
});
