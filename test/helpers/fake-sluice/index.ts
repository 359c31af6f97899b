/**
 * The fake sluice (`./sluice`): a script that writes sluice's records as flume reads them
 * (`sluice-record.schema.json`) and lands by a real merge. A test puts `FAKE_SLUICE_DIR` first on
 * PATH, so `sluice` run by the test, or by an agent in a place, is this one.
 */
import { fileURLToPath } from 'node:url';

/** The folder holding the `sluice` script. */
export const FAKE_SLUICE_DIR = fileURLToPath(new URL('.', import.meta.url));

/** An environment whose PATH finds the fake sluice first. */
export function withFakeSluice(env: Record<string, string | undefined> = process.env): Record<string, string> {
  return { ...(env as Record<string, string>), PATH: `${FAKE_SLUICE_DIR}:${env.PATH ?? ''}` };
}
