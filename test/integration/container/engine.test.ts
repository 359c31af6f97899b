import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkEngine, checkMounts, containerName, containerState, endInside, execCommand, insidePids, listContainers, makeContainer, removeContainer, type ContainerSpec } from '../../../core/engine/container/engine.js';
import { bringBack, containerGitDir } from '../../../core/engine/container/repository.js';
import { PROXY_PORT, proxyLog } from '../../../core/engine/container/proxy.js';
import { createServer, type Server } from 'node:http';
import { isFlumeError } from '../../../core/api/errors.js';
import { git, makeRepo, tempDir } from '../../helpers/repo.js';
import { HOST_PROGRAMS, podmanForTests, podmanImageAs } from '../../helpers/podman.js';

// Real podman (runc, cgroupfs, the tests' own containers.conf), an image made here, the host's own
// programs mounted read-only into it. Each test makes its own repository, worktree and container.

let spec: ContainerSpec;
const made: string[] = [];

beforeAll(() => {
  const podman = podmanForTests();
  Object.assign(process.env, podman.env);
  spec = { engine: 'podman', image: podman.image, mounts: HOST_PROGRAMS, network: 'none' };
});

afterAll(async () => {
  for (const name of made) await removeContainer('podman', name);
});

/** A repository with a worktree on its own branch, and a home folder in a state folder: a place as launch makes one. */
function place(name: string) {
  const repo = makeRepo();
  const path = join(repo, 'places', `fix--${name}`);
  git(repo, 'worktree', 'add', '-q', '-b', `fix/${name}`, path);
  const commonDir = join(repo, '.git');
  const home = join(tempDir('flume-state-'), 'homes', containerName({ id: `fix/${name}`, commonDir }));
  return { repo, root: repo, id: `fix/${name}`, path, commonDir, branch: `fix/${name}`, target: 'main', home };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; variant?: string; message: string }> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!isFlumeError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { code: error.code, variant: (error.details as { variant?: string } | undefined)?.variant, message: error.message };
}

