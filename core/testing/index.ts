/**
 * `flume/testing`: the driver conformance kit. A driver's author runs it against their driver and
 * their real agent, and it checks what flume relies on a driver for:
 *
 * - `taken`: a prompt counts as taken only once the agent's own record holds it;
 * - `screen`: text on the screen (typed, never submitted) is not taken, and resend submits it once;
 * - `resend`: a prompt the agent did not take is sent once more, and taken;
 * - `never-started`: a prompt not taken after two sendings is reported never started;
 * - `never-up`: an agent that does not come up is reported so, never confirmed;
 * - `tell`: a tell is refused, with nothing typed, while the agent shows a dialog;
 * - `stop`: stop resolves only once the process is gone, and the agent then reads exited.
 *
 * Each check drives the driver through the engine functions flume runs (a stage's start and step,
 * tell, stop), and judges every answer against what the harness sees of the agent without the
 * driver. Nothing here imports a test runner: `driverConformance` returns plain checks, and
 * `describeDriverConformance` hands them to the runner's own `describe`/`it`.
 *
 * While a suite runs, `FLUME_STATE_DIR` points at a temp folder of its own (restored by `close`), so
 * run its checks one at a time, as test runners run the tests of one file.
 */
import { Bench } from './bench.js';
import { conformanceChecks, type ConformanceCheck } from './checks.js';
import { timeoutsOf, type ConformanceHarness } from './harness.js';

export { ConformanceFailure, type ConformanceCheck } from './checks.js';
export { CONFORMANCE_SCENARIOS, type ConformanceHarness, type ConformanceScenario, type ConformanceTimeouts, type ScenarioContext, type ScenarioSetup } from './harness.js';

/** The checks for one driver, sharing its agents, and `close` to end them and remove what the suite made. */
export interface ConformanceSuite {
  checks: ConformanceCheck[];
  /** The longest a check may take with the harness's timeouts (a test runner's per-test timeout). */
  timeoutMs: number;
  /** Ends every agent the checks started and removes the suite's folder; call it once, after the checks. */
  close(): Promise<void>;
}

/**
 * The conformance suite for the driver the harness supplies. The checks start agents only as they
 * need them (one per scenario, shared by the checks that use it), so any subset runs on its own.
 */
export function driverConformance(harness: ConformanceHarness): ConformanceSuite {
  const bench = new Bench(harness);
  const t = timeoutsOf(harness);
  // A check may start two agents, send a prompt three times and wait for a reading twice.
  const timeoutMs = 2 * t.startMs + 4 * t.promptMs + 2 * t.settleMs + t.draftMs;
  return { checks: conformanceChecks(harness, bench), timeoutMs, close: () => bench.close() };
}

/** The parts of a test runner the adapter uses: vitest and jest (`afterAll`), node:test (`after`). */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, run: () => Promise<void>, timeoutMs?: number): unknown;
  afterAll?(run: () => Promise<void>, timeoutMs?: number): unknown;
  after?(run: () => Promise<void>): unknown;
}

/**
 * Registers the suite with a test runner: one `describe`, one test per check, `close` after them.
 * `describeDriverConformance(harness, { describe, it, afterAll })` with vitest's or jest's functions;
 * `{ describe, it, after }` from `node:test`. Returns the suite.
 */
export function describeDriverConformance(harness: ConformanceHarness, runner: TestRunner, options: { title?: string; only?: string[] } = {}): ConformanceSuite {
  const suite = driverConformance(harness);
  const checks = options.only ? suite.checks.filter((check) => options.only!.includes(check.id)) : suite.checks;
  runner.describe(options.title ?? `driver conformance: ${harness.agent}`, () => {
    for (const check of checks) runner.it(check.name, () => check.run(), suite.timeoutMs);
    if (runner.afterAll) runner.afterAll(() => suite.close(), 60_000);
    else runner.after?.(() => suite.close());
  });
  return suite;
}
