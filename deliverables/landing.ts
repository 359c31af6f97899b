/**
 * The `landing` deliverable: a submission ends when the branch's work is on its target.
 *
 * This is the built-in default, judged from git (DESIGN "Ruling (landing record)"). Where sluice
 * keeps a record of the branch, the sluice reader (`sluice.ts`) answers from it instead: it replaces
 * this reader in the registry (`replace`) and hands the reading back to it where sluice is not
 * installed.
 */
import { contentWords, defineDeliverable, definePlugin, type DeliverableReading, type DeliverableRequest, type FlumePlugin } from '../core/index.js';

const NAME = 'flume:deliverable:landing';

/**
 * Reads a submission: present when the place's branch holds nothing its target lacks, judged by
 * patch and by content (`request.landing()`, in the reading's one batched pass): every patch is on
 * the target (as `git cherry <target> <branch>` judges: a patch that reached the target rebased or
 * cherry-picked counts, a squash of several does not, and the branch waits for sluice's record or
 * the operator), and merging the branch into the target adds nothing (a merge commit that carries
 * work of its own, or a patch the target reverted, is work). Absent with `N patches not on
 * <target>` or what the merge would add otherwise; `facts.by` names the evidence that decided
 * (`patch`, `content`, or `patch-and-content` for a landing both agree on). When git cannot tell (a
 * branch or target gone), absent with `facts.unknown`: flume moves on only on a landing it read.
 */
export function landingDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        // Tidying asks this reader whether a place's work landed.
        defineDeliverable({ type: 'landing', landing: true, read: gitLanding }),
      );
    },
  });
}

/** The landing as git judges it (above); the sluice reader answers with it where sluice holds no record of the branch. */
export async function gitLanding(request: DeliverableRequest): Promise<DeliverableReading> {
  const target = request.place.target;
  const judged = await request.landing();
  if (judged === undefined) return { present: false, what: `landing on ${target} unknown`, facts: { target, unknown: true } };
  const unlanded = judged.patches;
  if (unlanded > 0) return { present: false, what: `${unlanded} ${unlanded === 1 ? 'patch' : 'patches'} not on ${target}`, facts: { target, unlanded, by: 'patch' } };
  if (judged.content) return { present: false, what: contentWords(target, judged.content), facts: { target, unlanded, by: 'content', paths: judged.content.paths } };
  return { present: true, what: `landed on ${target}`, facts: { target, unlanded, by: 'patch-and-content' } };
}
