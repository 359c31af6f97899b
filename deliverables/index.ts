/**
 * The built-in deliverable readers, one plugin per type. They register through the same contract a
 * third party uses; the default preset applies `deliverablePlugins()`.
 */
import type { FlumePlugin } from '../core/index.js';
import { commitDeliverable } from './commit.js';
import { conclusionDeliverable } from './conclusion.js';
import { landingDeliverable } from './landing.js';
import { openspecChangeDeliverable } from './openspec-change.js';
import { openspecTasksDeliverable } from './openspec-tasks.js';
import { reportDeliverable } from './report.js';
import { sluiceLandingDeliverable } from './sluice.js';

export { countTasks } from './openspec-count.js';
export { readVerdicts, type Verdict } from './report.js';
export { sluiceRecordPath, sluiceRecordSchema, type SluiceRecord } from './sluice.js';
export {
  commitDeliverable,
  conclusionDeliverable,
  landingDeliverable,
  openspecChangeDeliverable,
  openspecTasksDeliverable,
  reportDeliverable,
  sluiceLandingDeliverable,
};

/**
 * Every built-in reader: `commit`, `openspec-change`, `openspec-tasks`, `report`, `conclusion`,
 * `landing` (sluice's record where sluice is installed, else git), each written with
 * `defineDeliverable` and added to `flume.deliverables`. A plugin takes one over by adding a reader
 * of the same type with `{ replace: true }`; `flume.deliverables.get(type)` beforehand is the one it
 * replaced, to defer to (as sluice's defers to git's).
 */
export function deliverablePlugins(): FlumePlugin[] {
  return [
    commitDeliverable(),
    openspecChangeDeliverable(),
    openspecTasksDeliverable(),
    reportDeliverable(),
    conclusionDeliverable(),
    landingDeliverable(),
    sluiceLandingDeliverable(),
  ];
}
