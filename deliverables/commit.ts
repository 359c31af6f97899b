/**
 * The `commit` deliverable: a fix's code stage ends on a commit made since the stage began.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type FlumePlugin } from '../core/index.js';

const NAME = 'flume:deliverable:commit';

/**
 * Reads a code stage that commits: present when the branch head is not the head the stage began at
 * (`place.stage.startHead`) and was committed no earlier than the stage began. The time check is the
 * book's "the commit's time at that head": a branch reset back to an older commit moves the head
 * but delivers nothing. Facts: `head`, `startHead`; `unknown: true` when the place has no stage.
 */
export function commitDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        defineDeliverable({
          type: 'commit',
          async read(request): Promise<DeliverableReading> {
            const stage = request.place.stage;
            if (!stage) return { present: false, facts: { unknown: true, head: request.head } };
            const facts = { head: request.head, startHead: stage.startHead };
            if (request.head === stage.startHead) return { present: false, facts };
            if (committedBefore(request.headTime, stage.startedAt)) {
              return { present: false, facts: { ...facts, olderThanStage: true, headTime: request.headTime } };
            }
            return { present: true, what: `commit ${request.head.slice(0, 7)}`, facts };
          },
        }),
      );
    },
  });
}

// Git keeps whole seconds, the stage's start has milliseconds: a commit in the stage's first second
// must not read as older than the stage. An unreadable time decides nothing.
function committedBefore(headTime: string, startedAt: string): boolean {
  const head = Date.parse(headTime);
  const start = Date.parse(startedAt);
  if (Number.isNaN(head) || Number.isNaN(start)) return false;
  return head < Math.floor(start / 1000) * 1000;
}
