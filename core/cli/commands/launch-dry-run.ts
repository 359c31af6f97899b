/**
 * What `flume launch --dry-run` prints: the place, its branch and base, readying's steps with their
 * environment (secrets hidden), the first stage's agent command and its whole prompt, as lines or
 * as JSON (launch-dry-run.schema.json).
 */
import type { LaunchDryRun } from '../../engine/launch/dry-run.js';
import { KEPT_VARIABLES } from '../../engine/launch/ready.js';
import { HIDDEN } from '../../support/secret.js';
import { printJson, printedLine, shellLine, type Io } from '../output.js';

/** Prints the dry run's report. */
export function printDryRun(io: Io, report: LaunchDryRun, json: boolean): void {
  if (json) {
    printJson(io, report);
    return;
  }
  const { place, ready, stage, supervisor } = report;
  const lines = [
    'dry run: every check of the launch passed; nothing was made, written or started',
    `place: ${place.id} at ${place.path}`,
    `branch: ${place.branch} from ${place.base.from} (${place.base.commit}); work lands on ${place.target}`,
  ];
  if (ready.failed) lines.push(`readying: fails at ${ready.failed.step}: ${ready.failed.message}`);
  else if (!ready.steps.length) lines.push('readying: nothing declared');
  else {
    lines.push(`readying: ${ready.steps.length} step${ready.steps.length === 1 ? '' : 's'}, in order, in the place:`);
    ready.steps.forEach((step, index) => {
      lines.push(`  ${index + 1}. ${step.label}`, `     run: ${shellLine(step.argv)}`, `     env: ${environment(step.env)}`);
    });
  }
  if (stage) {
    lines.push(`stage ${stage.index + 1}: ${stage.name} (ends on ${stage.deliverable})`);
    lines.push(`agent: ${stage.agent.driver} on ${stage.agent.host}${stage.agent.plan?.version ? ` (version ${stage.agent.plan.version})` : ''}, session ${stage.agent.sessionId}`);
    if (stage.agent.plan) lines.push(`command: ${printedLine(stage.agent.plan.command, stage.agent.plan.cwd)}`);
    lines.push(`prompt (${stage.prompt.length} characters, between the lines):`, '-----', stage.prompt, '-----');
  }
  lines.push(`supervisor: ${supervisor.running ? 'runs already' : supervisor.starts ? 'would be started in the background' : 'not started'}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  io.stdout(lines.join('\n') + '\n');
}

/** A step's environment in a line: what it declares, then the caller's variables it keeps, by name. */
function environment(env: Record<string, string>): string {
  const kept = KEPT_VARIABLES.filter((name) => env[name] !== undefined && env[name] === process.env[name]);
  const own = Object.entries(env).filter(([name]) => !(kept as string[]).includes(name));
  const words = own.map(([name, value]) => (value === HIDDEN ? `${name}=${HIDDEN}` : shellLine([`${name}=${value}`])));
  return [...words, kept.length ? `(${kept.join(', ')} from yours)` : ''].filter(Boolean).join(' ') || '(empty)';
}
