/**
 * A kind: a name and its stages, each with its prompt, its deliverable and its agent, written as data
 * and checked against the config schema's kind (config.ts), the one source of its shape.
 */
import type { KindDef } from './config.js';

export type { KindDef, StageDef, ReadyStep, Limits } from './config.js';

/** A typed identity for writing a kind as data; a plugin adds it with `flume.kinds.add(kind)` (its key is its name). */
export function defineKind(kind: KindDef): KindDef {
  return kind;
}
