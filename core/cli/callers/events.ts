/**
 * `flume events [PLACE] [--repo DIR] [--since ID] [--follow] [--json]`: the repository's event
 * stream (events.ts), oldest first, one line each; `--since` resumes after an id, `--follow` keeps
 * printing as events come. Reads flume's state alone: no config is loaded, no git runs but the one
 * that finds the repository.
 */
import type { CliContext, Command } from '../command.js';
import { commandLine } from '../options.js';
import { onStop } from '../process-io.js';
import { placeFrom } from '../command.js';
import { checkName, parsePlaceRef } from '../../state/place.js';
import { flumeError } from '../../api/errors.js';
import { findRepository } from '../../support/git.js';
import { readEvents, watchState, type FlumeEvent } from '../../state/events.js';

/** `flume events`. */
export const eventsCommand: Command = {
  ...commandLine('events'),
  describe: 'Print the events flume recorded for the repository\'s places (one JSON line each with --json), after --since ID; --follow keeps printing as they happen.',
  async run(args, context) {
    const { commonDir, place } = await streamOf(args, context);
    let since = sinceOf(args.since);
    const print = (events: FlumeEvent[]) => {
      for (const event of events) {
        context.io.stdout(args.json ? `${JSON.stringify(event)}\n` : `${describeEvent(event)}\n`);
        since = event.id;
      }
    };
    print(await readEvents(commonDir, { since, place }));
    if (!args.follow) return;
    await new Promise<void>((resolve) => {
      let busy: Promise<void> = Promise.resolve();
      const look = () => {
        busy = busy.then(async () => print(await readEvents(commonDir, { since, place }))).catch(() => undefined);
      };
      const stop = watchState(commonDir, look, 2000);
      const end = () => {
        stop();
        resolve();
      };
      onStop(end);
      // A reader that went away (a closed pipe) ends the stream.
      process.stdout.once('error', end);
    });
  },
};

/** An event as a person reads it: its id, time, place and name, then its fields. */
export function describeEvent(event: FlumeEvent): string {
  const { id, at, place, event: name, ...fields } = event;
  const rest = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return [`#${id}`, at, place, name, ...rest].join('  ');
}

async function streamOf(args: Record<string, unknown>, context: CliContext): Promise<{ commonDir: string; place?: string }> {
  const ref = args.place === undefined ? undefined : String(args.place);
  const named = ref === undefined ? undefined : parsePlaceRef(ref);
  if (ref !== undefined && !named) {
    throw flumeError('UNKNOWN_PLACE', { place: JSON.stringify(ref) }, { variant: 'notAPlace', details: { place: ref } });
  }
  // No place has a name flume would refuse to make: say so, as every command taking a place does.
  if (named) checkName(named.name);
  const folder = String(args.repo ?? (ref?.includes('/places/') ? ref : context.cwd ?? process.cwd()));
  const found = await findRepository(folder).catch(() => undefined);
  if (found && named) return { commonDir: found.commonDir, place: `${named.kind}/${named.name}` };
  if (found && !ref) return { commonDir: found.commonDir };
  if (ref === undefined || args.repo !== undefined) return { commonDir: (await findRepository(folder)).commonDir };
  // Outside a repository, a place is looked for among the host's repositories, as other commands do.
  const { repository, key } = await placeFrom(args, context);
  return { commonDir: repository.info.commonDir, place: key.replace('--', '/') };
}

function sinceOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const id = Number(value);
  if (!Number.isInteger(id) || id < 0) {
    throw flumeError('BAD_USAGE', { flag: 'since', value: JSON.stringify(String(value)) }, { variant: 'eventId', details: { since: String(value) } });
  }
  return id;
}
