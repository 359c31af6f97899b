/**
 * The popups of the plugin's open, tell, next and launch actions. herdr's manifest has no way to ask
 * for text, so these run as `[[panes]]` entrypoints in a popup (a terminal), ask there, and run flume.
 * The operator's words go to flume in a file (`--file`, `--brief-file`) or as one argument of its
 * argv (`--note`), never through a shell.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { PlaceStatus, RunResult, StatusReport } from '../../core/index.js';
import { flumeCommand, invocationContext, placeOf, type PromptedId } from './actions.js';
import { str, type Herdr } from './herdr.js';

/** What a popup is handed by bin.ts. */
export interface PopupDeps {
  flume(args: string[]): Promise<RunResult>;
  readStatus(): Promise<StatusReport>;
  herdr: Herdr;
  say(line: string): void;
}

/** Runs one popup to its end and returns its exit code. */
export async function popup(id: PromptedId, deps: PopupDeps): Promise<number> {
  const reader = createInterface({ input: process.stdin, terminal: false });
  const lines = reader[Symbol.asyncIterator]();
  const ask = async (question: string) => {
    if (question) process.stdout.write(question);
    const next = await lines.next();
    return next.done ? undefined : String(next.value);
  };
  const context = invocationContext();
  let code: number;
  if (id === 'tell') code = await tell(placeOf(await deps.readStatus(), context), deps, ask);
  else if (id === 'launch') code = await launch(context.paneCwd ?? context.workspaceCwd, deps, ask);
  else if (id === 'next') code = await next(await deps.readStatus(), context, deps, ask);
  else code = await open(await deps.readStatus(), deps, ask);
  await ask('Press Enter to close. ');
  reader.close();
  return code;
}

type Ask = (question: string) => Promise<string | undefined>;

async function tell(place: PlaceStatus | undefined, deps: PopupDeps, ask: Ask): Promise<number> {
  if (!place) return fail(deps, 'The pane under this popup is not the agent or a folder of a flume place.');
  deps.say(`Tell ${place.id} (its agent is ${place.stage?.agent?.state ?? 'not running'}). End with an empty line.`);
  const text = await paragraph(ask);
  if (!text) return fail(deps, 'Nothing to tell.', 0);
  return withFile(text, async (file) => show(deps, await deps.flume(flumeCommand('tell', { place: place.id, file }))));
}

async function launch(cwd: string | undefined, deps: PopupDeps, ask: Ask): Promise<number> {
  const repo = cwd || (await ask('Repository folder: '))?.trim();
  if (!repo) return fail(deps, 'No repository to launch in.');
  const kind = (await ask(`Launch in ${repo}. Kind [fix]: `))?.trim() || 'fix';
  deps.say('The brief (what the work is). End with an empty line.');
  const brief = await paragraph(ask);
  if (!brief) return fail(deps, 'No brief: nothing launched.', 0);
  return withFile(brief, async (file) => show(deps, await deps.flume(flumeCommand('launch', { repo, kind, file }))));
}

/**
 * Goes on from a gate: the place under the popup where it waits at one, else one chosen among those
 * that do; an optional note joins the prompt of the stage that starts.
 */
async function next(report: StatusReport, context: ReturnType<typeof invocationContext>, deps: PopupDeps, ask: Ask): Promise<number> {
  const here = placeOf(report, context);
  const gated = report.places.filter((p) => p.awaiting?.gate);
  let place = here?.awaiting?.gate ? here : undefined;
  if (!place) {
    if (gated.length === 0) return fail(deps, 'No place waits at a gate.', 0);
    gated.forEach((p, i) => deps.say(`${String(i + 1).padStart(2)}  ${p.id}  at the gate after ${p.awaiting!.after}`));
    place = gated[Number((await ask('Go on with which? ')) ?? '') - 1];
    if (!place) return fail(deps, 'No place chosen.', 0);
  }
  deps.say(`Go on with ${place.id} from the gate after ${place.awaiting!.after}. A note for the next stage (none: an empty line); end with an empty line.`);
  const note = await paragraph(ask);
  return show(deps, await deps.flume(flumeCommand('next', { place: place.id, ...(note ? { note } : {}) })));
}

async function open(report: StatusReport, deps: PopupDeps, ask: Ask): Promise<number> {
  if (report.places.length === 0) return fail(deps, 'flume runs no place on this host.', 0);
  report.places.forEach((p, i) => deps.say(`${String(i + 1).padStart(2)}  ${p.id}  ${p.stage ? `${p.stage.name} ${p.stage.index + 1}/${p.stage.of} ${p.stage.state}` : p.state}`));
  const chosen = report.places[Number((await ask('Open which? ')) ?? '') - 1];
  if (!chosen) return fail(deps, 'No place chosen.', 0);
  const read = await deps.flume(flumeCommand('open', { place: chosen.id }));
  if (read.exitCode !== 0) return show(deps, read);
  const place = (JSON.parse(read.stdout) as StatusReport).places[0] ?? chosen;
  const agent = place.stage?.agent;
  if (agent?.host === 'herdr' && agent.pane) {
    const pane = await deps.herdr(['pane', 'get', agent.pane]);
    const tab = str(pane.result, 'pane', 'tab_id');
    if (pane.ok && tab && (await deps.herdr(['tab', 'focus', tab])).ok) return 0;
  }
  // No live herdr pane for its agent: open a shell in the place instead.
  const made = await deps.herdr(['tab', 'create', '--cwd', place.path, '--label', place.id, '--focus']);
  return made.ok ? 0 : fail(deps, `herdr could not open a tab in ${place.path}: ${made.message}`);
}

/** Lines up to the first empty one (or the end of input), joined. */
async function paragraph(ask: Ask): Promise<string> {
  const lines: string[] = [];
  for (let line = await ask(''); line !== undefined && line !== ''; line = await ask('')) lines.push(line);
  return lines.join('\n');
}

async function withFile(text: string, use: (file: string) => Promise<number>): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'flume-herdr-'));
  try {
    await writeFile(join(dir, 'text.md'), text);
    return await use(join(dir, 'text.md'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function show(deps: PopupDeps, result: RunResult): number {
  deps.say((result.all || result.stdout || result.stderr).trim());
  return result.exitCode === 0 ? 0 : 1;
}

function fail(deps: PopupDeps, message: string, code = 1): number {
  deps.say(message);
  return code;
}
