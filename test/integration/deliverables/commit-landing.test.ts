import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createFlume, type Flume } from '../../../core/api/plugin.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import { deliverablePlugins } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';

let repo: TestRepo;
let flume: Flume;
const read = (request: DeliverableRequest) => flume.hooks.readDeliverable.for(request.options.type).promise(request);

beforeAll(async () => {
  repo = await makeRepo();
  flume = await createFlume({ plugins: deliverablePlugins() });
});
afterAll(() => repo.remove());

describe('commit', () => {
  it('is absent while the head is the one the stage began at', async () => {
    const place = await makePlace(repo, 'fix', 'quiet');
    const reading = await read(await deliverableRequest(place, { type: 'commit' }));
    expect(reading).toEqual({ present: false, facts: { head: place.base, startHead: place.base } });
  });

  it('is present on a commit made since the stage began, named by its short sha', async () => {
    const place = await makePlace(repo, 'fix', 'worked');
    const head = await repo.commit(place.path, { 'src.txt': 'fixed\n' }, 'fix it');
    const reading = await read(await deliverableRequest(place, { type: 'commit' }));
    expect(reading).toMatchObject({ present: true, what: `commit ${head.slice(0, 7)}`, facts: { head, startHead: place.base } });
  });

  it('is absent when the branch was moved back to a commit older than the stage', async () => {
    const older = await repo.commit(repo.root, { 'old.txt': 'old\n' }, 'old', '2020-01-01T00:00:00Z');
    await repo.commit(repo.root, { 'new.txt': 'new\n' }, 'new');
    const place = await makePlace(repo, 'fix', 'reset');
    await repo.git(['reset', '--hard', '--quiet', older], place.path);
    const reading = await read(await deliverableRequest(place, { type: 'commit' }));
    expect(reading).toMatchObject({ present: false, facts: { head: older, olderThanStage: true } });
  });

  it('counts a commit made in the second the stage began (git keeps whole seconds)', async () => {
    const place = await makePlace(repo, 'fix', 'same-second');
    place.stage = { ...place.stage!, startedAt: '2030-01-01T00:00:05.900Z' };
    await repo.commit(place.path, { 'a.txt': 'a\n' }, 'early', '2030-01-01T00:00:04Z');
    expect((await read(await deliverableRequest(place, { type: 'commit' })))?.present).toBe(false);
    await repo.commit(place.path, { 'b.txt': 'b\n' }, 'same second', '2030-01-01T00:00:05Z');
    expect((await read(await deliverableRequest(place, { type: 'commit' })))?.present).toBe(true);
  });

  it('is absent and unknown for a place with no stage recorded', async () => {
    const place = await makePlace(repo, 'fix', 'no-stage');
    delete place.stage;
    const reading = await read(await deliverableRequest(place, { type: 'commit' }));
    expect(reading).toMatchObject({ present: false, facts: { unknown: true } });
  });
});

describe('landing', () => {
  it('is absent while patches are not on the target, and names how many', async () => {
    const place = await makePlace(repo, 'fix', 'unlanded');
    await repo.commit(place.path, { 'one.txt': 'one\n' }, 'one');
    let reading = await read(await deliverableRequest(place, { type: 'landing' }));
    expect(reading).toEqual({ present: false, what: '1 patch not on main', facts: { target: 'main', unlanded: 1, by: 'patch' } });
    await repo.commit(place.path, { 'two.txt': 'two\n' }, 'two');
    reading = await read(await deliverableRequest(place, { type: 'landing' }));
    expect(reading).toMatchObject({ present: false, what: '2 patches not on main' });
  });

  it('is present once every patch reached the target under other ids (cherry-picked after other work)', async () => {
    const place = await makePlace(repo, 'fix', 'landed');
    const one = await repo.commit(place.path, { 'landed-one.txt': 'one\n' }, 'one');
    const two = await repo.commit(place.path, { 'landed-two.txt': 'two\n' }, 'two');
    await repo.commit(repo.root, { 'other.txt': 'other work\n' }, 'other work on main');
    await repo.git(['cherry-pick', one]);
    expect(await read(await deliverableRequest(place, { type: 'landing' }))).toMatchObject({ present: false, what: '1 patch not on main' });
    await repo.git(['cherry-pick', two]);
    const reading = await read(await deliverableRequest(place, { type: 'landing' }));
    expect(reading).toEqual({ present: true, what: 'landed on main', facts: { target: 'main', unlanded: 0, by: 'patch-and-content' } });
    expect(await repo.git(['rev-parse', 'main'])).not.toBe(two);
  });

  it('is absent and unknown when git cannot judge it (the target is gone)', async () => {
    const place = await makePlace(repo, 'fix', 'no-target');
    place.target = 'gone';
    const reading = await read(await deliverableRequest(place, { type: 'landing' }));
    expect(reading).toMatchObject({ present: false, facts: { target: 'gone', unknown: true } });
  });
});
