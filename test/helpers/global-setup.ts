/**
 * Builds flume once before the tests, so CLI tests run the compiled `dist/bin/flume.js`, and gives
 * the run a compile cache of its own (FLUME_CACHE_DIR), so no test reads or fills the user's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default async function setup(): Promise<(() => void) | void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  let teardown: (() => void) | undefined;
  if (!process.env.FLUME_CACHE_DIR) {
    const cache = mkdtempSync(join(tmpdir(), 'flume-cache-'));
    process.env.FLUME_CACHE_DIR = cache;
    teardown = () => rmSync(cache, { recursive: true, force: true });
  }
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