describe('a container engine', () => {
  it('is refused, with the fix, when remote, missing or without the image; answers its version otherwise', async () => {
    expect((await checkEngine(spec)).imageId).toMatch(/^(sha256:)?[0-9a-f]{64}$/);
    const remote = await refusal(checkEngine(spec, { ...process.env, CONTAINER_HOST: 'ssh://elsewhere/run/podman.sock' }));
    expect(remote.message).toContain('CONTAINER_HOST is set');
    const missing = await refusal(checkEngine({ ...spec, engine: 'docker' }, { ...process.env, PATH: '/nonexistent' }));
    expect(missing.message).toContain('not installed here');
    const image = await refusal(checkEngine({ ...spec, image: `localhost/none-such:${randomUUID().slice(0, 8)}` }));
    expect(image.message).toMatch(/^The image .* is not on this machine/);
    for (const r of [remote, missing, image]) expect(r.code).toBe('CONTAINER_UNUSABLE');
  });

  it('checks that git inside reads the repository through a repository of its own and that the home writes through, naming what fails', async () => {
    const p = place('checks');
    const head = git(p.repo, 'rev-parse', 'HEAD');
    await checkMounts(spec, { ...p, head });
    // An image with no git: refused, with nothing left in the home.
    const bare = await refusal(checkMounts({ ...spec, mounts: [] }, { ...p, head }));
    expect(bare.code).toBe('CONTAINER_UNUSABLE');
    expect(bare.message).toContain(`git cannot read the repository at ${p.commonDir}`);
    expect(execFileSync('ls', ['-A', p.home], { encoding: 'utf8' })).toBe('');
    // A mount that names no folder here is named as such, not as git's fault.
    const mount = await refusal(checkMounts({ ...spec, mounts: [...HOST_PROGRAMS, '/no/such/folder:ro'] }, { ...p, head }));
    expect(mount.code).toBe('CONTAINER_UNUSABLE');
    expect(mount.message).toBe('The mount /no/such/folder:ro in agent.container.mounts names no folder on this machine.');
    // An image that runs as another user than root cannot write the home: named with its own fix.
    const user = await refusal(checkMounts({ ...spec, image: podmanImageAs('1000') }, { ...p, head }));
    expect(user.code).toBe('CONTAINER_UNUSABLE');
    expect(user.message).toContain('runs as the user 1000');
  });

  it("runs a program in the place's container: its commit comes back to the host's branch, it writes nowhere outside its mounts, and it ends when told", async () => {
    const p = place('work');
    const name = await makeContainer(spec, p);
    made.push(name);
    expect(name).toBe(containerName(p));
    expect(await containerState('podman', name)).toBe('running');
    expect((await listContainers('podman'))?.get(name)).toEqual({ place: p.id, state: 'running' });
    // Its init and the sleep that keeps it: nothing else runs.
    expect(await insidePids('podman', name)).toEqual([]);

    const before = git(p.repo, 'rev-parse', 'fix/work');
    const outside = join(p.repo, `escaped-${randomUUID().slice(0, 8)}`);
    const script = [
      'set -e',
      `git -c user.name=A -c user.email=a@b commit -q --allow-empty -m "made inside"`,
      `echo home > "$HOME/inside"`,
      `(echo x > ${outside}) 2>/dev/null || true`,
      `(echo x > /usr/escaped) 2>/dev/null || true`,
      `(echo x > ${p.commonDir}/objects/escaped) 2>/dev/null || true`,
      'echo done',
    ].join('\n');
    // A secret is named on the command line, its value handed in the client's environment only.
    const command = execCommand(spec, name, { cwd: p.path, env: { HOME: p.home, SECRET: 'hush' }, argv: ['sh', '-c', `${script}\necho "$SECRET"`] });
    expect(command.argv.join(' ')).not.toContain('hush');
    expect(command.env).toEqual({ SECRET: 'hush' });
    const [file, ...args] = command.argv.filter((a) => a !== '-it');
    expect(execFileSync(file!, args, { encoding: 'utf8', env: { ...process.env, ...command.env } }).trim().split('\n')).toEqual(['done', 'hush']);
    // The commit is in the place's own repository; the host's branch takes it by fast-forward.
    expect(git(p.repo, 'rev-parse', 'fix/work')).toBe(before);
    const back = await bringBack({ ...spec, name, home: p.home }, p, before);
    expect(back, JSON.stringify(back)).toMatchObject({ taken: true });
    expect(git(p.repo, 'log', '-1', '--format=%s', `fix/work`)).toBe('made inside');
    expect(git(p.path, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(p.home, 'inside'), 'utf8')).toBe('home\n');
    expect(existsSync(outside)).toBe(false);
    expect(existsSync('/usr/escaped')).toBe(false);
    expect(existsSync(join(p.commonDir, 'objects', 'escaped'))).toBe(false);

    // A program left running in it is ended, and the container stays for the next.
    execFileSync('podman', ['exec', '-d', name, 'sleep', '1000']);
    await sleep(200);
    expect(await insidePids('podman', name)).toHaveLength(1);
    expect(await endInside('podman', name)).toBe(1);
    await sleep(200);
    expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' })).not.toContain('sleep 1000');
    expect(await containerState('podman', name)).toBe('running');

    // Made again for the next agent: afresh, nothing of the last one left running in it.
    execFileSync('podman', ['exec', '-d', name, 'sleep', '1001']);
    expect(await makeContainer(spec, p)).toBe(name);
    expect(execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' })).not.toContain('sleep 1001');
    expect(git(p.repo, 'log', '-1', '--format=%s', `fix/work`)).toBe('made inside');

    expect(await removeContainer('podman', name)).toBe(true);
    expect(await containerState('podman', name)).toBeUndefined();
    expect((await listContainers('podman'))?.has(name)).toBe(false);
    expect(await insidePids('podman', name)).toEqual([]);
    // Nothing of the place was removed with it.
    expect(existsSync(join(p.path, '.git'))).toBe(true);
    expect(existsSync(containerGitDir({ name, home: p.home }))).toBe(true);
    expect(readFileSync(join(p.home, 'inside'), 'utf8')).toBe('home\n');
  });

  it('reaches under an allowlist only the hosts it names, through the proxy; nothing directly; and the proxy ends with the container', async () => {
    const servers: Server[] = [];
    const serve = async (word: string) => {
      const server = createServer((_req, res) => res.end(word));
      servers.push(server);
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      return (server.address() as { port: number }).port;
    };
    const [allowed, other] = [await serve('allowed'), await serve('other')];
    try {
      const p = place('egress');
      const egress: ContainerSpec = { ...spec, network: { allow: [`127.0.0.1:${allowed}`] } };
      const name = await makeContainer(egress, p);
      made.push(name);
      // The bridge keeps the container: nothing else runs in it.
      expect(await insidePids('podman', name)).toEqual([]);
      const program = `
        const http = require('http'); const net = require('net');
        const proxied = (url) => new Promise((done) => http.get({ host: '127.0.0.1', port: ${PROXY_PORT}, path: url }, (res) => { let body = ''; res.on('data', (d) => (body += d)); res.on('end', () => done(res.statusCode + ':' + body)); }).on('error', (e) => done('error:' + e.code)));
        const tunnelled = (port) => new Promise((done) => { const s = net.connect(${PROXY_PORT}, '127.0.0.1', () => s.write('CONNECT 127.0.0.1:' + port + ' HTTP/1.1\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')); let got = ''; s.on('data', (d) => (got += d)); s.on('close', () => done(got.split('\\r\\n')[0] + '|' + got.split('\\r\\n').pop())); s.on('error', (e) => done('error:' + e.code)); });
        const direct = (port, host) => new Promise((done) => { const s = net.connect(port, host, () => { done('connected'); s.destroy(); }); s.on('error', (e) => done('error:' + e.code)); });
        (async () => console.log(JSON.stringify([await proxied('http://127.0.0.1:${allowed}/'), await proxied('http://127.0.0.1:${other}/'), await tunnelled(${allowed}), await tunnelled(${other}), await direct(${allowed}, '127.0.0.1'), await direct(443, '192.0.2.1')])))();`;
      const command = execCommand(egress, name, { cwd: p.path, env: { HOME: p.home }, argv: ['node', '-e', program] });
      const [file, ...args] = command.argv.filter((a) => a !== '-it');
      // Run without blocking this process: the servers it asks answer from here.
      const seen = JSON.parse((await promisify(execFile)(file!, args, { encoding: 'utf8', env: { ...process.env, ...command.env } })).stdout);
      expect(seen).toEqual(['200:allowed', '403:', 'HTTP/1.1 200 Connection Established|allowed', 'HTTP/1.1 403 Forbidden|', 'error:ECONNREFUSED', 'error:ENETUNREACH']);
      // What it refused is noted, outside the container.
      expect(readFileSync(proxyLog({ name, home: p.home }), 'utf8')).toMatch(new RegExp(`refused GET 127\\.0\\.0\\.1:${other}\\n.*refused CONNECT 127\\.0\\.0\\.1:${other}\\n`));
      const proxies = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('proxy-main.js') && line.includes(name));
      expect(proxies()).toHaveLength(1);
      expect(await removeContainer('podman', name)).toBe(true);
      const deadline = Date.now() + 10_000;
      while (proxies().length > 0 && Date.now() < deadline) await sleep(100);
      expect(proxies()).toEqual([]);
    } finally {
      for (const server of servers) server.close();
    }
  });

  it('reaps what ends inside (its init), and finds its processes by their namespace whatever the engine lists: docker answered by podman', async () => {
    const p = place('reaps');
    const name = await makeContainer(spec, p);
    made.push(name);
    const init = Number(execFileSync('podman', ['container', 'inspect', '--format', '{{.State.Pid}}', name], { encoding: 'utf8' }).trim());
    // A job left behind by a shell that ended: orphaned to the container's first process.
    for (let i = 0; i < 5; i++) execFileSync('podman', ['exec', name, 'sh', '-c', 'sleep 0.2 & exit 0']);
    await sleep(1000);
    const children = readFileSync(`/proc/${init}/task/${init}/children`, 'utf8').trim().split(' ').filter(Boolean);
    const zombies = children.filter((pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z'));
    expect(zombies).toEqual([]);

    // `docker` as the podman-docker shim: its `top` prints the container's own pid numbers.
    const shim = tempDir('flume-docker-shim-');
    writeFileSync(join(shim, 'docker'), '#!/bin/sh\nexec podman "$@"\n', { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${shim}:${path}`;
    try {
      execFileSync('podman', ['exec', '-d', name, 'sleep', '1002']);
      await sleep(300);
      const listed = execFileSync('docker', ['top', name, '-o', 'pid'], { encoding: 'utf8' }).trim().split('\n').slice(1).map(Number);
      const pids = (await insidePids('docker', name))!;
      expect(pids).toHaveLength(1);
      expect(readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8')).toBe('sleep\u00001002\u0000');
      // What the engine listed are not those pids here.
      expect(listed).not.toContain(pids[0]);
      expect(await endInside('docker', name)).toBe(1);
      await sleep(200);
      expect(await insidePids('docker', name)).toEqual([]);
    } finally {
      process.env.PATH = path;
    }
  });

  it('takes back a fast-forward of the branch alone: a rewritten branch is refused, kept in its repository, and the next container not made', async () => {
    const p = place('rewrite');
    const name = await makeContainer(spec, p);
    made.push(name);
    const inside = (script: string) => {
      const command = execCommand(spec, name, { cwd: p.path, env: { HOME: p.home, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@b' }, argv: ['sh', '-c', script] });
      const [file, ...args] = command.argv.filter((a) => a !== '-it');
      return execFileSync(file!, args, { encoding: 'utf8', env: { ...process.env, ...command.env } });
    };
    inside('git commit -q --allow-empty -m first');
    expect(await bringBack({ ...spec, name, home: p.home }, p, git(p.repo, 'rev-parse', 'fix/rewrite'))).toMatchObject({ taken: true });
    const first = git(p.repo, 'rev-parse', 'fix/rewrite');
    // Rewritten inside: the first commit dropped, another in its place.
    inside('git reset -q --soft HEAD~1 && git commit -q --allow-empty -m other');
    const brought = await bringBack({ ...spec, name, home: p.home }, p, first);
    expect(brought.taken).toBe(false);
    expect(git(p.repo, 'rev-parse', 'fix/rewrite')).toBe(first);
    const refused = await refusal(makeContainer(spec, p));
    expect(refused.code).toBe('CONTAINER_UNUSABLE');
    expect(refused.message).toContain('holds commits of fix/rewrite that the branch here cannot take (');
    expect(refused.message).toContain('the branch was rewritten inside');
    // Nothing was removed: the rewritten commit is still in the place's repository.
    expect(git(p.repo, `--git-dir=${containerGitDir({ name, home: p.home })}`, 'log', '-1', '--format=%s', 'fix/rewrite')).toBe('other');
  });

  it('ends a program that forks for ever: none of it is left once endInside answers', async () => {
    const p = place('forks');
    const name = await makeContainer(spec, p);
    made.push(name);
    // Each generation starts the next and ends: its pid is never the one read a moment before.
    mkdirSync(p.home, { recursive: true });
    writeFileSync(join(p.home, 'chain.sh'), 'sh "$0" &\nexit 0\n');
    execFileSync('podman', ['exec', '-d', name, 'setsid', 'sh', join(p.home, 'chain.sh')]);
    await sleep(500);
    // Seen running (its pids, or unknown where it outruns the reading): never none.
    expect(await insidePids('podman', name)).not.toEqual([]);
    expect(await endInside('podman', name)).toBeGreaterThan(0);
    await sleep(500);
    expect(await insidePids('podman', name)).toEqual([]);
    expect(await containerState('podman', name)).toBe('running');
  });

  it('takes the branch back through a container made for it when its own is gone, and reads nothing of a repository holding a FIFO', async () => {
    const p = place('gone');
    const name = await makeContainer(spec, p);
    made.push(name);
    const before = git(p.repo, 'rev-parse', 'fix/gone');
    const command = execCommand(spec, name, { cwd: p.path, env: { HOME: p.home }, argv: ['git', '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'made inside'] });
    const [file, ...args] = command.argv.filter((a) => a !== '-it');
    execFileSync(file!, args, { env: { ...process.env, ...command.env } });
    execFileSync('podman', ['rm', '-f', '-t', '0', name]);
    const back = await bringBack({ ...spec, name, home: p.home }, p, before);
    expect(back, JSON.stringify(back)).toMatchObject({ taken: true });
    expect(git(p.repo, 'log', '-1', '--format=%s', 'fix/gone')).toBe('made inside');
    expect(readdirSync(join(p.commonDir, 'objects')).filter((entry) => entry.startsWith('flume-incoming-'))).toEqual([]);

    // Another commit, then its alternates made a FIFO: git packing there would wait for ever.
    const dir = containerGitDir({ name, home: p.home });
    const head = git(p.repo, 'rev-parse', 'fix/gone');
    const next = git(p.repo, `--git-dir=${dir}`, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit-tree', '-p', head, '-m', 'next', `${head}^{tree}`);
    git(p.repo, `--git-dir=${dir}`, 'update-ref', 'refs/heads/fix/gone', next);
    rmSync(join(dir, 'objects', 'info', 'alternates'));
    execFileSync('mkfifo', [join(dir, 'objects', 'info', 'alternates')]);
    const started = Date.now();
    const refused = await bringBack({ ...spec, name, home: p.home }, p, head);
    expect(refused).toMatchObject({ taken: false, refused: expect.stringContaining('a file that is not a plain file at') });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('counts its keeper only while it is the program flume started: one made another is something running', async () => {
    const p = place('keeper');
    const name = containerName(p);
    made.push(name);
    // A container whose init's first child is not `sleep infinity` (what an exec into the keeper makes of it).
    execFileSync('podman', ['run', '-d', '--init', '--name', name, '--network', 'none', ...HOST_PROGRAMS.flatMap((mount) => ['-v', `${mount.split(':')[0]}:${mount}`]), '--entrypoint', 'sleep', podmanForTests().image, '1000']);
    await sleep(300);
    expect(await insidePids('podman', name)).toHaveLength(1);
    expect(await endInside('podman', name)).toBe(1);
  });
});
