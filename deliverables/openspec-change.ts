/**
 * The `openspec-change` deliverable: construct's OpenSpec change, committed at the branch head.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type FlumePlugin } from '../core/index.js';
import { countTasks } from './openspec-count.js';
import { changeFolder, changeId } from './openspec.js';

const NAME = 'flume:deliverable:openspec-change';

/**
 * Reads construct's deliverable: present when `proposal.md` and `tasks.md` are committed at the
 * head in `openspec/changes/<id>/`. design.md and specs are optional: the spec-driven schema writes
 * design.md only when it is needed, and its apply phase requires tasks alone. Progress is the tasks
 * count, so status shows the change's size as soon as it exists.
 * Facts: `change` (the id), `missing` (the required files not there).
 */
export function openspecChangeDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        defineDeliverable({
          type: 'openspec-change',
          variables: (context) => ({ change: changeId(context, NAME) }),
          async read(request): Promise<DeliverableReading> {
            const id = changeId(request, NAME);
            const folder = changeFolder(id);
            const [names, tasks] = await Promise.all([request.list(folder), request.file(`${folder}/tasks.md`)]);
            // What the change is for, and what code is to do: without both, code has nothing to work.
            const missing: string[] = [];
            if (!names?.includes('proposal.md')) missing.push('proposal.md');
            if (tasks === undefined) missing.push('tasks.md');
            const progress = countTasks(tasks ?? '');
            if (missing.length > 0) {
              return { present: false, progress, facts: { change: id, missing } };
            }
            // A change with no task line still counts as committed here; openspec-tasks, which needs
            // at least one, is where such a change stops, and `tasks: 0` lets status say why.
            return {
              present: true,
              what: `change ${id} (${progress.total} ${progress.total === 1 ? 'task' : 'tasks'})`,
              progress,
              facts: { change: id, missing: [], tasks: progress.total },
            };
          },
        }),
      );
    },
  });
}
