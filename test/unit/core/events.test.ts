import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastEventId, publicName, publishEvent, readEvents } from '../../../core/state/events.js';
import { outcomesOf, wantedOutcome } from '../../../core/engine/status/wait.js';

describe('the event stream', () => {
  it('gives each event the next id, under its lock, however many write at once', async () => {
    const common = mkdtempSync(join(tmpdir(), 'flume-events-'));
    await Promise.all(Array.from({ length: 40 }, (_, i) => publishEvent(common, `fix/p${i % 4}`, 'told', { sends: 1 }, new Date().toISOString())));
    // Other processes too: each takes the file lock in turn.
    const script = `import('${join(process.cwd(), 'dist/core/state/events.js')}').then(async (m) => { for (let i = 0; i < 10; i++) await m.publishEvent(process.argv[1], 'fix/other', 'told', {}, new Date().toISOString()); })`;
    await Promise.all([1, 2, 3].map(() => execa(process.execPath, ['-e', script, common])));
    const events = await readEvents(common);
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
    expect(await lastEventId(common)).toBe(70);
    expect((await readEvents(common, { since: 30, place: 'fix/p1' })).map((e) => e.id)).toEqual(events.filter((e) => e.id > 30 && e.place === 'fix/p1').map((e) => e.id));
    expect(statSync(join(common, 'flume', 'events.jsonl')).mode & 0o777).toBe(0o600);
  });

  it('rotates a large log whose first event is a week old, the ids going on and the older log still read', async () => {
    const common = mkdtempSync(join(tmpdir(), 'flume-events-'));
    await publishEvent(common, 'fix/a', 'launched', {}, new Date(Date.now() - 8 * 24 * 3600_000).toISOString());
    const log = join(common, 'flume', 'events.jsonl');
    const padding = 'x'.repeat(1000);
    const lines = Array.from({ length: 2200 }, (_, i) => JSON.stringify({ id: i + 2, at: new Date().toISOString(), place: 'fix/a', event: 'told', padding }));
    writeFileSync(log, readFileSync(log, 'utf8') + lines.join('\n') + '\n');
    await publishEvent(common, 'fix/a', 'dropped', { reason: 'done' }, new Date().toISOString());
    expect(readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([2202]);
    const all = await readEvents(common);
    expect(all.length).toBe(2202);
    expect(all.at(-1)).toMatchObject({ id: 2202, event: 'dropped', reason: 'done' });
  });

  it('names the engine\'s actions as the stream does, and leaves out what it does not publish', () => {
    expect(publicName('mark-delivered', {})).toBe('delivered');
    expect(publicName('mark-delivery', { delivery: 'never-started' })).toBe('never-started');
    expect(publicName('mark-delivery', { delivery: 'unknown' })).toBe('prompt-unknown');
    expect(publicName('worktree-removed', {})).toBe('tidied');
    expect(publicName('send-again', {})).toBeNull();
    expect(publicName('something-else', {})).toBeNull();
  });
});

describe('what flume wait reads as an outcome', () => {
  const place = (extra: Record<string, unknown>) => ({ state: 'active', stage: { state: 'working' }, ...extra }) as any;
  it('maps each place to the outcomes it shows, and a working one to none', () => {
    expect(outcomesOf(undefined)).toEqual(['gone']);
    expect(outcomesOf(place({ state: 'kept' }))).toEqual(['kept']);
    expect(outcomesOf(place({ state: 'dropped' }))).toEqual(['dropped']);
    expect(outcomesOf(place({ awaits: 'caller' }))).toEqual(['awaits-caller']);
    for (const state of ['waiting', 'stuck', 'never-started', 'over-budget', 'not-ready']) expect(outcomesOf(place({ stage: { state } }))).toEqual([state]);
    expect(outcomesOf(place({ stage: { state: 'delivered' } }))).toEqual(['delivered']);
    expect(outcomesOf(place({}))).toEqual([]);
    expect(outcomesOf(place({ stage: { state: 'starting' } }))).toEqual([]);
  });

  it('counts an outcome a place shows whichever other it also shows (a delivered stage at a gate)', () => {
    const atGate = place({ awaits: 'caller', stage: { state: 'delivered' } });
    expect(outcomesOf(atGate)).toEqual(['awaits-caller', 'delivered']);
    expect(wantedOutcome(atGate, new Set(['delivered']))).toBe('delivered');
    expect(wantedOutcome(atGate, new Set(['awaits-caller']))).toBe('awaits-caller');
    expect(wantedOutcome(atGate, new Set(['delivered', 'awaits-caller']))).toBe('awaits-caller');
    expect(wantedOutcome(atGate, new Set(['stuck']))).toBeUndefined();
  });
});
