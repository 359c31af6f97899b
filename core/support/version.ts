/**
 * flume's own version, apart from the CLI's command helpers so the road to another host (which sends
 * it with every relayed command) reads it without loading them.
 */
import { readFile } from 'node:fs/promises';

/** flume's own version, from its package.json. */
export async function flumeVersion(): Promise<string> {
  return (JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
