/**
 * The `landing` deliverable: a submission ends when the branch's work is on its target.
 *
 * This is the built-in default, judged from git (DESIGN "Ruling (landing record)"). Where sluice
 * keeps a record of the branch, the sluice reader (`sluice.ts`) answers from it instead: it taps
 * `readDeliverable.for('landing')` at `stage: -10`, so it runs first, and returns undefined where
 * sluice is not installed, so the bail hook falls through to git here.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type DeliverableRequest, type FlumePlugin } from '../core/index.js';

const NAME = 'flume:deliverable:landing';

/**
 * Reads a submission: present when every patch of the place's branch is on its target
 * (`request.unlanded()`, judged as `git cherry <target> <branch>` judges, in the reading's one
 * batched pass: a patch that reached the target rebased or cherry-picked counts, a squash of
 * several does not, and the branch waits for sluice's record or the operator). Absent with
 * `N patches not on <target>` otherwise. When git cannot tell (a branch or target gone), absent
 * with `facts.unknown`: flume moves on only on a landing it read.
 */
export function landingDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.register(
        NAME,
        // Tidying asks this reader whether a place's work landed.
        defineDeliverable({ type: 'landing', landing: true, read: gitLanding }),
      );
    },
  });
}

/** The landing as git judges it (above); the sluice reader answers with it where sluice holds no record of the branch. */
export async function gitLanding(request: DeliverableRequest): Promise<DeliverableReading> {
  const target = request.place.target;
  const unlanded = await request.unlanded();
  if (unlanded === undefined) return { present: false, what: `landing on ${target} unknown`, facts: { target, unknown: true } };
  if (unlanded === 0) return { present: true, what: `landed on ${target}`, facts: { target, unlanded } };
  return { present: false, what: `${unlanded} ${unlanded === 1 ? 'patch' : 'patches'} not on ${target}`, facts: { target, unlanded } };
}
