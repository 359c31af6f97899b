import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlume, definePlugin } from '../../../core/index.js';
import { chooseHost, hostNote } from '../../../core/engine/supervisor/hosts.js';
import { isFlumeError } from '../../../core/api/errors.js';
import { which } from '../../../core/support/exec.js';
import { killTmuxServer, tmuxHost } from '../../../agents/panes/tmux.js';
import { printedHostPlugin } from '../../../agents/printed.js';
import { herdrPlugin } from '../../../plugins/herdr/index.js';
import { fakeHerdr, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { remove, tempDir } from '../../helpers/repo.js';

describe.skipIf(which('tmux') === undefined)('auto host choice with the herdr plugin', () => {
  let dir: string;
  let herdr: FakeHerdr;
  let undo: () => void;
  const tmuxPlugin = () => definePlugin({ name: 'test:host:tmux', apply: (flume) => flume.hosts.register('test:host:tmux', tmuxHost({ socket: join(dir, 'tmux.sock') })) });

  beforeAll(() => {
    dir = tempDir('flume-herdr-choose-');
    herdr = fakeHerdr();
    undo = herdr.install();
  });

  afterAll(async () => {
    undo();
    herdr.cleanup();
    await killTmuxServer(join(dir, 'tmux.sock'));
    remove(dir);
  });

  it('picks herdr while its server runs, tmux when it does not, and says which', async () => {
    const flume = await createFlume({ plugins: [tmuxPlugin(), herdrPlugin({ stateDir: dir }), printedHostPlugin()] });
    expect((await chooseHost(flume)).key).toBe('herdr');
    // Each host says in its own words why auto chose it; the core names none of them.
    const host = (key: string) => flume.hosts.get(key)!;
    expect(hostNote(host('herdr'))).toBe('herdr is running here, so the agent runs in a herdr pane');
    expect(hostNote(host('herdr'), 'herdr')).toBe('the config sets agent.host to "herdr"');
    expect(hostNote(host('printed'), 'printed')).toContain('the config sets agent.host to "printed": run the command below');
    expect(hostNote(host('printed'))).toContain('neither a running herdr nor tmux is found here');
    herdr.setRunning(false);
    try {
      expect((await chooseHost(flume)).key).toBe('tmux');
      expect(hostNote(host('tmux'))).toBe("herdr is not running here and tmux is found, so the agent runs in flume's own tmux");
    } finally {
      herdr.setRunning(true);
    }
  });

  it('prints the command when neither herdr nor tmux can run an agent here', async () => {
    const absent = definePlugin({ name: 'test:host:none', apply: (flume) => flume.hosts.register('test:host:none', { ...tmuxHost({ socket: join(dir, 'x.sock') }), available: async () => false }) });
    const flume = await createFlume({ plugins: [absent, herdrPlugin({ binary: join(dir, 'no-herdr') }), printedHostPlugin()] });
    expect((await chooseHost(flume)).key).toBe('printed');
  });

  it('refuses a config that names herdr where herdr does not run', async () => {
    herdr.setRunning(false);
    try {
      const flume = await createFlume({ plugins: [tmuxPlugin(), herdrPlugin({ stateDir: dir })], config: { agent: { host: 'herdr' } } });
      await expect(chooseHost(flume)).rejects.toSatisfy((error) => isFlumeError(error, 'NO_PANE_HOST'));
    } finally {
      herdr.setRunning(true);
    }
  });

  it('registers once when both the preset and a repository config apply it', async () => {
    const flume = await createFlume({ plugins: [herdrPlugin(), herdrPlugin()] });
    expect(flume.hosts.all().map((host) => host.key)).toEqual(['herdr']);
    const clash = definePlugin({ name: 'acme:host', apply: (f) => f.hosts.register('acme:host', { ...flume.hosts.get('herdr')!, key: 'herdr' }) });
    await expect(createFlume({ plugins: [herdrPlugin(), clash] })).rejects.toSatisfy((error) => isFlumeError(error, 'BAD_CONFIG'));
  });
});
