/**
 * What the interactive view does to a place, through the engine functions the CLI's commands call
 * (tell, stop, retry, go-on, next, drop), so it refuses exactly as they do; and what it reads of the
 * selected place beyond status: the tail of its agent's pane and its diff against its base.
 */
import type { CliContext } from '../command.js';
import { placeFrom } from '../command.js';
import { superviseAfter } from '../commands/watch.js';
import { toldLine } from '../commands/agent-commands.js';
import { canType, ownsPane } from '../../api/pane-host.js';
import { openRepository, type Repository } from '../../config/repository.js';
import { flumeError } from '../../api/errors.js';
import { diffStat } from '../../support/git.js';
import { dropPlace } from '../../engine/tidy/drop.js';
import { nextStage, restartStage, stopAgent, tell } from '../../engine/stage/operate.js';
import type { PlaceStatus } from '../../engine/status/status.js';
import { readRecord } from '../../state/store.js';

/** An action on a place, by the key the view binds it to. */
export type ViewAction = 'tell' | 'stop' | 'force-stop' | 'retry' | 'go-on' | 'next' | 'drop';

/** Runs the action as its CLI command would (the supervisor started after it, as the command does); answers the command's own line. */
export async function act(context: CliContext, place: PlaceStatus, action: ViewAction, text = ''): Promise<string> {
  const { repository, key } = await placeFrom({ place: place.id, repo: place.repo }, context);
  if (action === 'tell') {
    const { record, sends, held } = await tell(repository, key, text);
    await superviseAfter({}, context, record);
    return toldLine(record.id, sends, held);
  }
  if (action === 'stop' || action === 'force-stop') {
    const { record, already } = await stopAgent(repository, key, action === 'force-stop');
    await superviseAfter({}, context, record);
    return `${record.id}: agent ${already ? 'was not running' : 'stopped'}`;
  }
  if (action === 'drop') {
    const record = await dropPlace(repository, key);
    await superviseAfter({}, context, record);
    return `dropped ${record.id}; \`flume tidy\` removes its place`;
  }
  if (action === 'next') {
    const { record, action: step } = await nextStage(repository, key, { note: text.trim() || undefined });
    await superviseAfter({}, context, record);
    if (step.type !== 'start-stage') return `${record.id}: ${step.type === 'finish' ? 'every stage delivered' : step.type === 'mark-waiting' ? `it waits on you: ${step.needs}` : 'nothing to start'}`;
    const stage = record.stage!;
    return `${step.fixRound ? 'started a fix round of' : 'went on to'} ${record.id} stage ${stage.name} (attempt ${stage.attempt}): prompt ${stage.delivery}`;
  }
  const record = await restartStage(repository, key, action === 'go-on' ? { goOn: true, note: text.trim() || undefined } : {});
  await superviseAfter({}, context, record);
  const stage = record.stage!;
  return `${action === 'go-on' ? 'went on with' : 'restarted'} ${record.id} stage ${stage.name} (attempt ${stage.attempt}): prompt ${stage.delivery}`;
}

/** A command that puts this terminal on a pane. */
export type AttachCommand = { file: string; args: string[]; env?: Record<string, string | undefined>; leave: string };

/**
 * What the view does to a place and reads of it: here, through this host's engine (`hereActions`);
 * for another host's places, through that host's flume.
 */
export interface PlaceActions {
  act(place: PlaceStatus, action: ViewAction, text?: string): Promise<string>;
  attach(place: PlaceStatus): Promise<AttachCommand>;
  detail(place: PlaceStatus, width: number): Promise<Detail>;
}

/** The actions on this host's places; `repositories` keeps each repository opened once. */
export function hereActions(context: CliContext, repositories: Map<string, Promise<Repository>> = new Map()): PlaceActions {
  return {
    act: (place, action, text) => act(context, place, action, text),
    attach: (place) => attachCommand(context, place),
    detail: (place, width) => readDetail(context, place, width, repositories),
  };
}

/** The command that puts this terminal on the place's agent's pane; refused when its host has none, or the pane is not the agent's. */
export async function attachCommand(context: CliContext, place: Pick<PlaceStatus, 'id' | 'repo'>): Promise<AttachCommand> {
  const { repository, key } = await placeFrom({ place: place.id, repo: place.repo }, context);
  const handle = (await readRecord(repository.info.commonDir, key))?.stage?.agent;
  const host = handle ? repository.flume.hosts.get(handle.host) : undefined;
  const command = host && handle?.pane && (await ownsPane(host, handle)) ? host.attach?.(handle.pane) : undefined;
  if (!command) {
    throw flumeError('CANNOT_ATTACH', { place: place.id, where: handle ? `${handle.host}${handle.pane ? ` ${handle.pane}` : ''}` : '' }, {
      variant: !handle ? 'noAgent' : host && !canType(host) ? 'elsewhere' : 'default',
      details: { place: place.id },
    });
  }
  return command;
}

/** The selected place's extra lines: its diff against its base (`git diff --stat`) and the tail of its agent's screen. */
export interface Detail {
  diff: string[];
  tail: string[];
}

/** Reads the detail of a place; parts that cannot be read are left empty. `repositories` keeps each repository opened once. */
export async function readDetail(context: CliContext, place: PlaceStatus, width: number, repositories: Map<string, Promise<Repository>>): Promise<Detail> {
  const diff = place.worktree.present ? await diffStat(place.path, place.base, width).catch(() => '') : '';
  let tail: string[] = [];
  const agent = place.stage?.agent;
  if (agent?.pane) {
    let opening = repositories.get(place.repo);
    if (!opening) {
      opening = openRepository(place.repo, await context.preset(), context.logger);
      opening.catch(() => repositories.delete(place.repo));
      repositories.set(place.repo, opening);
    }
    tail = await paneTail(await opening, place).catch(() => []);
  }
  return { diff: diff.split('\n').filter((line) => line.trim()), tail };
}

async function paneTail(repository: Repository, place: PlaceStatus): Promise<string[]> {
  const handle = (await readRecord(repository.info.commonDir, `${place.kind}--${place.name}`))?.stage?.agent;
  const host = handle?.pane ? repository.flume.hosts.get(handle.host) : undefined;
  if (!handle?.pane || !host) return [];
  // One look where the host has it (its identity and screen at once); a pane now another's is not shown.
  const look = host.look ? await host.look(handle.pane) : undefined;
  if (host.look && (!look || (handle.paneIdentity !== undefined && look.identity !== handle.paneIdentity))) return [];
  const screen = look ? look.screen : (await ownsPane(host, handle)) ? await host.capture(handle.pane) : undefined;
  const lines = (screen ?? '').split('\n').map((line) => line.replace(/\s+$/, ''));
  while (lines.length && !lines[lines.length - 1]) lines.pop();
  return lines;
}
