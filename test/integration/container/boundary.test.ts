import { beforeAll, describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { flume, git, tempDir } from '../../helpers/repo.js';
import { type podmanForTests } from '../../helpers/podman.js';
import { containerConfig, usePodman } from './config.js';
import { LONG, repoFor } from '../stages/helpers.js';
import { insidePids } from '../../../core/engine/container/engine.js';
import { containerGitDir } from '../../../core/engine/container/repository.js';

// The agent in a place's container tried as a hostile one (docs/containers.md, "What the container
// can reach"): it plants what the host's git would run, moves refs that are not its place's, makes
// its home's files links to the operator's, and outlives its pane. None of it reaches the host.

let podman: ReturnType<typeof podmanForTests>;

beforeAll(() => {
  podman = usePodman();
});

const KEPT = ['/run/podman-init -- sleep infinity', 'sleep infinity'];
const inside = (name: string) => execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' }).trim().split('\n').slice(1).map((l) => l.trim());

describe('an agent in a container, as an attacker', { timeout: LONG }, () => {
  it("plants hooks, fsmonitor and config and moves refs not its own: the host runs none of it, its refs stay, and only the place's branch comes back", async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    // Where a hook run on this machine would leave its mark (not mounted in the container).
    const marks = tempDir('flume-marks-');
    const mark = join(marks, 'ran');
    const hook = `#!/bin/sh\necho "$0" >> ${mark}\n`;
    // The host's git folder, by its path: beside the places folder the worktree is in.
    const host = '"$(dirname "$(dirname "$PWD")")/.git"';
    const attack = [
      'echo one > one.txt && git add one.txt && git commit -qm "One, made inside"',
      // Its own git folder: hooks, fsmonitor, hooksPath.
      'gd=$(git rev-parse --absolute-git-dir)',
      `for h in post-checkout reference-transaction post-index-change pre-auto-gc; do mkdir -p "$gd/hooks" && printf '${hook}' > "$gd/hooks/$h" && chmod +x "$gd/hooks/$h"; done`,
      `git config core.fsmonitor "echo fsmonitor >> ${mark}"`,
      'git config core.hooksPath "$gd/hooks"',
      // The host's git folder, written wherever it can be.
      `mkdir -p ${host}/hooks 2>/dev/null; printf '${hook}' > ${host}/hooks/post-checkout 2>/dev/null; chmod +x ${host}/hooks/post-checkout 2>/dev/null`,
      `printf '[core]\n\tfsmonitor = echo fsmonitor >> ${mark}\n' >> ${host}/config 2>/dev/null`,
      `printf x > ${host}/objects/planted 2>/dev/null`,
      // Refs that are not its place's: main moved, another place's branch deleted, objects pruned.
      'git update-ref refs/heads/main HEAD',
      'git branch -D other/keep 2>/dev/null',
      `git --git-dir ${host} update-ref -d refs/heads/other/keep 2>/dev/null`,
      'git gc --prune=now --quiet 2>/dev/null',
      'true',
    ].join('; ');
    const script = { onPrompt: [{ match: '^Make the change', actions: [{ run: ['sh', '-c', attack] }, { say: 'Committed.' }] }] };
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, script));
    const commonDir = join(t.repo, '.git');
    git(t.repo, 'branch', 'other/keep');
    const main = git(t.repo, 'rev-parse', 'main');

    const place = await t.launch('one', 'inside', 'Add one.txt.');
    const { name } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    t.watch();
    await t.until('one/inside', (p) => p?.stage?.state === 'delivered', 'the delivery');
    // The place's commit came back, and nothing else: main and the other branch are as they were.
    expect(git(t.repo, 'log', '-1', '--format=%s', 'one/inside')).toBe('One, made inside');
    expect(git(t.repo, 'rev-parse', 'main')).toBe(main);
    expect(git(t.repo, 'rev-parse', 'other/keep')).toBe(main);
    expect(existsSync(join(commonDir, 'hooks', 'post-checkout'))).toBe(false);
    expect(existsSync(join(commonDir, 'objects', 'planted'))).toBe(false);
    expect(readFileSync(join(commonDir, 'config'), 'utf8')).not.toContain('fsmonitor');
    // What it planted is in its own repository, which the host never runs git in.
    expect(existsSync(join(containerGitDir(place.container), 'hooks', 'post-checkout'))).toBe(true);
    // The operator's git, in the main checkout and in the place, and the next launch run none of it.
    git(t.repo, 'status', '--porcelain');
    git(place.path, 'status', '--porcelain');
    git(t.repo, 'checkout', '-q', '-b', 'probe');
    git(t.repo, 'worktree', 'add', '-q', '-b', 'probe-two', join(tempDir('flume-probe-'), 'two'));
    expect(existsSync(mark)).toBe(false);
    // The place's files are the branch's: its index on this machine follows the commit that came back.
    expect(git(place.path, 'status', '--porcelain')).toBe('');
  });

  it("serves nothing of this machine's through what it plants in its own repository (a .git, refs that are links, alternates to another repository): such a repository is not read", async ({ expect, onTestFinished }) => {
    // A repository of the operator's, never mounted: its commit is what the agent is after.
    const privy = tempDir('flume-private-');
    git(privy, 'init', '-q', '-b', 'main');
    writeFileSync(join(privy, 'secret.txt'), 'TOPSECRET=hunter2\n');
    git(privy, 'add', '-A');
    git(privy, 'commit', '-qm', 'secret');
    const secret = git(privy, 'rev-parse', 'main');
    const plant = [
      'echo one > one.txt && git add one.txt && git commit -qm "One, made inside"',
      'gd=$(git rev-parse --absolute-git-dir)',
      'mkdir -p "$gd/.git/refs/heads/one" "$gd/.git/objects/info"',
      `printf 'ref: refs/heads/one/inside\\n' > "$gd/.git/HEAD"`,
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = true\\n' > "$gd/.git/config"`,
      `ln -s ${privy}/.git/refs/heads/main "$gd/.git/refs/heads/one/inside"`,
      `echo ${privy}/.git/objects > "$gd/.git/objects/info/alternates"`,
      `echo ${privy}/.git/objects >> "$gd/objects/info/alternates"`,
    ].join('; ');
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ run: ['sh', '-c', plant] }, { say: 'Planted.' }] }] }));
    const place = await t.launch('one', 'inside', 'Plant.');
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', place.container.name], { stdio: 'ignore' }));
    t.watch();
    // A repository holding links is not read at all: its commit is not taken, and status says why.
    const seen = await t.until('one/inside', (p) => (p?.problems?.some((line: string) => line.includes('a link at')) ? p : undefined), 'the take-back refused');
    expect(seen.problems.join('\n')).toContain('which git never makes: nothing of it is read');
    expect(git(t.repo, 'log', '-1', '--format=%s', 'one/inside')).toBe('init');
    // Nothing of the other repository came into this one's objects, which every container mounts.
    expect(() => git(t.repo, 'cat-file', '-e', secret)).toThrow();
    expect(readdirSync(join(t.repo, '.git', 'objects')).filter((name) => name.startsWith('flume-incoming-'))).toEqual([]);
  });

  it('rewrites its branch after a commit came back: nothing of it is taken, status names the problem, and tidy keeps the place', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const commit = 'echo one > one.txt && git add one.txt && git commit -qm "One, made inside"';
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ run: ['sh', '-c', commit] }, { say: 'Committed.' }] }] }));
    const place = await t.launch('one', 'rewrite', 'Commit, then rewrite.');
    const { name } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    await t.until('one/rewrite', (p) => p?.stage?.state === 'delivered', 'the delivery');
    const taken = git(t.repo, 'rev-parse', 'one/rewrite');
    execFileSync('podman', ['exec', '-w', place.path, name, 'sh', '-c', 'git reset -q --soft HEAD~1 && git -c user.name=A -c user.email=a@b commit -q -m "Rewritten"']);
    const view = await t.view('one/rewrite');
    expect(view.problems.join('\n')).toMatch(/holds commits of one\/rewrite the branch here could not take \(.*rewritten inside\)/);
    expect(git(t.repo, 'rev-parse', 'one/rewrite')).toBe(taken);
    git(t.repo, 'merge', '-q', '--no-edit', 'one/rewrite');
    // Its agent ended (a place whose agent runs is kept for that first), then tidied: kept for the rewrite.
    const stopped = await t.flume(['stop', 'one/rewrite', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    const tidied = await t.flume(['tidy', 'one/rewrite', '--json']);
    expect(tidied.stdout + tidied.stderr).toContain('could not take');
    expect(existsSync(place.path)).toBe(true);
  });

  it("never follows a link in its home, nor takes a lock there: a .claude.json made a link to the operator's is replaced at the next start, the operator's file never read", async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const operator = join(tempDir('flume-operator-'), '.claude.json');
    const secret = JSON.stringify({ primaryApiKey: 'sk-operator-secret', oauthAccount: { emailAddress: 'op@example.com' } });
    writeFileSync(operator, secret);
    // Once: the retried agent's start is what is watched.
    // And a lock beside it that names another host: taken as held by a flume there, it held every start.
    const lock = `printf '1 some-other-host 00000000-0000-0000-0000-000000000000' > "$HOME/.claude.json.flume.lock"`;
    const link = `[ -e "$HOME/linked" ] || { ln -sf ${operator} "$HOME/.claude.json"; ${lock}; touch "$HOME/linked"; }`;
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ run: ['sh', '-c', link] }, { say: 'Linked.' }] }] }));
    const place = await t.launch('one', 'linked', 'Make a link.');
    const { name, home } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    await t.until('one/linked', () => lstatSync(join(home, '.claude.json'), { throwIfNoEntry: false })?.isSymbolicLink() === true, 'the link made inside');
    const stopped = await t.flume(['stop', 'one/linked', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    const retried = await t.flume(['retry', 'one/linked', '--json']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    await t.until('one/linked', (p) => p?.stage?.attempt === 2 && p.stage.delivery === 'taken', 'the retried agent started');
    const file = join(home, '.claude.json');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(file, 'utf8')).not.toContain('sk-operator-secret');
    expect(readFileSync(file, 'utf8')).not.toContain('op@example.com');
    expect(readFileSync(operator, 'utf8')).toBe(secret);
  });

  it('makes its transcript a FIFO or a link to a file of this machine: status reads neither, answers at once, and stop ends it', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    // A transcript-like file of the operator's, never mounted, with a usage no agent here had.
    const operator = join(tempDir('flume-operator-'), 'other.jsonl');
    writeFileSync(operator, `${JSON.stringify({ type: 'assistant', message: { model: 'claude-sonnet-4-5', usage: { input_tokens: 777000, output_tokens: 1 }, content: [{ type: 'text', text: 'operator secret' }] } })}\n`);
    const swap = 'f=$(ls "$HOME"/.claude/projects/*/*.jsonl | head -1); rm -f "$f"; mkfifo "$f"; ls "$HOME"/.claude/projects/*/ > "$HOME/swapped"';
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ say: 'Swapping.' }, { run: ['sh', '-c', swap] }, { hang: true }] }] }));
    const place = await t.launch('one', 'fifo', 'Swap.');
    const { name, home } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    await t.until('one/fifo', () => (existsSync(join(home, 'swapped')) ? true : undefined), 'the transcript made a FIFO');
    const transcript = place.stage.agent.transcriptPath;
    expect(lstatSync(transcript).isFIFO()).toBe(true);
    const started = Date.now();
    const status = await t.flume(['status', '--json']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Then a link to the operator's file: never read.
    execFileSync('rm', ['-f', transcript]);
    execFileSync('ln', ['-s', operator, transcript]);
    const linked = await t.flume(['status', 'one/fifo', '--json']);
    expect(linked.stdout).not.toContain('777000');
    expect(linked.stdout).not.toContain('operator secret');
    const stopped = await t.flume(['stop', 'one/fifo', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
  });

  it('outlives its pane: the agent is not read ended while it runs inside, and stop --force ends it there', async ({ expect, onTestFinished }) => {
    const dir = tempDir('flume-container-script-');
    const t = repoFor({ onTestFinished }, {}, containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ say: 'Working on it.' }, { hang: true }] }] }));
    const place = await t.launch('one', 'orphan', 'Work for ever.');
    const { name } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    await t.until('one/orphan', (p) => p?.stage?.agent?.state === 'working', 'the agent at work inside');
    // The pane's program (the engine's client) is killed: the agent runs on in the container.
    process.kill(place.stage.agent.pid, 'SIGKILL');
    await t.until('one/orphan', () => (inside(name).length > KEPT.length ? true : undefined), 'the agent still inside');
    await new Promise((done) => setTimeout(done, 500));
    expect(inside(name).some((line) => line.includes('fake-claude.mjs'))).toBe(true);
    expect((await insidePids('podman', name))?.length).toBeGreaterThan(0);
    const view = await t.view('one/orphan');
    expect(view.stage.agent.state).not.toBe('exited');
    // Not already ended: stop refuses a working agent, and --force ends it inside.
    const stopped = await t.flume(['stop', 'one/orphan', '--force', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).not.toMatchObject({ already: true });
    expect(inside(name)).toEqual(KEPT);
    expect((await t.view('one/orphan')).stage.agent.state).toBe('exited');
  });

  it("reaches by default only what its agents must: no service of this machine's, directly or through the proxy", async ({ expect, onTestFinished }) => {
    const service = createServer((_req, res) => res.end('secret'));
    await new Promise<void>((done) => service.listen(0, '127.0.0.1', done));
    onTestFinished(() => void service.close());
    const port = (service.address() as { port: number }).port;
    const probe = `
      const http = require('http'); const net = require('net'); const fs = require('fs');
      const proxied = (url) => new Promise((done) => http.get({ host: '127.0.0.1', port: 3128, path: url }, (res) => { res.resume(); res.on('end', () => done(String(res.statusCode))); }).on('error', (e) => done('error:' + e.code)));
      const direct = (port, host) => new Promise((done) => { const s = net.connect(port, host, () => { done('connected'); s.destroy(); }); s.on('error', (e) => done('error:' + e.code)); });
      (async () => fs.writeFileSync(process.env.HOME + '/net.json', JSON.stringify([process.env.HTTPS_PROXY, await direct(${port}, '127.0.0.1'), await proxied('http://127.0.0.1:${port}/')])))();`;
    const dir = tempDir('flume-container-script-');
    const config = containerConfig(dir, { onPrompt: [{ match: '^Make the change', actions: [{ run: ['node', '-e', probe] }, { say: 'Looked.' }] }] });
    delete config.agent.container.network;
    const t = repoFor({ onTestFinished }, {}, config);
    const place = await t.launch('one', 'net', 'Look around.');
    const { name, home } = place.container;
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    // What Claude Code must reach, and nothing more: its endpoint, as its driver names it.
    expect(place.container.network).toEqual({ allow: ['api.anthropic.com:443'] });
    await t.until('one/net', () => (existsSync(join(home, 'net.json')) ? true : undefined), 'what the agent reached');
    expect(JSON.parse(readFileSync(join(home, 'net.json'), 'utf8'))).toEqual(['http://127.0.0.1:3128', 'error:ECONNREFUSED', '403']);
  });

  it('is refused at launch, with the fix and nothing made, when git finds no identity here to commit with', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {}, containerConfig(tempDir('flume-container-script-'), {}));
    git(t.repo, 'config', '--unset', 'user.name');
    git(t.repo, 'config', '--unset', 'user.email');
    // No identity anywhere: git is told not to make one up from this machine's names.
    const global = join(tempDir('flume-gitconfig-'), 'config');
    writeFileSync(global, '[user]\n\tuseConfigOnly = true\n');
    const env: Record<string, string> = { ...t.env, GIT_CONFIG_GLOBAL: global };
    for (const name of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']) delete env[name];
    const refused = await flume(['launch', '--kind', 'one', '--name', 'anon', '--brief', 'Anything.', '--no-watch', '--json'], { env, cwd: t.repo, process: true });
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    const error = JSON.parse(refused.stdout).error;
    expect(error).toMatchObject({ code: 'CONTAINER_UNUSABLE', message: expect.stringContaining('git finds no identity to commit with'), fix: expect.stringContaining('git config --global user.name') });
    expect(git(t.repo, 'branch', '--list', 'one/anon')).toBe('');
    expect(existsSync(join(t.repo, 'places', 'one--anon'))).toBe(false);
  });
});
