import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../../core/support/exec.js';
import { createFlume, type Flume } from '../../../core/api/plugin.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import { deliverablePlugins } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';

const MAIN = fileURLToPath(new URL('../../../', import.meta.url));
const SAMPLE = join(MAIN, 'test/fixtures/openspec-1.13.2/tasks.sample.md');
const PROPOSAL = '## Why\n\nWidgets.\n\n## What Changes\n\n- A widget.\n';
const tasks = (done: number, total: number, eol = '\n') =>
  ['## 1. Work', ...Array.from({ length: total }, (_, i) => `- [${i < done ? 'x' : ' '}] 1.${i + 1} step`)].join(eol) + eol;

let repo: TestRepo;
let flume: Flume;
const read = (request: DeliverableRequest) => flume.hooks.readDeliverable.for(request.options.type).promise(request);

beforeAll(async () => {
  repo = await makeRepo();
  flume = await createFlume({ plugins: deliverablePlugins() });
});
afterAll(() => repo.remove());

describe('openspec-change', () => {
  it('is absent until proposal.md and tasks.md are both committed in openspec/changes/<name>/', async () => {
    const place = await makePlace(repo, 'change', 'add-widget', 'construct');
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toEqual({
      present: false,
      progress: { done: 0, total: 0 },
      facts: { change: 'add-widget', missing: ['proposal.md', 'tasks.md'] },
    });
    await repo.commit(place.path, { 'openspec/changes/add-widget/proposal.md': PROPOSAL });
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toMatchObject({
      present: false,
      facts: { missing: ['tasks.md'] },
    });
    await repo.commit(place.path, { 'openspec/changes/add-widget/tasks.md': await readFile(SAMPLE, 'utf8') });
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toEqual({
      present: true,
      what: 'change add-widget (14 tasks)',
      progress: { done: 5, total: 14 },
      facts: { change: 'add-widget', missing: [], tasks: 14 },
    });
  });

  it('reads its files in one batched git process', async () => {
    const place = await makePlace(repo, 'change', 'batched', 'construct');
    await repo.commit(place.path, { 'openspec/changes/batched/proposal.md': PROPOSAL, 'openspec/changes/batched/tasks.md': tasks(0, 2) });
    const request = await deliverableRequest(place, { type: 'openspec-change' });
    expect((await read(request))?.present).toBe(true);
    expect(request.catFiles).toBe(1);
  });

  it('does not count files written but not committed', async () => {
    const place = await makePlace(repo, 'change', 'uncommitted', 'construct');
    await repo.commit(place.path, { 'openspec/changes/uncommitted/proposal.md': PROPOSAL });
    await writeFile(join(place.path, 'openspec/changes/uncommitted/tasks.md'), tasks(0, 3));
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toMatchObject({ present: false, facts: { missing: ['tasks.md'] } });
  });

  it('reads the change a stage option names instead of the launch name', async () => {
    const place = await makePlace(repo, 'change', 'round-two', 'construct');
    await repo.commit(place.path, { 'openspec/changes/other-id/proposal.md': PROPOSAL, 'openspec/changes/other-id/tasks.md': tasks(1, 2) });
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toMatchObject({ present: false });
    expect(await read(await deliverableRequest(place, { type: 'openspec-change', change: 'other-id' }))).toMatchObject({
      present: true,
      progress: { done: 1, total: 2 },
      facts: { change: 'other-id' },
    });
  });

  it('takes a tasks.md that is a folder for a missing one', async () => {
    const place = await makePlace(repo, 'change', 'folder', 'construct');
    await repo.commit(place.path, { 'openspec/changes/folder/proposal.md': PROPOSAL, 'openspec/changes/folder/tasks.md/x.md': '- [ ] a\n' });
    expect(await read(await deliverableRequest(place, { type: 'openspec-change' }))).toMatchObject({ present: false, facts: { missing: ['tasks.md'] } });
  });

  it.each([['../escape'], ['archive'], [''], [42]])('refuses the change id %j with BAD_CONFIG, naming the plugin', async (change) => {
    const place = await makePlace(repo, 'change', `bad-${String(change).replace(/\W/g, '') || 'empty'}`, 'construct');
    await expect(read(await deliverableRequest(place, { type: 'openspec-change', change }))).rejects.toMatchObject({
      code: 'BAD_CONFIG',
      plugin: 'flume:deliverable:openspec-change',
    });
  });
});

describe('openspec-tasks', () => {
  it('shows progress while code works and is present only when every task is ticked', async () => {
    const place = await makePlace(repo, 'change', 'ticking');
    const file = 'openspec/changes/ticking/tasks.md';
    await repo.commit(place.path, { 'openspec/changes/ticking/proposal.md': PROPOSAL, [file]: tasks(3, 8) });
    expect(await read(await deliverableRequest(place, { type: 'openspec-tasks' }))).toEqual({
      present: false,
      what: '3 of 8 tasks',
      progress: { done: 3, total: 8 },
      facts: { change: 'ticking' },
    });
    await repo.commit(place.path, { [file]: tasks(8, 8, '\r\n') });
    expect(await read(await deliverableRequest(place, { type: 'openspec-tasks' }))).toEqual({
      present: true,
      what: '8 of 8 tasks',
      progress: { done: 8, total: 8 },
      facts: { change: 'ticking' },
    });
  });

  it('agrees with `openspec list` run on the same worktree', async () => {
    const place = await makePlace(repo, 'change', 'agree');
    await repo.commit(place.path, { 'openspec/changes/agree/proposal.md': PROPOSAL, 'openspec/changes/agree/tasks.md': await readFile(SAMPLE, 'utf8') });
    const reading = await read(await deliverableRequest(place, { type: 'openspec-tasks' }));
    const cli = join(MAIN, 'node_modules/.bin/openspec');
    const out = await run(cli, ['list', '--json'], { cwd: place.path, env: { OPENSPEC_TELEMETRY: '0' } });
    const listed = JSON.parse(out.stdout).changes.find((change: { name: string }) => change.name === 'agree');
    expect(reading?.progress).toEqual({ done: listed.completedTasks, total: listed.totalTasks });
    expect(reading).toMatchObject({ present: false, what: '5 of 14 tasks' });
  });

  it('is absent for a tasks.md with no task, and for a missing one', async () => {
    const place = await makePlace(repo, 'change', 'prose');
    expect(await read(await deliverableRequest(place, { type: 'openspec-tasks' }))).toEqual({
      present: false,
      what: '0 of 0 tasks',
      progress: { done: 0, total: 0 },
      facts: { change: 'prose', missing: true },
    });
    await repo.commit(place.path, { 'openspec/changes/prose/tasks.md': '## 1. Work\n\n- write the code\n- [link](./x.md)\n' });
    expect(await read(await deliverableRequest(place, { type: 'openspec-tasks' }))).toMatchObject({ present: false, what: '0 of 0 tasks' });
  });
});
