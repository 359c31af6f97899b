import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createFlume, type Flume } from '../../../core/api/plugin.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import { resolveRevision } from '../../../core/support/git.js';
import { countTasks, deliverablePlugins } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';

// Book, "Reading a deliverable": flume reads the head once, then everything at that head, so an
// agent's last tick that lands between two reads never shows a deliverable that is not there.

const tasks = (done: number, total = 8) => Array.from({ length: total }, (_, i) => `- [${i < done ? 'x' : ' '}] ${i + 1} step`).join('\n') + '\n';
const TASKS = (name: string) => `openspec/changes/${name}/tasks.md`;

let repo: TestRepo;
let flume: Flume;
const read = (request: DeliverableRequest) => flume.hooks.readDeliverable.for(request.options.type).promise(request);

beforeAll(async () => {
  repo = await makeRepo();
  flume = await createFlume({ plugins: deliverablePlugins() });
});
afterAll(() => repo.remove());

describe('a tick committed between reads', () => {
  it('is not seen by a reading of the head read before it', async () => {
    const place = await makePlace(repo, 'change', 'last-tick');
    await repo.commit(place.path, { [TASKS('last-tick')]: tasks(7) });
    const request = await deliverableRequest(place, { type: 'openspec-tasks' });
    const after = await repo.commit(place.path, { [TASKS('last-tick')]: tasks(8) }, 'tick the last task');
    expect(await read(request)).toMatchObject({ present: false, what: '7 of 8 tasks' });
    expect(await read(await deliverableRequest(place, { type: 'openspec-tasks' }))).toMatchObject({ present: true, what: '8 of 8 tasks' });
    expect(after).not.toBe(request.head);
  });

  it('is not seen by a code stage\'s commit reading, nor a verify report\'s', async () => {
    const place = await makePlace(repo, 'change', 'late-commit', 'verify');
    const commitRequest = await deliverableRequest(place, { type: 'commit' });
    const reportRequest = await deliverableRequest(place, { type: 'report' });
    await repo.commit(place.path, { 'openspec/changes/late-commit/verify.md': 'Verdict: pass\n' }, 'verify');
    expect(await read(commitRequest)).toMatchObject({ present: false });
    expect(await read(reportRequest)).toMatchObject({ present: false, facts: { problem: 'missing' } });
  });

  it('is not seen even when it lands in the middle of a reader\'s reads', async () => {
    const place = await makePlace(repo, 'change', 'mid-read', 'construct');
    await repo.commit(place.path, { 'openspec/changes/mid-read/proposal.md': '## Why\n' });
    const request = await deliverableRequest(place, { type: 'openspec-change' });
    let landing: Promise<string> | undefined;
    // The agent commits tasks.md after the reader has begun and before git answers its first read.
    const land = () => (landing ??= repo.commit(place.path, { [TASKS('mid-read')]: tasks(0) }, 'add tasks'));
    const racing: DeliverableRequest = {
      ...request,
      list: (path) => land().then(() => request.list(path)),
      file: (path) => land().then(() => request.file(path)),
    };
    expect(await read(racing)).toMatchObject({ present: false, facts: { missing: ['tasks.md'] } });
    expect(await resolveRevision(repo.root, `refs/heads/${place.branch}`)).toBe(await landing);
  });

  it('never shows a reading that disagrees with the commit it was read at, while ticks land', async () => {
    const place = await makePlace(repo, 'change', 'busy');
    await repo.commit(place.path, { [TASKS('busy')]: tasks(0) });
    let ticking = true;
    const ticks = (async () => {
      for (let done = 1; done <= 8; done++) await repo.commit(place.path, { [TASKS('busy')]: tasks(done) }, `tick ${done}`);
      ticking = false;
    })();
    const seen: Array<{ head: string; present: boolean; done: number }> = [];
    while (ticking || seen.length === 0) {
      const request = await deliverableRequest(place, { type: 'openspec-tasks' });
      const reading = await read(request);
      seen.push({ head: request.head, present: reading!.present, done: reading!.progress!.done });
    }
    await ticks;
    for (const { head, present, done } of seen) {
      const atHead = countTasks(await repo.git(['show', `${head}:${TASKS('busy')}`]));
      expect({ head, present, done }).toEqual({ head, present: atHead.done === 8, done: atHead.done });
    }
    expect(seen.length).toBeGreaterThan(1);
  });
});
