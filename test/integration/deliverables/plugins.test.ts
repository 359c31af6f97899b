import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createFlume } from '../../../core/api/plugin.js';
import { definePlugin } from '../../../core/api/plugin.js';
import { defineDeliverable } from '../../../core/api/deliverable.js';
import { deliverablePlugins } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';

const TYPES = ['commit', 'openspec-change', 'openspec-tasks', 'report', 'conclusion', 'landing'];

let repo: TestRepo;
beforeAll(async () => {
  repo = await makeRepo();
});
afterAll(() => repo.remove());

describe('deliverablePlugins', () => {
  it('registers one reader per type, each tap named flume:deliverable:<type>, and sluice\'s before git\'s for landing', async () => {
    const plugins = deliverablePlugins();
    expect(plugins.map((plugin) => plugin.name)).toEqual([...TYPES.map((type) => `flume:deliverable:${type}`), 'flume:deliverable:sluice']);
    const flume = await createFlume({ plugins });
    for (const type of TYPES) {
      const taps = type === 'landing' ? ['flume:deliverable:sluice', 'flume:deliverable:landing'] : [`flume:deliverable:${type}`];
      expect(flume.hooks.readDeliverable.get(type)?.taps.map((tap) => tap.name)).toEqual(taps);
    }
    // sluice takes over the landing reader in the registry, in its own name.
    expect([flume.deliverables.owner('landing'), flume.deliverables.replaced('landing')]).toEqual(['flume:deliverable:sluice', 'flume:deliverable:landing']);
  });

  it('lets a plugin that replaces landing answer first, and hand the reading to the reader it replaced when it has no record', async () => {
    let records: Record<string, boolean> = {};
    const sluice = definePlugin({
      name: 'test:sluice',
      apply(flume) {
        const replaced = flume.deliverables.get('landing');
        flume.deliverables.add(
          defineDeliverable({
            type: 'landing',
            landing: true,
            read: async (request) => (request.place.branch in records ? { present: records[request.place.branch], what: 'sluice record' } : replaced?.read(request)),
          }),
          { replace: true },
        );
      },
    });
    const flume = await createFlume({ plugins: [...deliverablePlugins(), sluice] });
    const place = await makePlace(repo, 'fix', 'submitted', 'submission');
    await repo.commit(place.path, { 'work.txt': 'work\n' });
    const read = async () => flume.hooks.readDeliverable.for('landing').promise(await deliverableRequest(place, { type: 'landing' }));
    expect(await read()).toMatchObject({ present: false, what: '1 patch not on main' });
    records = { [place.branch]: true };
    expect(await read()).toEqual({ present: true, what: 'sluice record' });
  });
});
