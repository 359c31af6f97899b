import { defineConfig } from 'vitest/config';
import { selectedClaudeVersions } from './test/helpers/claude-env.js';

/**
 * Two kinds of project: `flume` (unit and integration tests, run once) and one `claude-<version>`
 * project per Claude Code version the end-to-end suite runs against, each with
 * `FLUME_CLAUDE_VERSION` set for its test files. Which versions: `FLUME_CLAUDE_VERSIONS` (`all` or a
 * comma list); unset, every version in CI (`CI=true`) and the pinned one elsewhere.
 */
const E2E = 'test/e2e/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'flume', include: ['test/**/*.test.ts'], exclude: [E2E] } },
      ...selectedClaudeVersions().map((version) => ({
        extends: true,
        test: { name: `claude-${version}`, include: [E2E], env: { FLUME_CLAUDE_VERSION: version } },
      })),
    ],
  },
});
