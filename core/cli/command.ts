/** The shape of a CLI command module, and helpers every command shares. */
import { flumeError } from '../api/errors.js';
import { openRepository, type Repository } from '../config/repository.js';
import { checkName, parsePlaceRef } from '../state/place.js';
import { knownRepositories } from '../state/host.js';
import { readRecords } from '../state/store.js';
import type { FlumePlugin, Logger } from '../api/plugin.js';
import type { Io } from './output.js';
import type { PlaceStatus } from '../engine/status/status.js';
import type { CommandLine } from './options.js';

/** What every command handler is handed. */
export interface CliContext {
  io: Io;
  /** The built-in plugins; loaded on first use. */
  preset(): Promise<FlumePlugin[]>;
  /** The path of the flume executable, for commands that start flume in the background. */
  self: string;
  /** What plugins log through (`flume.logger`): stderr, by `FLUME_LOG`. */
  logger?: Logger;
  /** The folder the command was run in, for a command not handed `--repo` (default: the process's). */
  cwd?: string;
  /** The environment the command was run with (default: the process's). */
  env?: NodeJS.ProcessEnv;
  /** Runs another command line with the same CLI and preset, its output going to `io` (the warm answer). */
  rerun?(argv: string[], io: Io): Promise<number>;
}

/** One CLI command. `run` returns the exit code (0 when it returns nothing). */
export interface Command {
  /** Its usage as yargs reads it (`tell <place> [text]`), derived from `line` (`commandLine` in options.ts). */
  command: string;
  /** Its positionals and options as data: its yargs builder and its plain parse are derived from it. */
  line: CommandLine;
  describe: string;
  run(args: Record<string, unknown>, context: CliContext): Promise<number | void>;
}

/** Opens the repository at `--repo` (default: the current folder). */
export async function repositoryFrom(args: Record<string, unknown>, context: CliContext): Promise<Repository> {
  return openRepository(String(args.repo ?? context.cwd ?? process.cwd()), await context.preset(), context.logger);
}

/**
 * Finds the place a caller named (`kind/name`, `kind--name`, or its folder) in `--repo`, in the
 * repository of the folder given, or among every repository on the host.
 */
export async function placeFrom(args: Record<string, unknown>, context: CliContext): Promise<{ repository: Repository; key: string }> {
  const ref = String(args.place ?? '');
  const parsed = parsePlaceRef(ref);
  if (!parsed) {
    throw flumeError('UNKNOWN_PLACE', { place: JSON.stringify(ref) }, {
      variant: 'notAPlace',
      details: { place: ref },
    });
  }
  // No place has a name flume would refuse to make: say so before any file is named after it.
  checkName(parsed.name);
  const key = `${parsed.kind}--${parsed.name}`;
  if (args.repo !== undefined || ref.includes('/places/')) {
    const repository = await openRepository(String(args.repo ?? ref), await context.preset(), context.logger);
    return { repository, key };
  }
  const matches: string[] = [];
  for (const known of await knownRepositories()) {
    const { records } = await readRecords(known.commonDir);
    if (records.some((r) => r.kind === parsed.kind && r.name === parsed.name)) matches.push(known.root);
  }
  if (matches.length !== 1) {
    throw flumeError('UNKNOWN_PLACE', { place: `${parsed.kind}/${parsed.name}`, count: matches.length, repositories: matches.join(', ') }, {
      variant: matches.length ? 'manyRepositories' : 'onHost',
      details: { place: ref, repositories: matches },
    });
  }
  return { repository: await openRepository(matches[0], await context.preset(), context.logger), key };
}

/**
 * A place as `flume status` shows it: what launch answers with under --json (and retry, go-on and
 * stage with its stage), so a script reads one shape, published in status.schema.json, not flume's record.
 */
export async function statusPlace(context: CliContext, repository: Repository, id: string): Promise<PlaceStatus> {
  const { status } = await import('../engine/status/status.js');
  return (await status(context.preset, { repo: repository.info.root, place: id })).places[0];
}

/** flume's own version, from its package.json. */
export { flumeVersion } from '../support/version.js';
