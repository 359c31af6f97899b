/**
 * Builds flume once before the tests, so CLI tests run the compiled `dist/bin/flume.js`, and gives
 * the run a compile cache of its own (FLUME_CACHE_DIR), so no test reads or fills the user's.
 * After the run it removes the container tests' images whose test process has ended.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processExists } from '../../core/support/process.js';

export default async function setup(): Promise<() => void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  let cache: string | undefined;
  if (!process.env.FLUME_CACHE_DIR) {
    cache = mkdtempSync(join(tmpdir(), 'flume-cache-'));
    process.env.FLUME_CACHE_DIR = cache;
  }
  const teardown = () => {
    if (cache) rmSync(cache, { recursive: true, force: true });
    removeTestImages();
  };
  // The checkout's own step after an install (`npm run build` runs it too): node_modules/.bin/claude
  // is the pinned Claude Code. No install script does it: a user's install of flume would run it.
  execFileSync(process.execPath, ['scripts/pin-claude.mjs'], { cwd: root, stdio: 'inherit' });
  if (process.env.FLUME_SKIP_BUILD === '1') return teardown;
  // Each vitest project (flume, and one per Claude Code version) runs its global setup: build once.
  const built = globalThis as { flumeBuilt?: boolean };
  if (built.flumeBuilt) return teardown;
  built.flumeBuilt = true;
  execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  return teardown;
}

/**
 * The container tests' images (`localhost/flume-test:<pid>`, one per test process: helpers/podman.ts)
 * whose process has ended: removed once the run is over. Another run's, whose process still runs, is left.
 */
function removeTestImages(): void {
  let listed: string;
  try {
    listed = execFileSync('podman', ['images', '--filter', 'reference=localhost/flume-test', '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return; // no podman here
  }
  for (const image of listed.split('\n').filter((line) => /^localhost\/flume-test:\d+$/.test(line))) {
    const pid = Number(image.slice(image.lastIndexOf(':') + 1));
    if (processExists(pid)) continue;
    try {
      execFileSync('podman', ['rmi', '-f', image], { stdio: 'ignore' });
    } catch {
      // in use, or removed meanwhile
    }
  }
}
