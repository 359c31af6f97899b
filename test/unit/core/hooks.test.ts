/**
 * The hooks' boundary with plugins: an error names the plugin whose tap threw it, per call, however
 * many calls overlap; a malformed return is PLUGIN_BAD_RETURN naming the plugin; a plugin's own
 * error code is kept; the keys tapped are known without tapable's private fields.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { callHook, tappedKeys } from '../../../core/api/hooks.js';
import { createFlume, definePlugin, type Flume } from '../../../core/api/plugin.js';
import { FlumeError } from '../../../core/api/errors.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import { PROJECT } from '../../helpers/repo.js';

const flumeWith = (...plugins: { name: string; apply(flume: Flume): void }[]) => createFlume({ plugins: plugins.map(definePlugin) });
const probe = (who: string) => ({ options: { type: 'probe', who } }) as unknown as DeliverableRequest;
const rejection = async (promise: Promise<unknown>): Promise<FlumeError> => {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FlumeError);
  return error as FlumeError;
};

describe('the failing plugin, named per call', () => {
  it('overlapping calls: every error names the plugin that threw, never the one that ran last', async () => {
    const flume = await flumeWith(
      {
        // Tapped first: answers only the calls meant for it, and passes the others on to acme:slow.
        name: 'acme:fast',
        apply: (f) => f.hooks.readDeliverable.for('probe').tapPromise('acme:fast', async (request) => ((request.options.who === 'fast' ? { present: true, what: 'fast' } : undefined))),
      },
      {
        name: 'acme:slow',
        apply: (f) =>
          f.hooks.readDeliverable.for('probe').tapPromise('acme:slow', async () => {
            await sleep(40);
            throw new Error('slow broke');
          }),
      },
    );
    const hook = flume.hooks.readDeliverable.get('probe')!;
    const call = (who: string) => callHook('readDeliverable(probe)', hook, probe(who)).then((reading) => ({ reading }), (error: unknown) => ({ error }));
    // The slow calls are inside acme:slow when the fast ones start and finish, as the supervisor's
    // Promise.all over many places has them.
    const results = await Promise.all([call('slow'), call('slow'), call('slow'), sleep(10).then(() => call('fast')), sleep(15).then(() => call('fast'))]);
    for (const result of results.slice(0, 3)) {
      const error = (result as { error: FlumeError }).error;
      expect(error).toBeInstanceOf(FlumeError);
      expect(error.plugin).toBe('acme:slow');
      expect(error.code).toBe('PLUGIN_FAILED');
      expect(error.message).toBe('[acme:slow] readDeliverable(probe) failed: slow broke');
    }
    for (const result of results.slice(3)) expect(result).toEqual({ reading: { present: true, what: 'fast' } });
  });

  it('a sync tap, a callback tap and a promise tap that throws before its promise each name themselves', async () => {
    const flume = await flumeWith({
      name: 'acme:styles',
      apply(f) {
        f.hooks.beforeTidy.tap('acme:sync', () => {
          throw new Error('sync broke');
        });
        f.hooks.readDeliverable.for('cb').tapAsync('acme:callback', (_request, done) => setTimeout(() => done(new Error('callback broke')), 5));
        f.hooks.readDeliverable.for('early').tapPromise('acme:early', () => {
          throw new Error('early broke');
        });
      },
    });
    expect((await rejection(callHook('beforeTidy', flume.hooks.beforeTidy, { place: {} as never }))).plugin).toBe('acme:sync');
    const cb = await rejection(callHook('readDeliverable(cb)', flume.hooks.readDeliverable.get('cb')!, probe('x')));
    expect([cb.plugin, cb.hook, cb.message]).toEqual(['acme:callback', 'readDeliverable(cb)', '[acme:callback] readDeliverable(cb) failed: callback broke']);
    expect((await rejection(callHook('readDeliverable(early)', flume.hooks.readDeliverable.get('early')!, probe('x')))).plugin).toBe('acme:early');
  });
});

describe('returns checked at the boundary', () => {
  const badTaps = (f: Flume) => {
    f.hooks.readDeliverable.for('bad').tapPromise('acme:reader', async () => ({ present: 'yes', progress: { done: 1 }, needs: 3, readFrom: '/x/record.json' }) as never);
    f.hooks.startAgent.for('acme').tapPromise('acme:driver', async () => ({ driver: 'acme', host: 'tmux', cwd: '/x', startedAt: 'now' }) as never);
    f.hooks.startAgent.for('other').tapPromise('acme:driver', async (r) => ({ driver: 'acme', sessionId: r.sessionId, host: 'tmux', cwd: '/x', startedAt: 'now' }));
    f.hooks.confirmPrompt.for('acme').tapPromise('acme:driver', async () => 'done' as never);
    f.hooks.planAgent.for('acme').tapPromise('acme:driver', async () => ({ command: 'claude --go', cwd: '/x', host: 'tmux' }) as never);
    f.hooks.beforeTidy.tapPromise('acme:veto', async () => 42 as never);
  };

  it('a malformed reading, handle, prompt state, agent reading, plan or veto is PLUGIN_BAD_RETURN naming the plugin and each problem', async () => {
    const flume = await flumeWith({ name: 'acme:bad', apply: badTaps });
    const { hooks } = flume;
    const request = { sessionId: 's-1' } as never;
    const cases: [Promise<unknown>, string, string, RegExp[]][] = [
      [callHook('readDeliverable(bad)', hooks.readDeliverable.get('bad')!, probe('x')), 'acme:reader', 'readDeliverable(bad)', [/"present" must be true or false, got "yes"/, /"progress" must be \{ done, total \}/, /"needs" must be a string, got 3/, /"readFrom" must be an array of strings/]],
      [callHook('startAgent(acme)', hooks.startAgent.get('acme')!, request), 'acme:driver', 'startAgent(acme)', [/"sessionId" is missing/]],
      [callHook('startAgent(other)', hooks.startAgent.get('other')!, request), 'acme:driver', 'startAgent(other)', [/"driver" must be "other"/]],
      [callHook('confirmPrompt(acme)', hooks.confirmPrompt.get('acme')!, request), 'acme:driver', 'confirmPrompt(acme)', [/expected one of "taken", "held", "not-yet", "unknown", got "done"/]],
      [callHook('planAgent(acme)', hooks.planAgent.get('acme')!, request), 'acme:driver', 'planAgent(acme)', [/"command" must be an array of strings/]],
      [callHook('beforeTidy', hooks.beforeTidy, { place: {} as never }), 'acme:veto', 'beforeTidy', [/expected a string/]],
    ];
    for (const [call, plugin, hook, problems] of cases) {
      const error = await rejection(call);
      expect([error.code, error.plugin, error.hook], error.message).toEqual(['PLUGIN_BAD_RETURN', plugin, hook]);
      expect(error.message.startsWith(`[${plugin}] ${hook} returned`)).toBe(true);
      for (const problem of problems) expect(error.message).toMatch(problem);
      expect(error.fix).toContain(plugin);
      expect(error.toJSON()).toMatchObject({ code: 'PLUGIN_BAD_RETURN', plugin, hook });
    }
  });

  it('a null from a bail tap is malformed (tapable would take it as the answer); undefined passes the call on', async () => {
    const flume = await flumeWith({
      name: 'acme:nulls',
      apply(f) {
        f.hooks.readDeliverable.for('n').tapPromise('acme:null', async () => null as never);
        f.hooks.readDeliverable.for('u').tapPromise('acme:pass', async () => undefined);
        f.hooks.readDeliverable.for('u').tapPromise('acme:answer', async () => ({ present: false, progress: { done: 0, total: 3 }, facts: { verdict: 'fix' } }));
      },
    });
    expect((await rejection(callHook('readDeliverable(n)', flume.hooks.readDeliverable.get('n')!, probe('x')))).code).toBe('PLUGIN_BAD_RETURN');
    expect(await callHook('readDeliverable(u)', flume.hooks.readDeliverable.get('u')!, probe('x'))).toEqual({ present: false, progress: { done: 0, total: 3 }, facts: { verdict: 'fix' } });
  });

  it('well-formed returns of every kind pass through unchanged', async () => {
    const handle = { driver: 'acme', sessionId: 's', host: 'tmux', pane: '%1', pid: 12, command: ['a', 'b'], cwd: '/x', startedAt: 't', data: { dir: '/d' }, extra: 1 };
    const flume = await flumeWith({
      name: 'acme:good',
      apply(f) {
        f.hooks.startAgent.for('acme').tapPromise('acme:good', async () => handle);
        f.hooks.confirmPrompt.for('acme').tap('acme:good', () => 'not-yet');
        f.hooks.beforeTidy.tapPromise('acme:good', async () => 'kept');
      },
    });
    expect(await callHook('startAgent(acme)', flume.hooks.startAgent.get('acme')!, {} as never)).toBe(handle);
    expect(await callHook('confirmPrompt(acme)', flume.hooks.confirmPrompt.get('acme')!, {} as never)).toBe('not-yet');
    expect(await callHook('beforeTidy', flume.hooks.beforeTidy, { place: {} as never })).toBe('kept');
  });
});

describe("a plugin's own error code, kept", () => {
  it('a FlumeError of a catalogue code, an Error with a code of its own, and a Node error', async () => {
    const withCode = Object.assign(new Error('quota spent'), { code: 'ACME_QUOTA', fix: 'Wait an hour.' });
    const flume = await flumeWith({
      name: 'acme:codes',
      apply(f) {
        f.hooks.readDeliverable.for('flume').tapPromise('acme:flume', async () => {
          throw new FlumeError('AGENT_BUSY', 'The agent has a draft.', { fix: 'Clear it.' });
        });
        f.hooks.readDeliverable.for('own').tapPromise('acme:own', async () => {
          throw withCode;
        });
        f.hooks.readDeliverable.for('node').tapPromise('acme:node', async () => {
          readFileSync('/no/such/file/for/flume');
          return undefined;
        });
      },
    });
    const call = (key: string) => rejection(callHook(`readDeliverable(${key})`, flume.hooks.readDeliverable.get(key)!, probe('x')));
    const ours = await call('flume');
    expect([ours.code, ours.plugin, ours.message, ours.fix]).toEqual(['AGENT_BUSY', 'acme:flume', '[acme:flume] The agent has a draft.', 'Clear it.']);
    const own = await call('own');
    expect([own.code, own.plugin, own.fix, own.exitCode]).toEqual(['ACME_QUOTA', 'acme:own', 'Wait an hour.', 1]);
    expect(own.toJSON()).toMatchObject({ code: 'ACME_QUOTA', plugin: 'acme:own', hook: 'readDeliverable(own)' });
    const node = await call('node');
    expect([node.code, node.plugin]).toEqual(['PLUGIN_FAILED', 'acme:node']);
  });

  it("a plugin's apply keeps its code too", async () => {
    const error = await rejection(
      flumeWith({
        name: 'acme:apply',
        apply() {
          throw Object.assign(new Error('no licence'), { code: 'ACME_LICENCE' });
        },
      }),
    );
    expect([error.code, error.plugin, error.hook]).toEqual(['ACME_LICENCE', 'acme:apply', 'apply']);
  });
});

describe('the keys tapped', () => {
  it('lists the keys some plugin tapped, in order, not those only looked up', async () => {
    const flume = await flumeWith({
      name: 'acme:keys',
      apply(f) {
        f.hooks.readDeliverable.for('zeta').tapPromise('acme:keys', async () => undefined);
        f.hooks.readDeliverable.for('looked-up-only');
        f.hooks.readDeliverable.for('alpha').tapPromise('acme:keys', async () => undefined);
        f.hooks.readDeliverable.for('zeta').tapPromise('acme:more', async () => undefined);
      },
    });
    expect(tappedKeys(flume.hooks.readDeliverable)).toEqual(['zeta', 'alpha']);
    expect(tappedKeys(flume.hooks.startAgent)).toEqual([]);
  });

  it("reads no private field of tapable's", () => {
    const source = readFileSync(join(PROJECT, 'core', 'api', 'hooks.ts'), 'utf8');
    expect(source).not.toMatch(/\._(map|x|factory|interceptors|args|call|promise|callAsync)\b/);
  });
});
