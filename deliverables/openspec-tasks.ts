/**
 * The `openspec-tasks` deliverable: a change's code stage ends when every task is ticked at the head.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type FlumePlugin } from '../core/index.js';
import { countTasks } from './openspec-count.js';
import { changeFolder, changeId } from './openspec.js';

const NAME = 'flume:deliverable:openspec-tasks';

/**
 * Reads a change's code stage: present when `openspec/changes/<id>/tasks.md` at the head holds at
 * least one task and every task is ticked, counted as `openspec` counts (see `countTasks`).
 * `what` and `progress` are given absent or present, so status shows "3 of 8 tasks" while code works.
 * Facts: `change` (the id), and `missing: true` when tasks.md is not committed.
 */
export function openspecTasksDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        defineDeliverable({
          type: 'openspec-tasks',
          variables: (context) => ({ change: changeId(context, NAME) }),
          async read(request): Promise<DeliverableReading> {
            const id = changeId(request, NAME);
            const text = await request.file(`${changeFolder(id)}/tasks.md`);
            const progress = countTasks(text ?? '');
            const what = `${progress.done} of ${progress.total} tasks`;
            if (text === undefined) return { present: false, what, progress, facts: { change: id, missing: true } };
            // No task at all is not "all done": a tasks.md of prose would otherwise end code at once.
            const present = progress.total > 0 && progress.done === progress.total;
            return { present, what, progress, facts: { change: id } };
          },
        }),
      );
    },
  });
}
