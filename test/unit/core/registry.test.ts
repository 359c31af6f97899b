/**
 * One way to extend each point: a plugin adds a kind, a reader, a driver or a host to its registry,
 * in its own name, under the key the value carries; taking over a key registered already is said
 * with `replace`, and the one replaced is there to defer to.
 */
import { describe, expect, it } from 'vitest';
import { createFlume, definePlugin, type Flume } from '../../../core/api/plugin.js';
import { defineDeliverable, type DeliverableReader } from '../../../core/api/deliverable.js';
import { defineDriver, type AgentDriver } from '../../../core/api/driver.js';
import { defineKind } from '../../../core/api/kind.js';
import { stubHost } from '../../helpers/stub-host.js';
import { requireDriver } from '../../../core/drivers/reach.js';
import { callHook, type DeliverableRequest, type StartRequest } from '../../../core/api/hooks.js';
import { FlumeError } from '../../../core/api/errors.js';
import type { AgentHandle } from '../../../core/api/agent.js';

const handle: AgentHandle = { driver: 'acme', sessionId: 's-1', host: 'acme-host', cwd: '/x', startedAt: 't' };
const driver = (overrides: Partial<AgentDriver> = {}): AgentDriver =>
  defineDriver({
    key: 'acme',
    start: async (request) => ({ ...handle, sessionId: request.sessionId }),
    waitForInput: async () => 'ready',
    send: async () => {},
    resend: async () => {},
    confirm: async () => 'taken',
    read: async () => ({ state: 'working' }),
    hasDraft: async () => false,
    stop: async () => {},
    watchPaths: () => [],
    ...overrides,
  });
const host = stubHost();
const kind = defineKind({ name: 'review', stages: [{ name: 'notes', prompt: '{brief}', deliverable: 'notes' }] });
const reader = (what: string): DeliverableReader => defineDeliverable({ type: 'notes', read: async () => ({ present: true, what }) });
const plugin = (name: string, apply: (flume: Flume) => void) => definePlugin({ name, apply });
const request = { place: { path: '/x' }, stage: {}, sessionId: 's-2', prompt: 'go', host: 'acme-host' } as unknown as StartRequest;
const read = (flume: Flume) => callHook('readDeliverable(notes)', flume.hooks.readDeliverable.get('notes')!, {} as DeliverableRequest);
const thrown = (act: () => unknown): FlumeError => {
  try {
    act();
  } catch (error) {
    if (error instanceof FlumeError) return error;
    throw error;
  }
  throw new Error('expected a throw');
};

describe('a registry', () => {
  it('adds in the name of the plugin whose apply it was handed, under the key the value carries', async () => {
    const flume = await createFlume({
      plugins: [
        plugin('acme:kind:review', (f) => f.kinds.add(kind)),
        plugin('acme:deliverable:notes', (f) => f.deliverables.add(reader('notes'))),
        plugin('acme:agent', (f) => f.agents.add(driver())),
        plugin('acme:host', (f) => f.hosts.add(host)),
      ],
    });
    expect(flume.kinds.get('review')).toBe(kind);
    expect([flume.kinds.owner('review'), flume.deliverables.owner('notes'), flume.agents.owner('acme'), flume.hosts.owner('acme-host')]).toEqual(['acme:kind:review', 'acme:deliverable:notes', 'acme:agent', 'acme:host']);
    // What one plugin registers the next sees, and the registry's taps are in the registrant's name.
    expect(flume.hooks.readDeliverable.get('notes')?.taps.map((tap) => tap.name)).toEqual(['acme:deliverable:notes']);
    expect(requireDriver(flume, 'acme').plugin).toBe('acme:agent');
  });

  it('has no plugin to name outside an apply: add there is BAD_CONFIG, register names the plugin itself', async () => {
    const flume = await createFlume({ plugins: [] });
    expect(thrown(() => flume.kinds.add(kind)).code).toBe('BAD_CONFIG');
    flume.kinds.register('acme:late', kind);
    expect(flume.kinds.owner('review')).toBe('acme:late');
  });

  it('refuses a key registered twice unless replace; a replacement answers first and may defer to the one it replaced', async () => {
    const twice = await createFlume({ plugins: [plugin('acme:a', (f) => f.kinds.add(kind)), plugin('acme:b', (f) => f.kinds.add(kind))] }).catch((error: FlumeError) => error);
    expect(twice).toMatchObject({ code: 'BAD_CONFIG', plugin: 'acme:b' });
    let asks = 0;
    const flume = await createFlume({
      plugins: [
        plugin('acme:notes', (f) => f.deliverables.add(reader('from the first'))),
        plugin('acme:records', (f) => {
          const replaced = f.deliverables.get('notes');
          f.deliverables.add(defineDeliverable({ type: 'notes', read: async (r) => (asks++ === 0 ? { present: false, what: 'from the record' } : replaced?.read(r)) }), { replace: true });
        }),
      ],
    });
    expect([flume.deliverables.owner('notes'), flume.deliverables.replaced('notes')]).toEqual(['acme:records', 'acme:notes']);
    expect(flume.hooks.readDeliverable.get('notes')?.taps.map((tap) => tap.name)).toEqual(['acme:records', 'acme:notes']);
    expect(await read(flume)).toEqual({ present: false, what: 'from the record' });
    expect(await read(flume)).toEqual({ present: true, what: 'from the first' });
  });

  it('intercepts a driver\'s start by replacing it with one that wraps it', async () => {
    const flume = await createFlume({
      plugins: [
        plugin('acme:driver', (f) => f.agents.add(driver())),
        plugin('acme:interceptor', (f) => {
          const base = f.agents.get('acme')!;
          f.agents.add({ ...base, start: async (r, h) => ({ ...(await base.start(r, h)), sessionId: `intercepted-${r.sessionId}` }) }, { replace: true });
        }),
      ],
    });
    expect((await requireDriver(flume, 'acme').start(request, host)).sessionId).toBe('intercepted-s-2');
    expect(flume.hooks.startAgent.get('acme')?.taps.map((tap) => tap.name)).toEqual(['acme:interceptor', 'acme:driver']);
  });
});
