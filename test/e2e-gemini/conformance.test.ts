/**
 * The driver conformance kit (`flume/testing`) passed by the Gemini CLI driver against the REAL
 * Gemini CLI (0.61.0), each scenario scripted through the Gemini API on 127.0.0.1 — the same kit the
 * Claude Code and Codex drivers pass. Drops are lost Enters at the terminal.
 *
 * Run inside a loopback-only network namespace:
 *     npm test -- --project gemini test/e2e-gemini/conformance.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriverConformance } from '../../core/testing/index.js';
import { geminiConformanceHarness } from '../helpers/conformance-gemini.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

const harness = geminiConformanceHarness();
describeDriverConformance(harness, { describe, it, afterAll }, { title: 'the Gemini CLI driver against the real Gemini CLI 0.61.0' });
afterAll(async () => {
  await harness.cleanup();
  expect(harness.unexpected, 'what the scripted Gemini API saw unscripted').toEqual([]);
});
