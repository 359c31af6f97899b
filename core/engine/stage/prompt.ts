/**
 * Fills in a stage's prompt template. A repository overrides a built-in stage's template under
 * `prompts` in its config, keyed `<kind>.<stage>` or `<stage>`.
 */
import { stepLabel } from '../launch/ready.js';
import type { FlumeConfig } from '../../api/plugin.js';
import type { KindDef, StageDef } from '../../api/config.js';
import type { PlaceRecord } from '../../api/record.js';

/** What the template's placeholders are filled with. */
export interface PromptVariables {
  previous: string;
  /** True when a report sent the place back to this stage. */
  fixRound?: boolean;
  /** The variables the stage's deliverable reader declares (an OpenSpec reader's `{change}`); flume's own win a clash. */
  reader?: Record<string, string>;
}

/** What of a place its prompts name. */
export type PromptPlace = Pick<PlaceRecord, 'brief' | 'path' | 'branch' | 'name' | 'target' | 'ready'>;

/** The prompt for `stage` of `record`, its placeholders filled in. */
export function renderPrompt(config: FlumeConfig, kind: KindDef, stage: StageDef, record: PromptPlace, variables: PromptVariables): string {
  // Own keys only: a template's `{constructor}` is no variable.
  const template = variables.fixRound
    ? config.prompts?.[`${kind.name}.${stage.name}.fix`] ?? stage.fixPrompt ?? FIX_ROUND
    : config.prompts?.[`${kind.name}.${stage.name}`] ?? config.prompts?.[stage.name] ?? stage.prompt;
  const deliverable = typeof stage.deliverable === 'string' ? stage.deliverable : stage.deliverable.type;
  const failed = record.ready.failed;
  const ready = failed
    ? `Note: readying this place failed at the step "${failed.step}" (exit ${failed.exitCode}). Its last words:\n${failed.tail}\nMend that first if the work needs it.\n\n`
    : '';
  const values: Record<string, string> = {
    ...variables.reader,
    brief: record.brief.trim(),
    place: record.path,
    branch: record.branch,
    name: record.name,
    kind: kind.name,
    stage: stage.name,
    target: record.target,
    previous: variables.previous,
    deliverable,
    ready,
  };
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (Object.hasOwn(values, key) ? values[key] : whole)).trim();
}

/** A fix round's prompt for a stage that names none of its own. */
const FIX_ROUND = `You are working in {place}, a git worktree on the branch {branch}. The stage after {stage} reported problems ({previous}). Read its report, mend each finding, and commit the fixes on {branch}. The stage ends on your commit.

The brief:
{brief}`;

/** What the stage before delivered, in words for the next prompt. */
export function previousDelivery(record: PlaceRecord): string {
  const last = record.history[record.history.length - 1];
  if (!last) return '';
  return `${last.name} delivered ${last.delivered ?? 'its work'}`;
}

export { stepLabel };
