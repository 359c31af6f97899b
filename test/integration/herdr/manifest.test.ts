import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS, flumeCommand, isPrompted, type ActionId } from '../../../plugins/herdr/index.js';
import { fakeHerdr, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { flume, flumeEnv, makeRepo, PROJECT, remove, tempDir } from '../../helpers/repo.js';
import { parseToml, type TomlTable } from '../../helpers/toml.js';

const MANIFEST = join(PROJECT, 'plugins', 'herdr', 'herdr-plugin.toml');
const manifest = parseToml(readFileSync(MANIFEST, 'utf8'));
const tables = (name: string) => (manifest[name] ?? []) as TomlTable[];
const isId = (id: unknown, dots: boolean) => typeof id === 'string' && id.length > 0 && [...id].every((c) => /[A-Za-z0-9:_-]/.test(c) || (dots && c === '.'));

describe('herdr-plugin.toml', () => {
  it("has the fields herdr 0.8.0's manifest requires, in the forms it accepts", () => {
    expect(manifest).toMatchObject({ id: 'flume', name: 'flume', version: expect.any(String), min_herdr_version: '0.8.0', platforms: ['linux', 'macos'] });
    expect(isId(manifest.id, true)).toBe(true);
    for (const kind of ['actions', 'panes', 'startup', 'events', 'build']) {
      for (const entry of tables(kind)) {
        const command = entry.command as string[];
        expect(Array.isArray(command) && command.length > 0 && command.every((word) => typeof word === 'string'), `${kind} command`).toBe(true);
        if (['startup', 'events', 'build'].includes(kind)) continue;
        expect(isId(entry.id, false), `${kind} id ${String(entry.id)}`).toBe(true);
        expect(String(entry.title).trim()).not.toBe('');
      }
    }
    for (const action of tables('actions')) for (const context of action.contexts as string[]) expect(['global', 'workspace', 'tab', 'pane', 'selection']).toContain(context);
    for (const pane of tables('panes')) expect(pane.placement).toBe('popup');
    expect(new Set(tables('actions').map((a) => a.id)).size).toBe(tables('actions').length);
  });

  it('declares every action flume offers, each running the built bin.js, and a popup for each that asks', () => {
    expect(tables('actions').map((a) => a.id).sort()).toEqual([...ACTIONS].sort());
    const pluginDir = dirname(MANIFEST);
    for (const action of tables('actions')) {
      const [node, script, verb, id] = action.command as string[];
      expect([node, verb, id]).toEqual(['node', 'action', action.id]);
      // herdr runs commands from the plugin's folder: the script is flume's build beside it.
      expect(resolve(pluginDir, script)).toBe(join(PROJECT, 'dist', 'plugins', 'herdr', 'bin.js'));
      expect(existsSync(resolve(pluginDir, script))).toBe(true);
      if (isPrompted(String(action.id))) expect(tables('panes').find((p) => p.id === action.id)?.command).toEqual(['node', script, 'popup', action.id]);
    }
    // The sidebar: one-shot refreshes on startup and on herdr's own events (names herdr 0.8.0 accepts
    // for [[events]] hooks, src/api/schema/events.rs), no loop.
    const hookEvents = ['workspace.created', 'workspace.updated', 'workspace.closed', 'workspace.renamed', 'workspace.moved', 'workspace.reordered', 'workspace.focused', 'worktree.created', 'worktree.opened', 'worktree.removed', 'tab.created', 'tab.closed', 'tab.renamed', 'tab.moved', 'tab.focused', 'pane.created', 'pane.closed', 'pane.focused', 'pane.moved', 'pane.exited', 'pane.agent_detected', 'pane.agent_status_changed'];
    const once = ['node', '../../dist/plugins/herdr/bin.js', 'sidebar', '--once'];
    expect(tables('startup').map((hook) => hook.command)).toEqual([once]);
    expect(tables('events').map((hook) => hook.on)).toEqual(expect.arrayContaining(['pane.agent_detected', 'pane.agent_status_changed']));
    for (const hook of tables('events')) {
      expect(hookEvents).toContain(hook.on);
      expect(hook.command).toEqual(once);
    }
  });

  it("builds flume where `herdr plugin install` runs [[build]] (this folder, argv, no shell): dependencies, then dist", () => {
    expect(tables('build').map((build) => build.command)).toEqual([
      ['npm', '--prefix', '../..', 'ci'],
      ['npm', '--prefix', '../..', 'run', 'build'],
    ]);
    // ../.. from this folder is flume's package, whose build script writes the dist every command runs.
    const pkg = JSON.parse(readFileSync(resolve(dirname(MANIFEST), '../../package.json'), 'utf8'));
    expect(pkg.name).toBe('flume');
    expect(pkg.scripts.build).toMatch(/^tsc -p tsconfig\.json(?: && |$)/);
    expect(existsSync(resolve(dirname(MANIFEST), '../../package-lock.json'))).toBe(true);
  });

  it("runs for each action a real flume command line: its command's own --help names every option it passes", async () => {
    const input = { place: 'fix/x', file: '/tmp/text.md', repo: '/tmp/repo', kind: 'fix' };
    for (const id of ACTIONS) {
      const argv = flumeCommand(id as ActionId, input);
      const result = await flume([...argv, '--help']);
      expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^flume ${argv[0]}\\b`));
      for (const option of argv.filter((word) => word.startsWith('--'))) expect(result.stdout, `${id} ${option}`).toContain(option);
    }
  });
});

describe('the actions, run as herdr runs them', () => {
  let herdr: FakeHerdr;
  let repo: string;
  let env: Record<string, string>;
  const BIN = join(PROJECT, 'dist', 'plugins', 'herdr', 'bin.js');
  const runBin = (args: string[], context: Record<string, string>, input = '') =>
    import('node:child_process').then(({ spawnSync }) =>
      spawnSync(process.execPath, [BIN, ...args], { cwd: join(PROJECT, 'plugins', 'herdr'), env: { ...env, HERDR_PLUGIN_ID: 'flume', HERDR_PLUGIN_CONTEXT_JSON: JSON.stringify(context) }, input, encoding: 'utf8' }),
    );

  beforeAll(async () => {
    herdr = fakeHerdr();
    env = flumeEnv(tempDir('flume-state-'), herdr.env);
    repo = makeRepo();
    expect((await flume(['launch', '--repo', repo, '--kind', 'fix', '--name', 'quiet', '--brief', 'b', '--no-start'], { env })).code).toBe(0);
  });

  afterAll(() => {
    herdr.cleanup();
    remove(repo);
    remove(env.FLUME_STATE_DIR);
  });

  it('stop finds the place from the focused pane\'s folder, runs flume stop, and says how it went in a herdr toast', async () => {
    const result = await runBin(['action', 'stop'], { focused_pane_id: 'w9:p1', focused_pane_cwd: join(repo, 'places', 'fix--quiet', 'src') });
    // The place has no agent yet, so flume refuses; the refusal is what the toast shows.
    expect(result.status).toBe(1);
    const toast = herdr.callsOf('notification', 'show').at(-1)!.argv;
    expect(toast.slice(2, 5)).toEqual(['flume stop fix/quiet', '--body', expect.stringContaining('AGENT_NOT_UP fix/quiet has no agent started')]);
    expect(toast.slice(5)).toEqual(['--sound', 'request']);
  });

  it('refuses, in a toast, an action on a pane that is no place of flume', async () => {
    const result = await runBin(['action', 'retry'], { focused_pane_id: 'w9:p1', focused_pane_cwd: '/' });
    expect(result.status).toBe(1);
    expect(herdr.callsOf('notification', 'show').at(-1)?.argv).toContain('--sound');
  });

  it('tell opens its popup, and the popup asks for the text and hands it to flume tell in a file', async () => {
    const opened = await runBin(['action', 'tell'], {});
    expect(opened.status, opened.stderr).toBe(0);
    expect(herdr.callsOf('plugin', 'pane', 'open').at(-1)?.argv).toEqual(['plugin', 'pane', 'open', '--plugin', 'flume', '--entrypoint', 'tell', '--placement', 'popup']);
    const told = await runBin(['popup', 'tell'], { focused_pane_cwd: join(repo, 'places', 'fix--quiet') }, 'Answer: "blue"; $(not a shell)\nsecond line\n\n\n');
    // The place has no agent: flume refuses with nothing typed, and the popup shows why.
    expect(told.status).toBe(1);
    expect(told.stdout).toContain('Tell fix/quiet');
    expect(told.stdout).toContain('AGENT_NOT_UP');
  });

  it('usage errors exit 2', async () => {
    expect((await runBin(['action', 'nope'], {})).status).toBe(2);
    expect((await runBin(['popup', 'stop'], {})).status).toBe(2);
  });
});
