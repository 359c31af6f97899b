import { afterEach, describe, expect, it, vi } from 'vitest';
import { durationMs, longTimeout, MAX_DURATION_MS, toMs } from '../../../core/support/duration.js';
import { duration } from '../../../core/cli/commands/watch.js';
import { configProblems } from '../../../core/config/validate.js';
import { FlumeError } from '../../../core/api/errors.js';
import { run, runStep } from '../../../core/support/exec.js';

const HOUR = 3_600_000;

/** The error `fn` throws. */
function thrown(fn: () => unknown): FlumeError {
  try {
    fn();
  } catch (error) {
    return error as FlumeError;
  }
  throw new Error('it did not throw');
}

describe('a duration', () => {
  it('is seconds as a number, or a number with ms, s, m or h', () => {
    expect(durationMs(90)).toBe(90_000);
    expect(durationMs(0.5)).toBe(500);
    expect(durationMs(0)).toBe(0);
    expect(durationMs('500ms')).toBe(500);
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('20m')).toBe(20 * 60_000);
    expect(durationMs('1.5h')).toBe(1.5 * HOUR);
    expect(durationMs('600h')).toBe(600 * HOUR);
  });

  it('is at most 100000h, however it is written', () => {
    expect(MAX_DURATION_MS).toBe(100_000 * HOUR);
    expect(durationMs('100000h')).toBe(MAX_DURATION_MS);
    expect(durationMs(360_000_000)).toBe(MAX_DURATION_MS);
    expect(durationMs(`${MAX_DURATION_MS}ms`)).toBe(MAX_DURATION_MS);
    for (const long of ['100001h', '100000.001h', '6000001m', '360000001s', `${MAX_DURATION_MS + 1}ms`, 360_000_001, Infinity, 1e300]) {
      expect(durationMs(long), String(long)).toBe('too-long');
    }
  });

  it('is nothing else: a negative number, no unit, another unit, spaces or words are no duration', () => {
    for (const bad of [-1, -0.001, NaN, 'banana', '', '10', '-5s', '5 s', ' 5s', '5s ', '5d', '5sec', '1e3s', '.5s', '5.s', 'Infinityh', '0x10s', '5S']) {
      expect(durationMs(bad), JSON.stringify(bad)).toBe('malformed');
    }
  });

  it("in a config read at run time falls back only where none is given, and otherwise is BAD_CONFIG naming where it was read", () => {
    expect(toMs(undefined, 1234, 'limits.stuckAfter')).toBe(1234);
    expect(toMs('2h', 1234, 'limits.stuckAfter')).toBe(2 * HOUR);
    const bad = thrown(() => toMs('soon', 1234, 'limits.stuckAfter'));
    expect(bad).toMatchObject({ code: 'BAD_CONFIG', details: { path: 'limits.stuckAfter', value: 'soon' } });
    expect(bad.message).toContain('limits.stuckAfter');
    const long = thrown(() => toMs('100001h', 1234, 'kind unit.limits.startTimeout'));
    expect(long).toMatchObject({ code: 'BAD_CONFIG', details: { path: 'kind unit.limits.startTimeout', value: '100001h' } });
    expect(long.message).toContain('100000h');
  });

  it('on the command line is seconds or a number with a unit, at most 100000h; anything else is BAD_USAGE (exit 2)', () => {
    expect(duration('timeout', '90')).toBe(90_000);
    expect(duration('timeout', '600h')).toBe(600 * HOUR);
    expect(duration('timeout', '100000h')).toBe(MAX_DURATION_MS);
    for (const bad of ['100001h', '360000001', 'banana', '-1', '', '5d']) {
      const error = thrown(() => duration('timeout', bad));
      expect(error, bad).toMatchObject({ code: 'BAD_USAGE', exitCode: 2, details: { timeout: bad } });
      expect(error.message, bad).toContain('--timeout');
    }
    expect(thrown(() => duration('timeout', '100001h')).message).toContain('longer than 100000h');
  });

  it('in a config is refused naming its path, each problem once, whether too long or no duration', async () => {
    const problems = await configProblems({
      limits: { stuckAfter: '100001h', promptTimeout: 360_000_001, startTimeout: '60s' },
      kinds: [{ name: 'unit', limits: { startTimeout: 'soon' }, stages: [{ name: 'a', prompt: 'p', deliverable: 'commit', limits: { stuckAfter: -1 } }] }],
      ready: { setup: [{ run: 'true', timeout: '200000h' }], toolchain: [{ run: 'true', timeout: '100000h' }] },
    });
    expect(problems.map((problem) => problem.path).sort()).toEqual([
      'kinds[0].limits.startTimeout',
      'kinds[0].stages[0].limits.stuckAfter',
      'limits.promptTimeout',
      'limits.stuckAfter',
      'ready.setup[0].timeout',
    ]);
    expect(problems.find((problem) => problem.path === 'limits.stuckAfter')).toMatchObject({ message: expect.stringContaining('longer than 100000h'), fix: 'give at most 100000h' });
    expect(problems.find((problem) => problem.path === 'kinds[0].limits.startTimeout')).toMatchObject({ message: 'is not a duration' });
    expect(await configProblems({ limits: { stuckAfter: '100000h', promptTimeout: 360_000_000 } })).toEqual([]);
  });
});

describe('longTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits a duration past what one Node timer holds (2^31-1 ms) in full, then calls once', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    longTimeout(fn, 600 * HOUR);
    vi.advanceTimersByTime(2 ** 31);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(600 * HOUR - 2 ** 31 - 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(MAX_DURATION_MS);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('waits the longest duration flume takes, and a short one, as long as asked', () => {
    vi.useFakeTimers();
    const longest = vi.fn();
    const short = vi.fn();
    longTimeout(longest, MAX_DURATION_MS);
    longTimeout(short, 20);
    vi.advanceTimersByTime(19);
    expect(short).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(short).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(MAX_DURATION_MS - 21);
    expect(longest).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(longest).toHaveBeenCalledTimes(1);
  });

  it('is cleared at any link of its chain', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const timer = longTimeout(fn, 3 * 2 ** 31);
    vi.advanceTimersByTime(2 ** 31 + 5);
    timer.clear();
    vi.advanceTimersByTime(MAX_DURATION_MS);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fires at once for no time at all', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    longTimeout(fn, 0);
    vi.advanceTimersByTime(0);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe("a program's time limit", () => {
  it('ends a readying step (runStep) and a short program (run) past it, as timed out, not as failing to start', async () => {
    for (const start of [runStep, run]) {
      const began = Date.now();
      const result = await start('sleep', ['30'], { timeoutMs: 300 });
      expect(result, start.name).toMatchObject({ timedOut: true });
      expect(result.failedToStart, start.name).toBeUndefined();
      // Ended at its limit, not by the program's own end 30 s on.
      expect(Date.now() - began, start.name).toBeLessThan(30_000);
    }
    expect(await runStep('true', [], { timeoutMs: 600 * HOUR })).toMatchObject({ exitCode: 0, timedOut: false });
    expect(await run('true', [], { timeoutMs: 600 * HOUR })).toMatchObject({ exitCode: 0, timedOut: false });
  });
});
