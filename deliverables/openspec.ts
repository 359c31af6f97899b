/**
 * Where a launch's OpenSpec change lives, shared by the `openspec-change`, `openspec-tasks` and
 * `report` readers.
 *
 * Ruling (this project): the change's id is the launch's name, so a change launched as
 * `add-widget` is `openspec/changes/add-widget/`. A launch names no change of its own, and one
 * launch is one change, so its name is the only id both construct's prompt and the readers can
 * know before construct runs. A stage option `change` names another id, for a caller (crew's fix
 * round, a declared kind) that works a change it did not launch under that name.
 */
import { flumeError, type DeliverableContext } from '../core/index.js';

/** The folder every active OpenSpec change sits in, relative to the repository root. */
export const CHANGES_DIR = 'openspec/changes';

/**
 * The id of the change a stage reads: its `change` option, else the launch's name.
 * Throws BAD_CONFIG for an id that is no single folder name under `openspec/changes/`.
 */
export function changeId(request: DeliverableContext, plugin: string): string {
  const option = request.options.change;
  const id = option === undefined ? request.place.name : option;
  if (typeof id !== 'string' || !isFolderName(id)) {
    throw flumeError('BAD_CONFIG', { id: JSON.stringify(id), folder: CHANGES_DIR }, {
      variant: 'openspecChange',
      details: { change: id, place: request.place.id, stage: request.stage.name },
      plugin,
      hook: 'readDeliverable',
    });
  }
  return id;
}

/** The change's folder, relative to the repository root. */
export function changeFolder(id: string): string {
  return `${CHANGES_DIR}/${id}`;
}

// `archive` holds archived changes: the CLI never lists it as a change, so neither do we.
function isFolderName(id: string): boolean {
  return id !== '' && id !== '.' && id !== '..' && id !== 'archive' && !/[/\\\0\n]/.test(id);
}
