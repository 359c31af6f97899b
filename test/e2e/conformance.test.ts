/**
 * The driver conformance kit (`flume/testing`) passed by the Claude Code driver against the REAL
 * Claude Code (the version of this project, `FLUME_CLAUDE_VERSION`), each scenario scripted through
 * the Messages API on 127.0.0.1: a prompt taken only when its transcript holds it, resent once, never
 * started after two drops or when the program does not come up, a tell refused in a real permission
 * dialog, and a stop that resolves only once the process is gone. Five real agents, one a scenario.
 *
 * Run inside a loopback-only network namespace:
 *     npm test -- --project claude-2.1.332 test/e2e/conformance.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriverConformance } from '../../core/testing/index.js';
import { CLAUDE_VERSION } from '../helpers/claude-env.js';
import { claudeConformanceHarness } from '../helpers/conformance-claude.js';
import { assertIsolated } from '../helpers/netns.js';

beforeAll(() => assertIsolated());

const harness = claudeConformanceHarness();
describeDriverConformance(harness, { describe, it, afterAll }, { title: `the Claude Code driver against the real Claude Code ${CLAUDE_VERSION}` });
afterAll(async () => {
  await harness.cleanup();
  // Checked once every agent is gone: no scenario's API saw a turn it had no reply for.
  expect(harness.unexpected, 'what the scripted Messages API saw unscripted').toEqual([]);
});
