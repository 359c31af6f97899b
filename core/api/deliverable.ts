/**
 * The contract of a deliverable reader: what ends a stage of its type, read at one commit, and what
 * else it declares (prompt variables, further rounds, whether it judges a branch's landing).
 */
import type { DeliverableReading, DeliverableRequest } from './hooks.js';

/**
 * A deliverable reader: what ends a stage of its `type`, read at one commit. Everything the core
 * needs to know of a reader beyond `read` it declares here.
 */
export interface DeliverableReader {
  /** The type stages name in `deliverable:` (`commit`). */
  type: string;
  /** Reads the deliverable at the request's commit; undefined when it has no answer (no reading of the stage). */
  read(request: DeliverableRequest): Promise<DeliverableReading | undefined>;
  /**
   * Optional: prompt variables the reader gives a stage that ends on it (an OpenSpec reader's
   * `{change}`), computed once when the stage starts. A template's placeholder nobody fills stays as written.
   */
  variables?(context: DeliverableContext): Record<string, string>;
  /**
   * Optional: a stage that ends on it may run another round in the same place (`flume go-on`): its
   * deliverable is a conclusion another round adds to, not work that would be done twice.
   */
  rounds?: boolean;
  /**
   * Optional: this reader judges whether a branch's work landed on its target. Tidying asks the
   * reader that declares it (the one registered for its type: a plugin that replaced it is asked)
   * whether a place's work is over; with none, flume asks git (`git cherry`).
   */
  landing?: boolean;
}

/** What a reader's `variables` is handed: the place, the stage and its deliverable options. */
export type DeliverableContext = Pick<DeliverableRequest, 'place' | 'stage' | 'options'>;

/** A typed identity for writing a deliverable reader; a plugin adds it with `flume.deliverables.add(reader)`. */
export function defineDeliverable<R extends DeliverableReader>(reader: R): R {
  return reader;
}
