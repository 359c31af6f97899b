/**
 * Whether a place's work is over (landed, or dropped), and whether its agent still runs: the two
 * things tidying must know before it may remove anything.
 */
import { callHook } from '../hooks.js';
import { reachDriver } from '../drivers.js';
import type { Flume } from '../plugin.js';
import type { PlaceRecord } from '../types.js';
import { deliverableRequest, type PlaceReading, type Reading } from './reading.js';

/**
 * Why the place's work is over ('dropped', 'landed'), or undefined while it is not. Landed means the
 * branch has work (it moved from its base) and the reader that judges landing (the one that declares
 * `landing: true`) finds all of it on the target; it is asked through `readDeliverable` for its type,
 * so a plugin tapping that type first (a sluice record) answers first. With none, git judges.
 */
export async function workOver(flume: Flume, reading: Reading, place: PlaceReading): Promise<string | undefined> {
  if (place.record.dropped) return 'dropped';
  if (!place.branch || place.branch.head === place.record.base) return undefined;
  const type = flume.deliverables.all().find((reader) => reader.landing)?.type;
  const hook = type !== undefined ? flume.hooks.readDeliverable.get(type) : undefined;
  if (type !== undefined && hook?.isUsed()) {
    const request = deliverableRequest(reading, place, { name: type, prompt: '', deliverable: type }, { type });
    if (!request) return undefined;
    const result = await callHook(`readDeliverable(${type})`, hook, request);
    return result?.present ? 'landed' : undefined;
  }
  return (await reading.unlanded(place.record)) === 0 ? 'landed' : undefined;
}

/** True while the place's current agent runs, or when flume cannot tell (no driver to read it). */
export async function agentRunning(flume: Flume, record: PlaceRecord): Promise<boolean> {
  const handle = record.stage?.agent;
  if (!handle) return false;
  const driver = reachDriver(flume, handle.driver);
  if (!driver) return true;
  const state = (await driver.read(handle)).state;
  return state !== 'exited' && state !== 'not-up';
}
