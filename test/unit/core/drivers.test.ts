/**
 * One contract per extension point: a driver or a reader that only registers is reached (no taps of
 * its own), every driver method the core calls names the plugin on failure and has its return
 * checked, and what the core knows of a built-in is a capability the plugin declares.
 */
import { describe, expect, it } from 'vitest';
import { createFlume, definePlugin, type Flume } from '../../../core/api/plugin.js';
import { defineDeliverable } from '../../../core/api/deliverable.js';
import { defineDriver, type AgentDriver } from '../../../core/api/driver.js';
import type { PaneHost } from '../../../core/api/pane-host.js';
import { stubHost } from '../../helpers/stub-host.js';
import { reachDriver, requireDriver } from '../../../core/drivers/reach.js';
import { callHook, type StartRequest } from '../../../core/api/hooks.js';
import { FlumeError } from '../../../core/api/errors.js';
import { run } from '../../../core/support/exec.js';
import { chooseHost, hostNote } from '../../../core/engine/supervisor/hosts.js';
import type { AgentHandle } from '../../../core/api/agent.js';

const handle: AgentHandle = { driver: 'acme', sessionId: 's-1', host: 'acme-host', cwd: '/x', startedAt: 't' };

/** A driver whose every method answers well, each replaceable. */
function driver(overrides: Partial<AgentDriver> = {}): AgentDriver {
  return defineDriver({
    key: 'acme',
    start: async (request) => ({ ...handle, sessionId: request.sessionId, host: request.host }),
    plan: async (request) => ({ command: ['acme', '--go'], cwd: request.place.path, host: request.host }),
    waitForInput: async () => 'ready',
    send: async () => {},
    resend: async () => {},
    confirm: async () => 'taken',
    read: async () => ({ state: 'working' }),
    hasDraft: async () => false,
    stop: async () => {},
    watchPaths: () => ['/x/record'],
    ...overrides,
  });
}

const host = stubHost;

const flumeWith = (apply: (flume: Flume) => void) => createFlume({ plugins: [definePlugin({ name: 'acme:plugin', apply })] });
const request = { place: { path: '/x' }, stage: {}, sessionId: 's-2', prompt: 'go', host: 'acme-host' } as unknown as StartRequest;
const rejection = async (promise: Promise<unknown>): Promise<FlumeError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FlumeError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};

