/**
 * The background probe, run detached (`node probe-background.js <root> <file> <digest>`) by a
 * command that would not wait for a config to load (status): it finds the config again, probes it
 * only when it is still the config of that digest and still trusted (the very text whose digest
 * matched goes to the probe), and records the outcome in the host's `config-probes.json`, killing a config that does not
 * finish within the limit. Not part of the public API.
 */
import { fileURLToPath } from 'node:url';
import { probeAndRecord } from './guard.js';
import { trustState } from '../trust.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [root, file, digest] = process.argv.slice(2);
  const { state, config } = await trustState(root);
  // Changed (or its trust taken back) since it was asked for: the next command asks for the config as it is then.
  if (state === 'trusted' && config && config.file === file && config.digest === digest) await probeAndRecord(root, config);
}
