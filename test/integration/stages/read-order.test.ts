import { describe, it } from 'vitest';
import type { AgentDriver } from '../../../core/api/agent.js';
import type { FlumePlugin } from '../../../core/api/plugin.js';
import { commit } from '../../helpers/repo.js';
import { LONG, repoFor } from './helpers.js';

// The deliverable is read (with the branch) before the agent is: an agent that commits and then ends
// its turn between the two readings is seen stopped while its commit is not yet seen. Here the commit
// is made at the very moment flume reads the agent (a driver that commits, then reads), so the window
// is hit every time. Status and a step are run in this process, with that driver in place of Claude's.

/** The built-in plugins, with Claude's driver wrapped: `before()` runs as the agent is read, once after `arm()`. */
async function presetWithHook(before: () => void) {
  const { defaultPreset } = await import('../../../plugins/defaults.js');
  let armed = false;
  const wrap: FlumePlugin = {
    name: 'test:read-hook',
    apply(flume) {
      const driver = flume.agents.get('claude-code')!;
      const once = () => {
        if (armed) (armed = false), before();
      };
      const wrapped: AgentDriver = {
        ...driver,
        read: (handle) => (once(), driver.read(handle)),
        ...(driver.readMany ? { readMany: (handles) => (once(), driver.readMany!(handles)) } : {}),
      };
      flume.agents.add(wrapped, { replace: true });
    },
  };
  return { preset: async () => [...(await defaultPreset()), wrap], arm: () => (armed = true) };
}

describe('an agent that commits and stops while flume reads it', { timeout: LONG }, () => {
  it('is seen delivered, never stopped short, by status and by a step', async ({ expect, onTestFinished }) => {
    const one = { name: 'one', stages: [{ name: 'code', prompt: 'Make the change: {brief}', deliverable: 'commit' }] };
    const t = repoFor({ onTestFinished }, {}, { kinds: [one] });
    // The agent ends its turn without a commit: alone, that is a stage stopped short.
    t.script({ onPrompt: [{ match: '^Make the change', actions: [{ say: 'Done.' }] }] });
    process.env.FLUME_STATE_DIR = t.state;
    const { status } = await import('../../../core/engine/status/status.js');
    const { openRepository } = await import('../../../core/config/repository.js');
    const { advance } = await import('../../../core/engine/stage/step.js');

    const seen = await t.launch('one', 'seen', 'Add seen.txt.');
    const stepped = await t.launch('one', 'stepped', 'Add stepped.txt.');
    for (const id of ['one/seen', 'one/stepped']) await t.until(id, (p) => p?.stage?.state === 'waiting' && p.stage.needs === 'Done.', `${id} to read stopped short`);

    // Status: the reading is taken, then the agent commits and stops as it is read.
    const forStatus = await presetWithHook(() => commit(seen.path, 'seen.txt', 'seen'));
    forStatus.arm();
    const report = await status(forStatus.preset, { repo: t.repo, place: 'one/seen' });
    expect(report.places[0]!.stage).toMatchObject({ state: 'delivered', delivered: { what: expect.stringContaining('commit') } });
    expect(report.places[0]!.stage!.needs).toBeUndefined();

    // A step (the launch's own step may have recorded the wait already): the stage is recorded delivered at once.
    const forStep = await presetWithHook(() => commit(stepped.path, 'stepped.txt', 'stepped'));
    const repository = await openRepository(t.repo, await forStep.preset());
    forStep.arm();
    const { actions, record } = await advance(repository, 'one--stepped');
    expect(actions.map((a) => a.type)).not.toContain('mark-waiting');
    expect(actions[0]?.type).toBe('mark-delivered');
    expect(record?.history.at(-1) ?? record?.stage).toMatchObject({ name: 'code' });
    expect(t.events('one--stepped').map((e) => e.event)).toContain('mark-delivered');
  });
});