describe('a driver is reached one way', () => {
  it('registering is the whole job: start, plan and confirm answer with no tap of the plugin own, the host handed as it is', async () => {
    let handed: PaneHost | undefined;
    const flume = await flumeWith((f) => f.agents.register('acme:driver', driver({ start: async (r, h) => ((handed = h), { ...handle, sessionId: r.sessionId }) })));
    const reached = requireDriver(flume, 'acme');
    const on = host();
    expect((await reached.start(request, on)).sessionId).toBe('s-2');
    expect(handed).toBe(on);
    expect(await reached.plan(request, on)).toEqual({ command: ['acme', '--go'], cwd: '/x', host: 'acme-host' });
    expect(await reached.confirm({ handle, text: 'go' })).toBe('taken');
    expect(reached.plugin).toBe('acme:driver');
  });

  it('a plugin may still intercept a start by tapping its hook first', async () => {
    const flume = await flumeWith((f) => {
      f.hooks.startAgent.for('acme').tapPromise('acme:interceptor', async (r) => ({ ...handle, sessionId: `intercepted-${r.sessionId}` }));
      f.agents.register('acme:driver', driver());
    });
    expect((await requireDriver(flume, 'acme').start(request, host())).sessionId).toBe('intercepted-s-2');
  });

  it('a replaced driver answers no more: the one replacing it does', async () => {
    const flume = await flumeWith((f) => {
      f.agents.register('acme:first', driver({ confirm: async () => 'not-yet' }));
      f.agents.register('acme:second', driver({ confirm: async () => 'taken' }), { replace: true });
    });
    expect(await requireDriver(flume, 'acme').confirm({ handle, text: 'go' })).toBe('taken');
    expect(requireDriver(flume, 'acme').plugin).toBe('acme:second');
  });

  it('every method called directly names the plugin when it throws, and a malformed return is PLUGIN_BAD_RETURN', async () => {
    const flume = await flumeWith((f) =>
      f.agents.register(
        'acme:broken',
        driver({
          send: async () => {
            throw new Error('pane gone');
          },
          read: async () => ({ state: 'sleeping' }) as never,
          waitForInput: async () => 'maybe' as never,
          hasDraft: async () => 'no' as never,
          watchPaths: () => {
            throw new Error('no record');
          },
          start: async () => ({ driver: 'other', sessionId: 's', host: 'h', cwd: '/x', startedAt: 't' }),
        }),
      ),
    );
    const reached = requireDriver(flume, 'acme');
    const sent = await rejection(reached.send(handle, 'hi'));
    expect([sent.code, sent.plugin, sent.hook, sent.message]).toEqual(['PLUGIN_FAILED', 'acme:broken', 'send(acme)', '[acme:broken] send(acme) failed: pane gone']);
    const read = await rejection(reached.read(handle));
    expect([read.code, read.plugin, read.hook]).toEqual(['PLUGIN_BAD_RETURN', 'acme:broken', 'read(acme)']);
    expect(read.message).toMatch(/"state" must be one of "not-up", .*got "sleeping"/);
    expect((await rejection(reached.waitForInput(handle, 0))).message).toMatch(/waitForInput\(acme\) returned .*got "maybe"/);
    expect((await rejection(reached.hasDraft(handle))).code).toBe('PLUGIN_BAD_RETURN');
    let thrown: unknown;
    try {
      reached.watchPaths(handle);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ plugin: 'acme:broken', hook: 'watchPaths(acme)' });
    // A handle under another key would reach another driver later: refused at the start, naming the plugin.
    const started = await rejection(reached.start(request, host()));
    expect([started.code, started.plugin]).toEqual(['PLUGIN_BAD_RETURN', 'acme:broken']);
    expect(started.message).toMatch(/"driver" must be "acme"/);
    // readMany falls back to read for each, and a reading it cannot take is undefined, not a crash.
    expect(await reached.readMany([handle])).toEqual([undefined]);
  });

  it("refuses a text its driver's refuse names before anything is sent, and a refuse that answers no Error is PLUGIN_BAD_RETURN", async () => {
    const sent: string[] = [];
    const flume = await flumeWith((f) => {
      f.agents.register('acme:driver', driver({ send: async (_h, text) => void sent.push(text), resend: async (_h, text) => void sent.push(text), refuse: (text) => (text.startsWith('%') ? new Error('a % is its command') : undefined) }));
      f.agents.register('acme:odd', driver({ key: 'odd', refuse: () => 'no' as never }));
    });
    const reached = requireDriver(flume, 'acme');
    expect(reached.refusal('words')).toBeUndefined();
    const refused = await rejection(reached.send(handle, '%init'));
    expect([refused.plugin, refused.hook, refused.message]).toEqual(['acme:driver', 'refuse(acme)', '[acme:driver] refuse(acme) failed: a % is its command']);
    await rejection(reached.resend(handle, '%init'));
    await reached.send(handle, 'words');
    expect(sent).toEqual(['words']);
    const odd = await rejection(requireDriver(flume, 'odd').send(handle, 'words'));
    expect([odd.code, odd.hook]).toEqual(['PLUGIN_BAD_RETURN', 'refuse(odd)']);
  });

  it("hands an agent, and every program flume starts, the caller's environment less every registered driver's session variables", async () => {
    let env: Record<string, string> | undefined;
    const flume = await flumeWith((f) => {
      f.agents.register('acme:driver', driver({ sessionVariables: ['ACME_SESSION_*'], start: async (r) => ((env = r.env), { ...handle, sessionId: r.sessionId }) }));
      f.agents.register('acme:other', driver({ key: 'other', sessionVariables: ['OTHER_INBOX_TOKEN'] }));
    });
    const saved = { ...process.env };
    Object.assign(process.env, { ACME_SESSION_ID: 'mine', OTHER_INBOX_TOKEN: 'the caller session\'s token', FLUME_TEST_KEPT: 'kept' });
    let probed = '';
    try {
      await requireDriver(flume, 'acme').start(request, host());
      // Nor does anything else flume starts (a program's --version, its tmux server), whatever env it is given.
      probed = (await run('sh', ['-c', 'env'], { env: { PROBE: '1' } })).stdout;
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    }
    expect(env).not.toHaveProperty('ACME_SESSION_ID');
    expect(env).not.toHaveProperty('OTHER_INBOX_TOKEN');
    expect(env?.FLUME_TEST_KEPT).toBe('kept');
    expect(probed).not.toMatch(/^(ACME_SESSION_ID|OTHER_INBOX_TOKEN)=/m);
    expect(probed).toMatch(/^FLUME_TEST_KEPT=kept$/m);
  });

  it('no driver registered is UNKNOWN_AGENT naming those there are; reachDriver answers undefined', async () => {
    const flume = await flumeWith((f) => f.agents.register('acme:driver', driver()));
    expect(reachDriver(flume, 'ghost')).toBeUndefined();
    const error = await rejection(Promise.resolve().then(() => requireDriver(flume, 'ghost')));
    expect(error.code).toBe('UNKNOWN_AGENT');
    expect(error.fix).toContain('acme');
  });
});

