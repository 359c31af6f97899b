/**
 * Each conformance check can fail: the Claude Code driver over the fake agent, with one part broken
 * the way a driver's author might break it, fails the check that guards that part, and says what it saw.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ownsPane, type AgentDriver, type AgentHandle, type Flume } from '../../../core/index.js';
import { processRunning } from '../../../core/support/process.js';
import { waitFor } from '../../helpers/wait.js';
import { ConformanceFailure, driverConformance, type ConformanceSuite, type ConformanceTimeouts } from '../../../core/testing/index.js';
import { fakeConformanceHarness, type FakeHarness } from '../../helpers/conformance-fake.js';

let running: { harness: FakeHarness; suite: ConformanceSuite } | undefined;
afterEach(async () => {
  await running?.suite.close();
  await running?.harness.cleanup();
  running = undefined;
});

/** Runs one check against the broken driver; returns how it failed. */
async function failureOf(check: string, wrap: (driver: AgentDriver, flume: Flume) => AgentDriver, timeouts: Partial<ConformanceTimeouts> = {}): Promise<ConformanceFailure> {
  const harness = fakeConformanceHarness({ wrap, timeouts });
  const suite = driverConformance(harness);
  running = { harness, suite };
  const error = await suite.checks.find((c) => c.id === check)!.run().then(() => undefined, (e: unknown) => e);
  expect(error, `the check "${check}" passed a broken driver`).toBeInstanceOf(ConformanceFailure);
  expect((error as ConformanceFailure).check).toBe(check);
  return error as ConformanceFailure;
}

/** A confirm that takes an empty input box after a sending for the prompt taken (the screen, not the record). */
const emptyBoxConfirms = (driver: AgentDriver): AgentDriver => ({
  ...driver,
  confirm: async (request) => ((await driver.hasDraft(request.handle)) ? driver.confirm(request) : 'taken'),
});

/** A confirm that takes text it sees on the agent's screen for a prompt taken. */
const screenConfirms = (driver: AgentDriver, flume: Flume): AgentDriver => ({
  ...driver,
  async confirm(request) {
    const host = flume.hosts.get(request.handle.host)!;
    const screen = (await ownsPane(host, request.handle)) ? await host.capture(request.handle.pane!) : undefined;
    return screen?.includes(request.text) ? 'taken' : driver.confirm(request);
  },
});

describe('a broken driver fails the check that guards what it breaks', () => {
  it('taken: a confirm that trusts an empty input box "confirms" a text nobody sent', async () => {
    expect((await failureOf('taken', emptyBoxConfirms)).message).toMatch(/"taken" for a text nobody sent/);
  });

  it('screen: a confirm that trusts the screen takes text only typed into the box', async () => {
    expect((await failureOf('screen', screenConfirms)).message).toMatch(/sits in the input box, never submitted/);
  });

  it('resend: a resend that sends nothing leaves a dropped prompt untaken', async () => {
    const failure = await failureOf('resend', (driver) => ({ ...driver, resend: async () => undefined }));
    expect(failure.message).toMatch(/second sending should be taken; the stage reads delivery "never-started" after 2 sending/);
  });

  it('resend: a waitForInput that answers "slow" at 0 without looking is named, with its answer', async () => {
    // flume's step asks waitForInput(handle, 0) before it sends again: "slow" there, and the dropped prompt is never resent.
    const failure = await failureOf('resend', (driver) => ({ ...driver, waitForInput: async (handle, ms) => (ms === 0 ? 'slow' : driver.waitForInput(handle, ms)) }));
    expect(failure.message).toMatch(/after 1 sending\(s\)/);
    expect(failure.message).toMatch(/waitForInput\(handle, 0\) answered "slow"/);
    expect(failure.message).toMatch(/a timeout of 0 means look once/);
  });

  it('never-started: a confirm that trusts an empty input box reports a dropped prompt taken', async () => {
    expect((await failureOf('never-started', emptyBoxConfirms)).message).toMatch(/told the prompt was taken, but the agent drops every prompt/);
  });

  it('never-up: a driver that takes a dead agent for a slow one leaves its stage unknown', async () => {
    // (Either half alone is caught by flume's step: a reading that says exited ends the stage.)
    const failure = await failureOf('never-up', (driver) => ({
      ...driver,
      waitForInput: async (handle, ms) => ((await driver.waitForInput(handle, ms)) === 'exited' ? 'slow' : 'ready'),
      read: async (handle) => {
        const reading = await driver.read(handle);
        return reading.state === 'exited' ? { state: 'starting' } : reading;
      },
    }));
    expect(failure.message).toMatch(/never started; it reads delivery "unknown"/);
  });

  it('tell: a reading that misses dialogs lets a tell type into one', async () => {
    const blind = (driver: AgentDriver): AgentDriver => ({
      ...driver,
      read: async (handle) => {
        const reading = await driver.read(handle);
        return reading.state === 'asking' ? { state: 'working' } : reading;
      },
    });
    const failure = await failureOf('tell', blind, { settleMs: 3_000, promptMs: 2_000 });
    expect(failure.message).toMatch(/tell was taken all the same|must be refused with AGENT_ASKING/);
  });

  it('stop: a stop that returns before the process is gone is caught', async () => {
    const hasty = (driver: AgentDriver, flume: Flume): AgentDriver => ({
      ...driver,
      // One Ctrl-C, and back at once: the agent clears its box and runs on.
      stop: async (handle) => flume.hosts.get(handle.host)!.keys(handle.pane!, ['C-c']),
    });
    expect((await failureOf('stop', hasty)).message).toMatch(/AGENT_DID_NOT_EXIT.*still running|resolved while its process \d+ still ran/);
  });

  it('close: a check still starting its agent (its test timed out) holds close up only a while, and the agent it starts late is gone after', { timeout: 120_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    let late: AgentHandle | undefined;
    const harness = fakeConformanceHarness({ wrap: (driver) => ({ ...driver, start: async (request, host) => (await gate, (late = await driver.start(request, host))) }) });
    const suite = driverConformance(harness);
    running = { harness, suite };
    // The check goes on in the background, as one a test runner timed out does.
    const check = suite.checks.find((c) => c.id === 'taken')!.run().catch(() => undefined);
    await new Promise((done) => setTimeout(done, 1000));
    // Close ends while the start is still held: it does not wait for the check to make its place.
    await suite.close();
    expect(late).toBeUndefined();
    release();
    await waitFor(() => late?.pid !== undefined, 'the late agent started');
    await waitFor(() => !processRunning(late!.pid!), 'the late agent ended');
    await check;
  });
});

