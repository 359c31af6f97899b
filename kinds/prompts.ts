/**
 * The built-in stages' prompt templates. `{brief}`, `{place}`, `{branch}`, `{name}`, `{kind}`,
 * `{stage}`, `{target}`, `{previous}`, `{deliverable}`, `{ready}` and `{change}` are filled in when the
 * stage starts. A repository overrides one under `prompts` in its config (`fix.code`, or `code`).
 */

const PLACE = `You are working in {place}, a git worktree on the branch {branch}. Work only inside it, and commit only to {branch}. The work will land on {target}.`;

/** A fix's code stage: make the change and commit it. */
export const FIX_CODE = `${PLACE}

The brief:
{brief}

{ready}Make the change the brief asks for, check it, and commit it on {branch} with a message that says what changed and why. The stage ends when your commit is on the branch. If the brief cannot be done as written, or you need something only the operator can give, stop and say exactly what you need.`;

/** Submitting a branch to sluice and waiting for it to land. */
export const SUBMISSION = `${PLACE}

The brief:
{brief}

The work is committed on {branch}: {previous}. Submit the branch for landing on {target} through sluice (\`sluice submit\`). If the repository has no sluice, land it the way the repository's own docs say. Do not rewrite the branch's commits. The stage ends when the branch's commits are on {target}; if landing fails, say what failed and what you need.`;

/** A change's construct stage: write the OpenSpec change and commit it. */
export const CHANGE_CONSTRUCT = `${PLACE}

The brief:
{brief}

{ready}Write an OpenSpec change for this brief at openspec/changes/{change}/: proposal.md, design.md, tasks.md (every task a "- [ ]" line) and the spec deltas under specs/. Check it with \`openspec validate {change}\`, then commit the change on {branch}. Write no code in this stage. The stage ends when the change's files are committed.`;

/** A change's code stage: work the tasks, ticking each as it is done. */
export const CHANGE_CODE = `${PLACE}

The brief:
{brief}

{ready}The OpenSpec change openspec/changes/{change}/ is committed ({previous}). Work its tasks in order. As each task is done, tick it in tasks.md ("- [x]") and commit the code and the tick together. The stage ends when every task is ticked and committed. If a task cannot be done as written, stop and say what you need.`;

/** A change's verify stage: check the code against the change and write the report. */
export const CHANGE_VERIFY = `${PLACE}

The brief:
{brief}

Every task of openspec/changes/{change}/ is ticked ({previous}). Check the code against the change as it was written: each requirement and scenario in its specs, each task. Write your report to openspec/changes/{change}/verify.md: what you checked, and what you found, with the findings code must mend. End it with one line that is exactly

Verdict: pass

when the code does what the change says, or exactly

Verdict: fix

when code must mend the findings. Nothing else on that line, and no other line that starts with "Verdict:". Commit the report. Change no code in this stage.`;

/** A change's code stage when verify sent it back. */
export const CHANGE_FIX = `${PLACE}

Verify found problems with the code of openspec/changes/{change}/: read its report, openspec/changes/{change}/verify.md, and mend every finding. Then delete verify.md and commit the fixes and the deletion together, in one commit: the stage ends on that commit, and verify runs again after it.`;

/** A change's submission: archive the change, then submit. */
export const CHANGE_SUBMISSION = `${PLACE}

The brief:
{brief}

Verify passed ({previous}). First archive the change: run \`openspec archive {change} --yes\` and commit the result. Then submit the branch for landing on {target} through sluice (\`sluice submit\`); if the repository has no sluice, land it the way the repository's own docs say. The stage ends when the branch's commits are on {target}.`;

/** A question's session. */
export const QUESTION_SESSION = `${PLACE}

The question:
{brief}

{previous}Work the question in this place: read, prototype, measure. When you have an answer, write it to conclusion.md in this folder. If you stop before an answer, say in your last message where the next round would start.`;
