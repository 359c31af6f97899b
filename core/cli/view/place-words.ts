/** A place as `flume status` and the terminal view word it: a few plain lines. */
import { printedLine, printedNote } from '../output.js';
import { describeUsage } from '../../engine/stage/usage.js';
import type { PlaceStatus } from '../../engine/status/status.js';

/** A place in a few plain lines. */
export function describePlace(p: PlaceStatus): string {
  const lines = [`${p.id}  ${p.state}  ${p.path}`];
  if (p.stage) {
    const s = p.stage;
    const progress = s.progress ? `, ${s.progress.done} of ${s.progress.total} tasks` : '';
    const agent = s.agent ? `, agent ${s.agent.driver}${s.agent.version ? ` ${s.agent.version}` : ''} ${s.agent.state}${s.agent.pane ? ` in ${s.agent.host} ${s.agent.pane}` : ` (${s.agent.host})`}` : '';
    lines.push(`  stage ${s.index + 1}/${s.of} ${s.name}: ${s.state} (prompt ${s.delivery}${progress}${agent})`);
    if (s.agent?.command) lines.push(`  run: ${printedLine(s.agent.command, p.path)}`);
    const note = s.agent?.command && printedNote(s.agent.command);
    if (note) lines.push(`  note: ${note}`);
    if (s.deliverableProblem) lines.push(`  deliverable: ${s.deliverableProblem}`);
    if (s.needs) lines.push(`  needs: ${s.needs}`);
    if (s.stuckSince) lines.push(`  stuck since ${s.stuckSince}`);
    if (s.overBudget) lines.push(`  over budget: ${s.overBudget.tokens} tokens of ${s.overBudget.limit} (limits.tokens)${s.overBudget.stopped ? '; its agent was stopped' : '; it waits for you (tell, stop, retry or drop)'}`);
    if (s.usage) lines.push(`  cost: ${describeUsage(s.usage)}`);
  } else {
    lines.push(`  stages: ${p.stages.join(' → ') || '(unknown kind)'}; none started${p.awaitsStart ? ' (launched with --no-start: flume stage or flume retry starts one)' : p.awaits ? ' (its caller starts each one)' : ''}`);
  }
  if (p.container) lines.push(`  container: ${p.container.name} (${p.container.engine}, ${p.container.image}): ${p.container.state}`);
  if (p.awaiting) lines.push(`  ${awaitingWords(p)}`);
  if (p.finished) lines.push(`  finished ${p.finished.at}: every stage delivered or the work landed (flume stage or retry runs a stage again)`);
  if (p.usage && (p.usage.stages.length > 1 || !p.stage)) lines.push(`  place cost: ${describeUsage(p.usage)} over ${p.usage.stages.length} stage ${p.usage.stages.length === 1 ? 'run' : 'runs'}${p.usage.complete ? '' : ' (some unknown)'}`);
  if (p.ready.state === 'failed') lines.push(`  ready: failed at ${p.ready.failed?.step} (exit ${p.ready.failed?.exitCode}): ${p.ready.failed?.tail.split('\n').slice(-2).join(' / ')}`);
  lines.push(`  landing: ${p.landing.state}${landingWords(p)}`);
  if (p.dropped) lines.push(`  dropped ${p.dropped.at}${p.dropped.reason ? `: ${p.dropped.reason}` : ''}`);
  if (p.kept) lines.push(`  kept: ${p.kept.reason}`);
  for (const problem of p.problems) lines.push(`  problem: ${problem}`);
  return lines.join('\n') + '\n';
}

/** Why a place's landing reads as it does, where more than its state says it: the patches missing, or the evidence and its words. */
function landingWords(p: PlaceStatus): string {
  const { by, missing, what } = p.landing;
  if (missing) return ` (${missing} ${missing === 1 ? 'patch' : 'patches'} not on ${p.target})`;
  if ((by === 'content' || by === 'sluice') && what) return ` (by ${by}: ${what})`;
  return '';
}

/** Where a place waits for its caller, and what goes on from there. */
export function awaitingWords(p: PlaceStatus): string {
  const a = p.awaiting!;
  if (a.gate) return `at the gate after ${a.after}: flume next ${p.id} goes on (or retry, tell, drop)`;
  return a.after ? `awaits its caller: ${a.after} delivered${a.what ? ` ${a.what}` : ''}; flume stage ${p.id} STAGE goes on` : `awaits its caller: flume stage ${p.id} STAGE starts a stage`;
}
