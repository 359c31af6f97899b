import { describe, expect, it } from 'vitest';
import { containerHost, containerPaneId, readContainerPane } from '../../../core/engine/container/host.js';
import type { PaneHost } from '../../../core/api/pane-host.js';

/** A host that notes what it is asked, by method and pane. */
function noting(key: string): { host: PaneHost; asked: string[] } {
  const asked: string[] = [];
  const note = (what: string) => async (pane: string) => void asked.push(`${what} ${pane}`);
  const host: PaneHost = {
    key,
    available: async () => true,
    open: async () => ({ pane: '%1' }),
    identity: async (pane) => (asked.push(`identity ${pane}`), 'id-1'),
    capture: async (pane) => (asked.push(`capture ${pane}`), 'screen'),
    type: async (pane, text) => void asked.push(`type ${pane} ${text}`),
    keys: async (pane, keys) => void asked.push(`keys ${pane} ${keys.join(' ')}`),
    alive: async (pane) => (asked.push(`alive ${pane}`), true),
    attach: (pane) => ({ file: 'tmux', args: ['attach', '-t', pane], leave: 'C-b d' }),
    close: note('close'),
  };
  return { host, asked };
}

describe('the container host', () => {
  it('reads its pane ids back, and refuses what is not one', () => {
    const id = containerPaneId('podman', 'flume-fix--a-0123abcd', 'tmux', '%12');
    expect(id).toBe('podman|flume-fix--a-0123abcd|tmux|%12');
    expect(readContainerPane(id)).toEqual({ engine: 'podman', name: 'flume-fix--a-0123abcd', host: 'tmux', pane: '%12' });
    // A pane id of the wrapped host may itself hold the separator.
    expect(readContainerPane('docker|c|herdr|w1|p2')).toEqual({ engine: 'docker', name: 'c', host: 'herdr', pane: 'w1|p2' });
    expect(readContainerPane('%12')).toBeUndefined();
    expect(readContainerPane('lxc|c|tmux|%1')).toBeUndefined();
  });

  it('puts every question of a pane to the pane it wraps; a pane of a host not here is no pane', async () => {
    const { host: tmux, asked } = noting('tmux');
    const host = containerHost({ hosts: { get: (key: string) => (key === 'tmux' ? tmux : undefined) } } as never);
    const id = containerPaneId('podman', 'c', 'tmux', '%3');
    expect(await host.available()).toBe(false);
    expect(await host.identity(id)).toBe('id-1');
    expect(await host.alive(id)).toBe(true);
    expect(await host.capture(id)).toBe('screen');
    await host.type(id, 'hello');
    await host.keys(id, ['Enter']);
    expect(host.attach!(id)).toEqual({ file: 'tmux', args: ['attach', '-t', '%3'], leave: 'C-b d' });
    expect(await host.look!(id)).toEqual({ identity: 'id-1', alive: true, screen: 'screen' });
    expect(asked).toEqual(['identity %3', 'alive %3', 'capture %3', 'type %3 hello', 'keys %3 Enter', 'identity %3', 'alive %3', 'capture %3']);
    const gone = containerPaneId('podman', 'c', 'herdr', 'x');
    expect(await host.alive(gone)).toBe(false);
    expect(await host.look!(gone)).toBeUndefined();
    expect(host.attach!(gone)).toBeUndefined();
    await expect(host.open({ title: 't', cwd: '/', argv: ['x'], env: {} })).rejects.toMatchObject({ code: 'NO_PANE_HOST' });
  });
});
