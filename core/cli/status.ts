import type { Command } from './command.js';
import { jsonOption, repoOption } from './command.js';
import { printJson, printedLine, printedNote, processIo } from './output.js';
import { status, type PlaceStatus } from '../engine/status.js';
import { findRepository } from '../git.js';
import { describeUsage } from '../engine/usage.js';

/** `flume status`: every place on the host (or in one repository), as it stands now. */
export const statusCommand: Command = {
  command: 'status [place]',
  describe: 'Show every place flume runs on this host (or in --repo): kind, stage, agent, readying, landing, kept.',
  builder: (yargs) =>
    jsonOption(repoOption(yargs, 'Only the places of this repository.'))
      .positional('place', {
        type: 'string',
        describe: 'Only this place (kind/name, kind--name, or its folder).',
      })
      .option('watch', { type: 'boolean', describe: 'A live view, redrawn when a place changes: on a terminal, interactive (↑↓/j k move; a attach, t tell, s stop, S stop even while it works, r retry, g go on, d drop, q quit); plain blocks when not a terminal. With a place, it ends (exit 0) once the place is tidied.' })
      .conflicts('watch', 'json'),
  async run(args, context) {
    const repo = args.repo === undefined ? undefined : (await findRepository(String(args.repo))).root;
    const place = args.place === undefined ? undefined : String(args.place);
    if (args.watch) {
      const controller = new AbortController();
      process.once('SIGINT', () => controller.abort());
      process.once('SIGTERM', () => controller.abort());
      const read = () => status(context.preset, { repo, place });
      const { interactiveTerminal, processTerminal } = await import('./terminal.js');
      // Interactive only on the process's own terminal (both ends); piped or captured, plain blocks.
      if (context.io === processIo && interactiveTerminal()) {
        const { interactiveStatus } = await import('./status-view.js');
        // The first reading is taken before the screen is: a place unknown now is refused as status refuses it.
        if (place !== undefined) await read();
        const ended = await interactiveStatus(context, processTerminal(), read, { signal: controller.signal, place });
        if (ended === 'gone') context.io.stdout(`${place}: gone (tidied)\n`);
        return;
      }
      const { watchStatus } = await import('./status-watch.js');
      await watchStatus(context.io, read, { signal: controller.signal, place });
      return;
    }
    // The preset is loaded only once a repository with places needs it: an empty status stays fast.
    const report = await status(context.preset, { repo, place });
    if (args.json) {
      printJson(context.io, report);
      return;
    }
    for (const repository of report.repositories) {
      if (repository.error) context.io.stdout(`${repository.root}: ${repository.error.code} ${repository.error.message}\n${repository.error.fix ? `  fix: ${repository.error.fix}\n` : ''}`);
      for (const broken of repository.broken) context.io.stdout(`${broken.file}: unreadable record (${broken.problem})\n`);
    }
    if (report.places.length === 0) context.io.stdout('no places\n');
    for (const p of report.places) context.io.stdout(describePlace(p));
    if (report.supervisor && !report.supervisor.running) context.io.stdout(`supervisor: none running; ${report.supervisor.note}\n`);
  },
};

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
    lines.push(`  stages: ${p.stages.join(' → ') || '(unknown kind)'}; none started${p.awaitsStart ? ' (launched with --no-start: flume stage or flume retry starts one)' : ''}`);
  }
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
