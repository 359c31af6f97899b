/** Builds flume once before the tests, so CLI tests run the compiled `dist/bin/flume.js`. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default async function setup(): Promise<void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  if (process.env.FLUME_SKIP_BUILD === '1') return;
  // Each vitest project (flume, and one per Claude Code version) runs its global setup: build once.
  const built = globalThis as { flumeBuilt?: boolean };
  if (built.flumeBuilt) return;
  built.flumeBuilt = true;
  execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
}
