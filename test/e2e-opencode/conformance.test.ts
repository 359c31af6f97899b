/**
 * The driver conformance kit (`flume/testing`) passed by the OpenCode driver against the REAL
 * OpenCode (1.18.33), each scenario scripted through a Chat Completions API on 127.0.0.1 — the same
 * kit the Claude Code and Codex drivers pass. Drops are lost Enters at the terminal.
 *
 * Run inside a loopback-only network namespace:
 *     sh scripts/test.sh --project opencode test/e2e-opencode/conformance.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriverConformance } from '../../core/testing/index.js';
import { opencodeConformanceHarness } from '../helpers/conformance-opencode.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

const harness = opencodeConformanceHarness();
describeDriverConformance(harness, { describe, it, afterAll }, { title: 'the OpenCode driver against the real OpenCode 1.18.33' });
afterAll(async () => {
  await harness.cleanup();
  expect(harness.unexpected, 'what the scripted Chat Completions API saw unscripted').toEqual([]);
});
