/**
 * The order test files start in: the longest first, so the run does not end with a few long files
 * alone on the machine. vitest orders by the durations it cached from the last run, but a fresh
 * clone (CI, a newcomer) has no cache, and then vitest starts the largest files first: the four thin
 * tidy shards, among the longest, started last and ran alone for the last three minutes.
 *
 * `SECONDS` holds each long file's time in one full run on this 2-core machine (four files at once).
 * A file not listed keeps vitest's order after the listed ones. Projects keep their group order.
 * Stale figures cost only speed: re-read them from `--reporter=json` when the suite changes shape.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  'test/integration/robustness/bad-input.test.ts': 154,
  'test/integration/agents/tell-stop.test.ts': 144,
  'test/integration/robustness/crash.test.ts': 129,
  'test/integration/surfaces/launch-dry-run.test.ts': 126,
  'test/integration/tidy/edges.test.ts': 114,
  'test/integration/robustness/concurrency.test.ts': 93,
  'test/integration/herdr/launch.test.ts': 87,
  'test/integration/core/trust.test.ts': 78,
  'test/integration/core/third-party.test.ts': 71,
  'test/integration/stages/truth.test.ts': 70,
  'test/integration/stages/property.test.ts': 65,
  'test/integration/tidy/tools.test.ts': 62,
  'test/integration/core/status.test.ts': 61,
  'test/integration/stages/change.test.ts': 61,
  'test/integration/stages/races.test.ts': 59,
  'test/integration/core/trust-supervisor.test.ts': 59,
  'test/integration/robustness/launch-edges.test.ts': 59,
  'test/integration/herdr/sidebar.test.ts': 58,
  'test/integration/herdr/host.test.ts': 53,
  'test/integration/tidy/rules.test.ts': 52,
  'test/integration/fake-claude.test.ts': 51,
  'test/integration/stages/operate.test.ts': 48,
  'test/integration/agents/delivery.test.ts': 46,
  'test/integration/stages/independent.test.ts': 44,
  'test/integration/testing/broken-drivers.test.ts': 43,
  'test/integration/stages/question.test.ts': 40,
  'test/integration/core/config.test.ts': 39,
  'test/integration/core/warm.test.ts': 39,
  'test/integration/robustness/secrets.test.ts': 32,
  'test/integration/core/doctor.test.ts': 30,
  // The tidy shards: a few histories each in the default run; 50 each, some 4 minutes, in CI's run of 200.
  ...Object.fromEntries([0, 1, 2, 3].map((k) => [`test/integration/tidy/random-${k}.test.ts`, Number(process.env.FLUME_TIDY_HISTORIES ?? 0) >= 100 ? 240 : 30])),
  // End-to-end files (each project's own group; longest first within it).
  'test/e2e/flume-agents.test.ts': 65,
  'test/e2e/fake-and-real.test.ts': 50,
  'test/e2e/flume-change.test.ts': 46,
  'test/e2e/conformance.test.ts': 32,
  'test/e2e-codex/conformance.test.ts': 34,
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
