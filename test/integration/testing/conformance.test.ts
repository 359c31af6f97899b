/**
 * The driver conformance kit (`flume/testing`) run as a driver's author runs it: the Claude Code
 * driver, registered by its shipped plugin, against the fake agent on a tmux server of the test's
 * own, every check through the vitest adapter. The real program passes the same kit in
 * test/e2e/conformance.test.ts; test/integration/testing/broken-drivers.test.ts shows each check fail.
 */
import { afterAll, describe, it } from 'vitest';
import { describeDriverConformance } from '../../../core/testing/index.js';
import { fakeConformanceHarness } from '../../helpers/conformance-fake.js';

const harness = fakeConformanceHarness();
describeDriverConformance(harness, { describe, it, afterAll }, { title: 'the Claude Code driver over the fake agent' });
afterAll(() => harness.cleanup());
