import { beforeAll, describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, snapshot, tempDir } from '../../helpers/repo.js';
import { readRecords } from '../../helpers/fake-claude/index.js';
import { HOST_PROGRAMS, type podmanForTests } from '../../helpers/podman.js';
import { containerConfig, ONE, usePodman } from './config.js';
import { fakeHerdr, HERDR_PLUGIN_JS } from '../../helpers/fake-herdr/index.js';
import { LONG, repoFor } from '../stages/helpers.js';

// A place whose agent (the fake, a node program) runs in a podman container of its own, through the
// flume command line as an operator runs it: the pane (tmux) runs `podman exec -it`, the agent's home
// is the place's, its commit lands in the host's repository, and tidy removes the container.

let podman: ReturnType<typeof podmanForTests>;

beforeAll(() => {
  podman = usePodman();
});

function containers(): string {
  return execFileSync('podman', ['ps', '-a', '--filter', 'label=flume.place', '--format', '{{.Names}} {{.Labels}}'], { encoding: 'utf8' });
}

/** The containers, running or not, labelled or not, with a mount under `path`: a test's own, whatever other tests run beside it. */
function containersMounting(path: string): string[] {
  return execFileSync('podman', ['ps', '-a', '--format', '{{.Names}} {{.Mounts}}'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(path));
}

describe('a place in a container', { timeout: LONG }, () => {
  it("runs its agent inside, reads its transcript in the place's home, sees its commit, stops it there, and tidy removes the container", async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    // The agent commits once the test has seen it run inside (the file `go`, which the test writes).
    const commit = `while [ ! -e ${dir}/go ]; do sleep 0.1; done; echo one > one.txt && git add one.txt && git commit -qm "One, made inside"`;
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ run: ['sh', '-c', commit] }, { say: 'Committed.' }] }] }));
    const place = await t.launch('one', 'inside', 'Add one.txt.');
    expect(place.container).toMatchObject({ engine: 'podman', image: podman.image, name: expect.stringMatching(/^flume-one--inside-[0-9a-f]{8}$/), gitDir: join(t.repo, '.git') });
    const { name, home } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    // The pane wraps tmux's; the agent's record is in the place's home, as the driver read it.
    expect(place.stage.agent).toMatchObject({ host: 'container', pane: expect.stringMatching(new RegExp(`^podman\\|${name}\\|tmux\\|%\\d+$`)) });
    expect(place.stage.agent.transcriptPath.startsWith(join(home, '.claude', 'projects'))).toBe(true);
    expect(containers()).toContain(name);
    // Status lists it, from one look at every container of the engine.
    expect((await t.view('one/inside')).container).toEqual({ engine: 'podman', image: podman.image, name, state: 'running' });
    expect((await t.flume(['status', 'one/inside'])).stdout).toContain(`container: ${name} (podman, ${podman.image}): running`);
    const inside = execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' });
    expect(inside).toContain('fake-claude.mjs');

    writeFileSync(join(dir, 'go'), '');
    t.watch();
    await t.until('one/inside', (p) => p?.stage?.state === 'delivered' && p.stage.agent.state === 'exited', 'the delivery, and the agent ended');
    expect(git(t.repo, 'log', '-1', '--format=%s', 'one/inside')).toBe('One, made inside');
    // Nothing of the agent runs in the container once it is stopped: only its first process.
    expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' }).trim().split('\n').slice(1).map((l) => l.trim())).toEqual(['/run/podman-init -- sleep infinity', 'sleep infinity']);

    // Landed (merged into main on this machine): tidy takes the container, then the place and its branch.
    git(t.repo, 'merge', '-q', '--no-edit', 'one/inside');
    // (The supervisor tidies a landed place too: whichever comes first.)
    const tidied = await t.flume(['tidy', '--json']);
    expect(tidied.code, tidied.stdout + tidied.stderr).toBe(0);
    await t.until('one/inside', (p) => p === undefined, 'the place tidied');
    expect(containers()).not.toContain(name);
    expect(existsSync(place.path)).toBe(false);
    expect(git(t.repo, 'branch', '--list', 'one/inside')).toBe('');
    // The home (the agent's transcripts) is kept, as Claude Code's own are.
    expect(existsSync(place.stage.agent.transcriptPath)).toBe(true);
  });

  it('is stopped and retried as any place: stop ends its program inside, retry starts a fresh agent in its container made afresh', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ say: 'Working on it.' }, { hang: true }] }, { match: 'more', actions: [{ say: 'Noted.' }] }] }));
    const place = await t.launch('one', 'held', 'Work for ever.');
    const { name } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    await t.until('one/held', (p) => p?.stage?.agent?.state === 'working', 'the agent at work inside');
    const running = () => execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' }).trim().split('\n').slice(1).map((l) => l.trim());
    expect(running().filter((line) => line.includes('fake-claude.mjs'))).toHaveLength(1);

    // A working agent is not stopped without --force; with it, nothing of it runs inside after.
    expect((await t.flume(['stop', 'one/held', '--json'])).stdout).toContain('AGENT_WORKING');
    const stopped = await t.flume(['stop', 'one/held', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(running()).toEqual(['/run/podman-init -- sleep infinity', 'sleep infinity']);
    expect((await t.view('one/held')).stage.agent.state).toBe('exited');

    // Retry: a fresh agent, in its container made afresh, takes its prompt.
    const retried = await t.flume(['retry', 'one/held', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    const again = await t.until('one/held', (p) => p?.stage?.attempt === 2 && p.stage.agent.state === 'working' && p, 'the retried agent at work');
    expect(again.container).toMatchObject({ name, state: 'running' });
    expect(again.stage.agent.pane.startsWith(`podman|${name}|tmux|`)).toBe(true);
    expect(running().filter((line) => line.includes('fake-claude.mjs'))).toHaveLength(1);
  });

  it("takes a tell as a prompt, confirmed in its transcript in the place's home", async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Answer', actions: [{ say: 'Thanks, going on.' }, { hang: true }] }, { actions: [{ say: 'Which colour should it be?' }] }] }));
    const place = await t.launch('one', 'told', 'Paint it.');
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', place.container.name], { stdio: 'ignore' }));
    await t.until('one/told', (p) => p?.stage?.agent?.state === 'idle', 'the agent asking, its turn ended');
    const told = await t.flume(['tell', 'one/told', 'Answer: blue', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: true, sends: 1 });
    const prompts = readRecords(place.stage.agent.transcriptPath).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content);
    expect(prompts).toEqual([expect.stringMatching(/^Make the change: Paint it\./), 'Answer: blue']);
    expect(place.stage.agent.transcriptPath.startsWith(place.container.home)).toBe(true);
  });

  it('runs its agent in a herdr pane as in a tmux one: the pane runs the engine\'s client, told and stopped there', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const herdr = fakeHerdr();
    onTestFinished(() => herdr.cleanup());
    const config = containerConfig(dir, { onPrompt: [{ match: '^Answer', actions: [{ say: 'Noted.' }, { hang: true }] }, { actions: [{ say: 'Which colour should it be?' }] }] });
    const t = repoFor({ onTestFinished }, {}, { ...config, agent: { ...config.agent, host: 'herdr' }, plugins: [HERDR_PLUGIN_JS] });
    Object.assign(t.env, herdr.env);
    const place = await t.launch('one', 'herded', 'Paint it.');
    const { name } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    expect(place.stage.agent).toMatchObject({ host: 'container', pane: expect.stringMatching(new RegExp(`^podman\\|${name}\\|herdr\\|w\\d+:p\\d+$`)) });
    // herdr runs the engine's client in the place's tab (a launch script of flume's), not the agent by name;
    // the agent runs inside.
    expect(herdr.callsOf('pane', 'run').map((call) => call.argv[3])).toEqual([expect.stringMatching(/ exec env -i \/bin\/sh '.*\/herdr\/launch-[0-9a-f-]+\.sh'$/)]);
    expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' })).toContain('fake-claude.mjs');
    expect(herdr.callsOf('agent', 'start')).toEqual([]);
    await t.until('one/herded', (p) => p?.stage?.agent?.state === 'idle', 'the agent asking, its turn ended');
    const told = await t.flume(['tell', 'one/herded', 'Answer: blue', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: true });
    const stopped = await t.flume(['stop', 'one/herded', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' }).trim().split('\n').slice(1).map((l) => l.trim())).toEqual(['/run/podman-init -- sleep infinity', 'sleep infinity']);
  });

  it('is checked by doctor: the engine found, and whether a container of the image starts', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, {}));
    const good = await t.flume(['doctor', '--json']);
    const checks = JSON.parse(good.stdout).checks as Array<{ name: string; ok: boolean; detail: string }>;
    expect(checks).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'container engine podman', ok: true, detail: expect.stringContaining(`image ${podman.image} here`) }),
      expect.objectContaining({ name: 'a container starts', ok: true }),
    ]));
    // An image that git cannot run in: doctor says so, and a launch is refused the same way.
    const bare = repoFor({ onTestFinished }, {}, { ...containerConfig(dir, {}), agent: { host: 'tmux', container: { engine: 'podman', image: podman.image, network: 'none' } } });
    const bad = await bare.flume(['doctor', '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).checks).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'a container starts', ok: false, detail: expect.stringContaining('git cannot read the repository') })]));
    expect(execFileSync('ls', ['-A', join(bare.state, 'homes')], { encoding: 'utf8' })).toBe('');
  });

  it("looks for its agent's program inside, not on this machine", async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    // The fake is on this machine, but the project it lies in is not mounted: inside, there is none.
    const config = containerConfig(dir, {});
    const t = repoFor({ onTestFinished }, {}, { ...config, agent: { host: 'tmux', container: { ...config.agent.container, mounts: [...HOST_PROGRAMS, `${dir}:ro`] } } });
    const launched = await t.flume(['launch', '--kind', 'one', '--name', 'missing', '--brief', 'b', '--no-watch', '--json']);
    const record = JSON.parse(readFileSync(join(t.repo, '.git', 'flume', 'places', 'one--missing.json'), 'utf8'));
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', record.container.name], { stdio: 'ignore' }));
    expect(launched.code).toBe(1);
    expect(JSON.parse(launched.stdout).error).toMatchObject({ code: 'AGENT_START_FAILED', message: expect.stringContaining('is not found where its pane runs it (container: `command -v') });
  });

  it('is planned by a dry run that makes nothing: its agent program is asked of the image in a container removed after', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, {}));
    const before = snapshot(t.repo);
    const planned = await t.flume(['launch', '--kind', 'one', '--name', 'planned', '--brief', 'b', '--dry-run', '--json']);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(planned.stdout))).toContain('"host":"container"');
    expect(snapshot(t.repo)).toBe(before);
    expect(containersMounting(t.repo)).toEqual([]);
    mkdirSync(join(t.state, 'homes'), { recursive: true });
    expect(execFileSync('ls', ['-A', join(t.state, 'homes')], { encoding: 'utf8' })).toBe('');
  });

  it('is refused before anything is made when its image is not on this machine', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, {}));
    const before = snapshot(t.repo);
    const result = await t.flume(['launch', '--kind', 'one', '--name', 'none', '--brief', 'b', '--container', 'localhost/flume-none-such:1', '--no-watch', '--json']);
    expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'CONTAINER_UNUSABLE', message: expect.stringContaining('localhost/flume-none-such:1 is not on this machine') });
    expect(snapshot(t.repo)).toBe(before);
    expect(containers()).not.toContain('flume-one--none-');
    // A kind whose stage runs an agent whose driver keeps its files outside the agent's home: refused too.
    const codex = repoFor({ onTestFinished }, {}, { ...containerConfig(dir, {}), kinds: [ONE, { name: 'cx', stages: [{ name: 's', prompt: 'p', deliverable: 'commit', agent: 'codex' }] }] });
    const other = await codex.flume(['launch', '--kind', 'cx', '--name', 'none', '--brief', 'b', '--no-watch', '--json']);
    expect(JSON.parse(other.stdout).error).toMatchObject({ code: 'CONTAINER_UNUSABLE', message: expect.stringContaining('runs the agent codex, whose driver does not run its agents in containers') });
    expect(existsSync(join(codex.repo, 'places'))).toBe(false);
    mkdirSync(join(t.state, 'homes'), { recursive: true });
    expect(execFileSync('ls', ['-A', join(t.state, 'homes')], { encoding: 'utf8' })).toBe('');
  });
});
