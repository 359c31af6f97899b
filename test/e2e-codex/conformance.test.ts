/**
 * The driver conformance kit (`flume/testing`) passed by the Codex driver against the REAL Codex CLI
 * (0.171.0), each scenario scripted through the Responses API on 127.0.0.1 — the same kit the Claude
 * Code driver passes in test/e2e/conformance.test.ts. Drops are lost Enters at the terminal.
 *
 * Run inside a loopback-only network namespace:
 *     npm test -- --project codex test/e2e-codex/conformance.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriverConformance } from '../../core/testing/index.js';
import { codexConformanceHarness } from '../helpers/conformance-codex.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

const harness = codexConformanceHarness();
describeDriverConformance(harness, { describe, it, afterAll }, { title: 'the Codex driver against the real Codex CLI 0.171.0' });
afterAll(async () => {
  await harness.cleanup();
  expect(harness.unexpected, 'what the scripted Responses API saw unscripted').toEqual([]);
});
