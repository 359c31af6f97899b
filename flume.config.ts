/**
 * flume's own config: what a fresh place of this repository needs before an agent works in it.
 * `flume trust --repo .` first (README "Trusting a repository"); the README's main command does.
 *
 * No kind of its own: flume is worked on with the built-in `fix` (and `question`) kinds.
 */
import { defineConfig } from 'flume';

export default defineConfig({
  ready: {
    toolchain: [
      // The repository's installed node_modules when it is what the place's package-lock.json asks
      // for (linked, in a second), else the place's own `npm ci` (scripts/ready-deps.mjs says why).
      { name: 'dependencies', run: ['node', 'scripts/ready-deps.mjs'], timeout: '15m' },
    ],
    // The build the tests and the CLI run from (dist/), and a first check that the place compiles.
    setup: [{ name: 'build', run: ['npm', 'run', 'build'], timeout: '5m' }],
  },
});
