/**
 * Podman as these machines run it (../shared/facts/podman.md): runc, the cgroupfs manager and no
 * default ulimits, from a containers.conf of the tests' own; and an image made here, with nothing
 * in it, that runs the host's own programs mounted read-only.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './repo.js';

let made: { conf: string; image: string; tar: string } | undefined;

/** The containers.conf the tests' podman runs with, and an image of this process's own (made once). */
export function podmanForTests(): { conf: string; image: string; env: Record<string, string> } {
  if (!made) {
    const dir = tempDir('flume-podman-');
    const conf = join(dir, 'containers.conf');
    writeFileSync(conf, '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n');
    const empty = join(dir, 'empty');
    execFileSync('mkdir', ['-p', empty]);
    // The host's merged /usr: /bin, /sbin and /lib are links into it, as on the host.
    for (const link of ['bin', 'sbin', 'lib', 'lib64']) execFileSync('ln', ['-s', `usr/${link}`, join(empty, link)]);
    execFileSync('tar', ['-C', empty, '-cf', join(dir, 'empty.tar'), '.']);
    const image = `localhost/flume-test:${process.pid}`;
    execFileSync('podman', ['import', '-q', join(dir, 'empty.tar'), image], { env: { ...process.env, CONTAINERS_CONF: conf } });
    made = { conf, image, tar: join(dir, 'empty.tar') };
  }
  return { conf: made.conf, image: made.image, env: { CONTAINERS_CONF: made.conf } };
}

/** The tests' image made to run as `user` (its USER), as an image built with a USER line does. */
export function podmanImageAs(user: string): string {
  podmanForTests();
  const image = `localhost/flume-test-user${user}:${process.pid}`;
  execFileSync('podman', ['import', '-q', '--change', `USER=${user}`, made!.tar, image], { env: { ...process.env, CONTAINERS_CONF: made!.conf } });
  return image;
}

/** The host's programs, mounted read-only where the image has nothing: git, node, a shell. */
export const HOST_PROGRAMS = ['/usr:ro', '/etc/alternatives:ro'];

/** True when podman is installed here. */
export function hasPodman(): boolean {
  try {
    execFileSync('podman', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
