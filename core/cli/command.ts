/** The shape of a CLI command module, and helpers every command shares. */
import type { Argv } from 'yargs';
import { FlumeError } from '../errors.js';
import { openRepository, type Repository } from '../context.js';
import { checkName, parsePlaceRef } from '../place.js';
import { knownRepositories } from '../state/host.js';
import { readRecords } from '../state/store.js';
import type { CliContext } from './index.js';
import type { PlaceStatus } from '../engine/status.js';

/** One CLI command. `run` returns the exit code (0 when it returns nothing). */
export interface Command {
  command: string;
  describe: string;
  builder(yargs: Argv): Argv;
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
    throw new FlumeError('UNKNOWN_PLACE', `${JSON.stringify(ref)} does not name a place.`, {
      fix: 'Name a place as kind/name (for example fix/bump-parser); `flume status` lists them.',
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
    throw new FlumeError('UNKNOWN_PLACE', matches.length ? `${parsed.kind}/${parsed.name} names a place in ${matches.length} repositories.` : `There is no place ${parsed.kind}/${parsed.name} on this host.`, {
      fix: matches.length ? `Say which with --repo (${matches.join(', ')}).` : '`flume status` lists the places flume runs; pass --repo for a repository it does not know.',
      details: { place: ref, repositories: matches },
    });
  }
  return { repository: await openRepository(matches[0], await context.preset(), context.logger), key };
}

/** The `--repo` option. */
export function repoOption(yargs: Argv, describe = 'The repository (default: the current folder).'): Argv {
  return yargs.option('repo', { type: 'string', describe, requiresArg: true });
}

/** The `--json` option. */
export function jsonOption(yargs: Argv): Argv {
  return yargs.option('json', { type: 'boolean', describe: 'Print JSON (its schema is published with flume).' });
}

/**
 * A place as `flume status` shows it: what launch answers with under --json (and retry, go-on and
 * stage with its stage), so a script reads one shape, published in status.schema.json, not flume's record.
 */
export async function statusPlace(context: CliContext, repository: Repository, id: string): Promise<PlaceStatus> {
  const { status } = await import('../engine/status.js');
  return (await status(context.preset, { repo: repository.info.root, place: id })).places[0];
}
