/**
 * The fast path of `flume status [--json]` on a host with no places: it answers from the host's state
 * alone, without loading the argument parser, the config, the schema or any plugin, so a caller
 * polling status on an idle host pays little more than starting node. With any place, or any other
 * argument, it answers undefined and the full CLI runs.
 */
import { knownRepositories } from '../state/host.js';
import { readRecords } from '../state/store.js';
import type { StatusReport } from '../engine/status/status.js';

/** The output of `flume status [--json]` when the host has no places; undefined otherwise. */
export async function fastStatus(argv: string[]): Promise<string | undefined> {
  if (argv[0] !== 'status' || argv.length > 2 || (argv.length === 2 && argv[1] !== '--json')) return undefined;
  try {
    for (const known of await knownRepositories()) {
      const { records, broken } = await readRecords(known.commonDir);
      if (records.length || broken.length) return undefined;
    }
  } catch {
    return undefined; // the full CLI reports what cannot be read
  }
  if (argv[1] !== '--json') return 'no places\n';
  const report: StatusReport = { version: 1, generatedAt: new Date().toISOString(), repositories: [], places: [] };
  return JSON.stringify(report, null, 2) + '\n';
}
