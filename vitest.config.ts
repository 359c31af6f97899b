import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { selectedClaudeVersions } from './test/helpers/claude-env.js';
import LongestFirst from './test/helpers/sequencer.js';

/**
 * Projects: `flume` (unit and integration tests, run once), one `claude-<version>`
 * project per Claude Code version the end-to-end suite runs against, each with
 * `FLUME_CLAUDE_VERSION` set for its test files. Which versions: `FLUME_CLAUDE_VERSIONS` (`all` or a
 * comma list); unset, every version in CI (`CI=true`) and the pinned one elsewhere.
 */
const E2E = 'test/e2e/**/*.test.ts';
/** The Codex CLI's end-to-end suite: the real Codex against a scripted Responses API, run once, after the Claude projects. */
const E2E_CODEX = 'test/e2e-codex/**/*.test.ts';
/** The Gemini CLI's end-to-end suite: the real Gemini CLI against a scripted Gemini API, run once, after Codex's. */
const E2E_GEMINI = 'test/e2e-gemini/**/*.test.ts';
/** OpenCode's end-to-end suite: the real OpenCode against a scripted Chat Completions API, run once, after the Gemini CLI's. */
const E2E_OPENCODE = 'test/e2e-opencode/**/*.test.ts';

/**
 * How many test files run at once. Most of the suite waits (on tmux panes, agents, a supervisor's
 * passes) rather than computes, so one file at a time left the 2-core machine idle. Side by side over
 * 25 integration files (bench/RESULTS.md): 3 at once took the wall time of 4 (1.03×) with a little
 * less CPU (0.99×) and a core less oversubscribed; 2 took 0.87× the CPU and 1.18× the wall time.
 * `FLUME_TEST_WORKERS` overrides it.
 */
const WORKERS = Number(process.env.FLUME_TEST_WORKERS ?? 3);
/**
 * How many end-to-end files run at once. They run after the rest, when the machine is theirs: two at
 * once on two cores leaves the real Claude Code a core each (`FLUME_E2E_WORKERS` overrides it).
 */
const E2E_WORKERS = Number(process.env.FLUME_E2E_WORKERS ?? 2);

/**
 * The built flume (`dist/`), which the tests run in their own process (test/helpers/in-process.ts),
 * is loaded by node itself, as the bin loads it, not compiled again by vitest for every test file.
 */
const DIST = new RegExp('^' + fileURLToPath(new URL('./dist/', import.meta.url)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

export default defineConfig({
  test: {
    server: { deps: { external: [DIST] } },
    // Files run three at a time: a test that takes 20 s alone can take a minute beside two others.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/helpers/global-setup.ts'],
    // Counts each file's CPU in a cgroup of its own, where FLUME_TEST_CPU names one (scripts/flakes.mjs).
    setupFiles: ['test/helpers/file-cgroup.ts'],
    // FLUME_TEST_OUTCOME: each file's outcome written as JSON too, for scripts/ci-test.mjs and scripts/flakes.mjs.
    reporters: process.env.FLUME_TEST_OUTCOME ? ['default', 'test/helpers/outcome-reporter.ts'] : ['default'],
    // Longest files first (test/helpers/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'flume', env: { FLUME_TEST_PROJECT: 'flume' }, include: ['test/**/*.test.ts'], exclude: [E2E, E2E_CODEX, E2E_GEMINI, E2E_OPENCODE], maxWorkers: WORKERS, sequence: { groupOrder: 0 } } },
      // The real Claude Code is a heavy program that loses keys on a starved machine: its files run
      // after the rest, two at a time.
      // Each version's files run as a group of their own, so no more than two real programs run at once.
      ...selectedClaudeVersions().map((version, index) => ({
        extends: true as const,
        test: { name: `claude-${version}`, include: [E2E], env: { FLUME_CLAUDE_VERSION: version, FLUME_TEST_PROJECT: `claude-${version}` }, maxWorkers: E2E_WORKERS, sequence: { groupOrder: 1 + index } },
      })),
      { extends: true, test: { name: 'codex', env: { FLUME_TEST_PROJECT: 'codex' }, include: [E2E_CODEX], maxWorkers: Math.min(2, E2E_WORKERS), sequence: { groupOrder: 1 + selectedClaudeVersions().length } } },
      { extends: true, test: { name: 'gemini', env: { FLUME_TEST_PROJECT: 'gemini' }, include: [E2E_GEMINI], maxWorkers: Math.min(2, E2E_WORKERS), sequence: { groupOrder: 2 + selectedClaudeVersions().length } } },
      { extends: true, test: { name: 'opencode', env: { FLUME_TEST_PROJECT: 'opencode' }, include: [E2E_OPENCODE], maxWorkers: Math.min(2, E2E_WORKERS), sequence: { groupOrder: 3 + selectedClaudeVersions().length } } },
    ],
  },
});
