/**
 * The order test files start in: the longest first, so the run does not end with a few long files
 * alone on the machine. vitest orders by the durations it cached from the last run, but a fresh
 * clone (CI, a newcomer) has no cache, and then vitest starts the largest files first: the four thin
 * tidy shards, among the longest, started last and ran alone for the last three minutes.
 *
 * `SECONDS` holds each long file's time in one full run on this 2-core machine (four files at once;
 * a fresh-clone `.ci/run`, 2026-12-05).
 * A file not listed keeps vitest's order after the listed ones. Projects keep their group order.
 * Stale figures cost only speed: re-read them from a run's outcome (`FLUME_TEST_OUTCOME`, each file's
 * `durationMs`) when the suite changes shape.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  'test/integration/surfaces/hosts.test.ts': 189,
  'test/integration/container/place.test.ts': 142,
  'test/integration/robustness/bad-input.test.ts': 127,
  'test/integration/robustness/crash.test.ts': 118,
  'test/integration/core/writing-a-plugin.test.ts': 102,
  'test/integration/tidy/tools.test.ts': 98,
  'test/integration/stages/truth.test.ts': 92,
  'test/integration/stages/change.test.ts': 91,
  'test/integration/stages/property.test.ts': 87,
  'test/integration/surfaces/launch-dry-run.test.ts': 84,
  'test/integration/herdr/sidebar.test.ts': 77,
  'test/integration/core/trust-supervisor.test.ts': 69,
  'test/integration/core/config-loading.test.ts': 69,
  'test/integration/stages/callers.test.ts': 66,
  'test/integration/robustness/launch-edges.test.ts': 66,
  'test/integration/surfaces/mcp.test.ts': 65,
  'test/integration/robustness/concurrency.test.ts': 62,
  'test/integration/core/status.test.ts': 61,
  'test/integration/tidy/rules.test.ts': 60,
  'test/integration/stages/soak.test.ts': 60,
  'test/integration/stages/races.test.ts': 58,
  'test/integration/tidy/edges.test.ts': 57,
  'test/integration/surfaces/hosts-held.test.ts': 56,
  'test/integration/surfaces/status-view.test.ts': 54,
  'test/integration/stages/callers-faults.test.ts': 50,
  'test/integration/testing/broken-drivers.test.ts': 46,
  'test/integration/stages/callers-page.test.ts': 46,
  'test/integration/herdr/launch.test.ts': 46,
  'test/integration/stages/independent.test.ts': 45,
  'test/integration/agents/tell-stop.test.ts': 45,
  'test/integration/fake-claude.test.ts': 41,
  'test/integration/core/third-party.test.ts': 41,
  'test/integration/core/trust.test.ts': 40,
  'test/integration/stages/operate.test.ts': 39,
  'test/integration/agents/delivery.test.ts': 37,
  'test/integration/robustness/environment.test.ts': 35,
  'test/integration/surfaces/launch-progress.test.ts': 34,
  'test/integration/core/repository-kept.test.ts': 32,
  'test/integration/core/warm.test.ts': 29,
  'test/integration/stages/stopping.test.ts': 26,
  'test/integration/stages/identity.test.ts': 26,
  'test/integration/robustness/durations.test.ts': 26,
  'test/integration/core/doctor.test.ts': 25,
  // The tidy shards: a few histories each in the default run; 50 each, some 4 minutes, in CI's run of 200.
  ...Object.fromEntries([0, 1, 2, 3].map((k) => [`test/integration/tidy/random-${k}.test.ts`, Number(process.env.FLUME_TIDY_HISTORIES ?? 0) >= 100 ? 240 : 30])),
  // End-to-end files (each project's own group; longest first within it).
  'test/e2e-opencode/conformance.test.ts': 142,
  'test/e2e-opencode/opencode-vs-real.test.ts': 108,
  'test/e2e/conformance.test.ts': 84,
  'test/e2e-gemini/conformance.test.ts': 64,
  'test/e2e/flume-agents.test.ts': 56,
  'test/e2e/flume-change.test.ts': 49,
  'test/e2e/readme.test.ts': 44,
  'test/e2e-opencode/opencode.test.ts': 42,
  'test/e2e-gemini/gemini-vs-real.test.ts': 42,
  'test/e2e-gemini/gemini.test.ts': 38,
  'test/e2e-codex/conformance.test.ts': 38,
  'test/e2e/flume-callers.test.ts': 31,
  'test/e2e/fake-and-real.test.ts': 31,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification) => SECONDS[relative(root, spec.moduleId)] ?? 0;
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return base
      .map((spec, at) => ({ spec, at }))
      .sort((a, b) => group(a.spec) - group(b.spec) || (a.spec.project.name < b.spec.project.name ? -1 : a.spec.project.name > b.spec.project.name ? 1 : 0) || seconds(b.spec) - seconds(a.spec) || a.at - b.at)
      .map(({ spec }) => spec);
  }
}