describe('a reader is registered, not tapped', () => {
  it('defineDeliverable + register answers readDeliverable for its type, and its capabilities are read from the registry', async () => {
    const flume = await flumeWith((f) =>
      f.deliverables.register(
        'acme:reader',
        defineDeliverable({ type: 'acme-file', rounds: true, variables: ({ place }) => ({ ticket: `T-${place.name}` }), read: async () => ({ present: true, what: 'acme.md' }) }),
      ),
    );
    const hook = flume.hooks.readDeliverable.get('acme-file')!;
    expect(await callHook('readDeliverable(acme-file)', hook, {} as never)).toEqual({ present: true, what: 'acme.md' });
    expect(flume.deliverables.get('acme-file')?.variables?.({ place: { name: 'x' }, stage: {}, options: { type: 'acme-file' } } as never)).toEqual({ ticket: 'T-x' });
    expect(flume.deliverables.owner('acme-file')).toBe('acme:reader');
  });

  it('a reader that throws is named by its plugin, as a tap is', async () => {
    const flume = await flumeWith((f) =>
      f.deliverables.register(
        'acme:reader',
        defineDeliverable({
          type: 'acme-file',
          read: async () => {
            throw new Error('disk');
          },
        }),
      ),
    );
    const error = await rejection(callHook('readDeliverable(acme-file)', flume.hooks.readDeliverable.get('acme-file')!, {} as never));
    expect([error.plugin, error.hook]).toEqual(['acme:reader', 'readDeliverable(acme-file)']);
  });
});

describe('hosts by capability', () => {
  it('auto picks the available host of the highest priority, a third-party host included; a host that cannot type hands the command over', async () => {
    const flume = await flumeWith((f) => {
      f.hosts.register('acme:low', host({ key: 'low', priority: 1 }));
      f.hosts.register('acme:high', host({ key: 'high', priority: 50, chosen: 'high is up here' }));
      f.hosts.register('acme:down', host({ key: 'down', priority: 99, available: async () => false }));
    });
    const chosen = await chooseHost(flume);
    expect(chosen.key).toBe('high');
    expect(hostNote(chosen)).toBe('high is up here');
    expect(hostNote({ key: 'paper', canType: false }, 'paper')).toMatch(/^the config sets agent.host to "paper": run the command below/);
  });
});
