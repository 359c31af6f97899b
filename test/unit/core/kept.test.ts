import { describe, expect, it } from 'vitest';
import { forgetKept, keptCache, keptCaches } from '../../../core/support/kept.js';
import { readRepositoryKept } from '../../../core/support/git.js';

describe('what flume keeps between readings', () => {
  it('bounds each cache by entries and bytes, oldest first out, and forgets every one at once', () => {
    const few = keptCache<string, number>('test: few', { holds: 'numbers', entries: 2 });
    few.set('a', 1);
    few.set('b', 2);
    few.set('c', 3);
    expect([few.get('a'), few.get('b'), few.get('c')]).toEqual([undefined, 2, 3]);
    const heavy = keptCache<string, Buffer>('test: heavy', { holds: 'buffers', entries: 100, bytes: { max: 10, of: (b) => b.length } });
    heavy.set('x', Buffer.alloc(6));
    heavy.set('y', Buffer.alloc(6));
    expect([heavy.has('x'), heavy.has('y')]).toEqual([false, true]);
    heavy.set('y', Buffer.alloc(4));
    heavy.set('z', Buffer.alloc(6));
    expect([heavy.has('y'), heavy.has('z')]).toEqual([true, true]);
    expect(() => keptCache('test: few', { holds: 'again', entries: 1 })).toThrow(/exists already/);
    forgetKept();
    expect(keptCaches().filter((cache) => cache.name.startsWith('test:')).map((cache) => cache.size)).toEqual([0, 0]);
  });

  it("names every cache flume's own modules keep", async () => {
    await import('../../../core/engine/status/reading.js');
    await import('../../../core/engine/stage/usage.js');
    await import('../../../agents/claude-code/reading.js');
    await import('../../../agents/claude-code/version.js');
    await import('../../../agents/codex/checks.js');
    await import('../../../agents/gemini/chat.js');
    expect(typeof readRepositoryKept).toBe('function');
    const names = keptCaches().map((cache) => cache.name);
    expect(names).toEqual(expect.arrayContaining(['repository readings', 'landing judgements', 'objects', 'usage cursors', 'claude-code transcript readings', 'claude-code versions', 'agent versions', 'gemini chat files']));
    for (const cache of keptCaches().filter((c) => !c.name.startsWith('test:'))) expect(cache.holds.length, cache.name).toBeGreaterThan(10);
  });
});
