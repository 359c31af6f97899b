/**
 * Whether a place's work is over (landed, or dropped), and whether its agent still runs: the two
 * things tidying must know before it may remove anything.
 */
import { callHook } from '../../api/hooks.js';
import { reachDriver } from '../../drivers/reach.js';
import type { Flume } from '../../api/plugin.js';
import type { PlaceRecord } from '../../api/record.js';
import { deliverableRequest, type PlaceReading, type Reading } from '../status/reading.js';

/**
 * Why the place's work is over ('dropped', 'landed'), or undefined while it is not. Landed means the
 * branch has work (it moved from its base) and the landing reader finds all of it on the target
 * (`landingOf`, the same verdict status shows).
 */
export async function workOver(flume: Flume, reading: Reading, place: PlaceReading): Promise<string | undefined> {
  if (place.record.dropped) return 'dropped';
  if (!place.branch || place.branch.head === place.record.base) return undefined;
  return (await landingOf(flume, reading, place)).state === 'landed' ? 'landed' : undefined;
}

/** A place's landing as status shows it and tidying acts on it. */
export interface Landing {
  state: 'landed' | 'not-landed' | 'no-commits' | 'unknown';
  /** The branch's patches its target lacks, where git judged them. */
  missing?: number;
  /** The evidence that decided: `patch`, `content`, `patch-and-content` (git found nothing either way), or `sluice` (its record). */
  by?: 'patch' | 'content' | 'patch-and-content' | 'sluice';
  /** The reader's words: `1 patch not on main`, `merging it into main adds or changes b.txt`, `landed on main by sluice (1a2b3c4)`. */
  what?: string;
}

/**
 * The one verdict on a place's landing, for status and tidying alike: the reader that judges landing
 * (the one that declares `landing: true`), asked through `readDeliverable` for its type, so a reader
 * that replaced it (sluice's record) answers; with none, git judges by patch and by
 * content. A branch still at its base has no commits to land.
 */
export async function landingOf(flume: Flume, reading: Reading, place: PlaceReading): Promise<Landing> {
  if (!place.branch) return { state: 'unknown' };
  if (place.branch.head === place.record.base) return { state: 'no-commits' };
  const type = flume.deliverables.all().find((reader) => reader.landing)?.type;
  const hook = type !== undefined ? flume.hooks.readDeliverable.get(type) : undefined;
  if (type !== undefined && hook?.isUsed()) {
    const request = deliverableRequest(reading, place, { name: type, prompt: '', deliverable: type }, { type });
    if (!request) return { state: 'unknown' };
    const result = await callHook(`readDeliverable(${type})`, hook, request);
    if (!result) return { state: 'unknown' };
    const facts = result.facts ?? {};
    const missing = typeof facts.unlanded === 'number' ? { missing: facts.unlanded } : {};
    const by = typeof facts.by === 'string' && BY.has(facts.by) ? { by: facts.by as Landing['by'] } : {};
    const what = result.what ? { what: result.what } : {};
    if (result.present) return { state: 'landed', ...missing, ...by, ...what };
    if (facts.unknown) return { state: 'unknown', ...what };
    return { state: 'not-landed', ...missing, ...by, ...what };
  }
  const judged = await reading.landing(place.record);
  if (!judged) return { state: 'unknown' };
  if (judged.patches > 0) return { state: 'not-landed', missing: judged.patches, by: 'patch' };
  if (judged.content) return { state: 'not-landed', missing: 0, by: 'content' };
  return { state: 'landed', missing: 0, by: 'patch-and-content' };
}

const BY = new Set(['patch', 'content', 'patch-and-content', 'sluice']);

/** True while the place's current agent runs, or when flume cannot tell (no driver to read it). */
export async function agentRunning(flume: Flume, record: PlaceRecord): Promise<boolean> {
  const handle = record.stage?.agent;
  if (!handle) return false;
  const driver = reachDriver(flume, handle.driver);
  if (!driver) return true;
  const state = (await driver.read(handle)).state;
  return state !== 'exited' && state !== 'not-up';
}
