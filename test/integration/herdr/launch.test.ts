import { spawnSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { which } from '../../../core/support/exec.js';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { fakeHerdr, HERDR_PLUGIN_JS, type FakeHerdr } from '../../helpers/fake-herdr/index.js';
import { PROJECT, trustMade } from '../../helpers/repo.js';

let repo: AgentRepo | undefined;
let herdr: FakeHerdr | undefined;
afterEach(async () => {
  await repo?.cleanup();
  herdr?.cleanup();
  repo = herdr = undefined;
});

const prompts = (path: string) => readRecords(path).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content as string);

/** Runs the plugin's bin.js as herdr runs it: from the plugin's folder, with herdr's context. */
function bin(args: string[], context: Record<string, string>, input: string) {
  return spawnSync(process.execPath, [join(PROJECT, 'dist', 'plugins', 'herdr', 'bin.js'), ...args], {
    cwd: join(PROJECT, 'plugins', 'herdr'),
    env: { ...repo!.env, HERDR_PLUGIN_ID: 'flume', HERDR_PLUGIN_CONTEXT_JSON: JSON.stringify(context) },
    input,
    encoding: 'utf8',
  });
}

function setUp(running: boolean, script = {}) {
  herdr = fakeHerdr({ running });
  // The fake agent named `claude`, so herdr knows it as the kind `claude` and flume uses `agent start`.
  repo = agentRepo(script, { agent: { host: 'auto' }, plugins: [HERDR_PLUGIN_JS] }, { binary: herdr.claude });
  Object.assign(repo.env, herdr.env);
  return { repo, herdr };
}

describe.skipIf(which('tmux') === undefined)('a launch where herdr runs', () => {
  it("starts the stage's agent in a herdr pane, confirms its prompt in the transcript, and tells and stops it there", async () => {
    const { repo, herdr } = setUp(true, { onPrompt: [{ match: '^Answer', actions: [{ say: 'Thanks.' }] }, { actions: [{ say: 'Which colour?' }] }] });
    const launched = await repo.flume(['launch', '--kind', 'fix', '--name', 'in-herdr', '--brief', 'Paint the shed.', '--no-watch']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(launched.stdout).toContain('(herdr is running here, so the agent runs in a herdr pane)');
    expect(launched.stdout).toContain('prompt: taken');
    const place = await repo.place('fix/in-herdr');
    const agent = place.stage.agent;
    expect(agent).toMatchObject({ host: 'herdr', pane: expect.stringMatching(/^w\d+:p\d+$/) });
    expect(prompts(agent.transcript).some((text) => text.includes('Paint the shed.'))).toBe(true);
    // The repository's workspace, the place's tab in it, and herdr starts the agent by name with flume's arguments.
    expect(herdr.callsOf('workspace', 'create').map((call) => call.argv)).toEqual([['workspace', 'create', '--cwd', repo.repo, '--label', basename(repo.repo), '--no-focus']]);
    const tab = herdr.callsOf('tab', 'create')[0].argv;
    expect(tab.slice(0, 8)).toEqual(['tab', 'create', '--workspace', agent.pane.split(':')[0], '--cwd', place.path, '--label', 'fix/in-herdr:code']);
    expect(tab).toContain(`CLAUDE_CONFIG_DIR=${repo.configDir}`);
    const started = herdr.callsOf('agent', 'start')[0].argv;
    expect(started.slice(0, 10)).toEqual(['agent', 'start', 'fix-in-herdr-code', '--kind', 'claude', '--pane', agent.pane, '--', '--session-id', expect.stringMatching(/^[0-9a-f-]{36}$/)]);

    await waitFor(async () => (await repo.place('fix/in-herdr')).stage.agent.state === 'idle', 'the agent to end its turn');
    const told = await repo.flume(['tell', 'fix/in-herdr', 'Answer: blue', '--json']);
    expect(told.code, told.stdout).toBe(0);
    expect(prompts(agent.transcript)).toContain('Answer: blue');
    // Sent as one bracketed paste the host frames: Claude Code reads one, and typed key by key a TAB is a key to it.
    expect(herdr.callsOf('pane', 'send-text').some((call) => call.argv[2] === agent.pane && call.argv[3] === '\x1b[200~Answer: blue\x1b[201~')).toBe(true);

    // The plugin's tell popup, over the agent's pane, reaches it the same way.
    const popup = await bin(['popup', 'tell'], { focused_pane_id: agent.pane }, 'Answer: from herdr\n\n\n');
    expect(popup.status, popup.stdout + popup.stderr).toBe(0);
    expect(popup.stdout).toContain('told fix/in-herdr: taken');
    expect(prompts(agent.transcript)).toContain('Answer: from herdr');
    // Its open popup lists the places and focuses the chosen one's tab.
    const opened = await bin(['popup', 'open'], {}, '1\n\n');
    expect(opened.status, opened.stdout + opened.stderr).toBe(0);
    expect(opened.stdout).toContain('1  fix/in-herdr  code 1/2');
    expect(herdr.callsOf('tab', 'focus').at(-1)?.argv).toEqual(['tab', 'focus', agent.pane.replace(/:p(\d+)$/, ':t$1')]);

    const stopped = await repo.flume(['stop', 'fix/in-herdr']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect((await repo.place('fix/in-herdr')).stage.agent.state).toBe('exited');
    expect(herdr.callsOf('pane', 'get').length + herdr.callsOf('pane', 'process-info').length).toBeGreaterThan(0);
  }, 300_000); // a launch, a tell, two popups and a stop, each through a node per herdr command: 120 s ran out in CI beside the 200 tidy histories

  it("launches from the plugin's launch popup, in the focused pane's repository, named from the brief", async () => {
    const { repo, herdr } = setUp(true, { onPrompt: [{ actions: [{ say: 'Done.' }] }] });
    // The popup runs flume itself (spawnSync holds this process): the repository is trusted first.
    await trustMade(repo.state);
    const popup = await bin(['popup', 'launch'], { focused_pane_cwd: repo.repo }, '\nMend the fence: posts 3 & 4\nthen paint it\n\n\n');
    expect(popup.status, popup.stdout + popup.stderr).toBe(0);
    const place = await repo.place('fix/mend-the-fence-posts-3-4');
    expect(place.brief).toBe('Mend the fence: posts 3 & 4\nthen paint it');
    expect(place.stage.agent.host).toBe('herdr');
    expect(herdr.callsOf('tab', 'create').length).toBe(1);
  });

  it('uses tmux, and says so, where herdr is on PATH but its server is not running', async () => {
    const { repo, herdr } = setUp(false);
    const launched = await repo.flume(['launch', '--kind', 'fix', '--name', 'in-tmux', '--brief', 'Fix the gate.', '--no-watch']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(launched.stdout).toContain("(herdr is not running here and tmux is found, so the agent runs in flume's own tmux)");
    expect((await repo.place('fix/in-tmux')).stage.agent.host).toBe('tmux');
    expect(herdr.callsOf('status', 'server', '--json').length).toBeGreaterThan(0);
    expect(herdr.callsOf('workspace', 'create')).toEqual([]);
  });
});
