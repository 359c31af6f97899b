/**
 * Finds a repository's config file without running it: the same places, in the same order, that the
 * loader searches, read as text only, once. Trust checks the digest of that one read, and the probe
 * and the loader run that very text (never the file read again), so what was trusted is what runs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the config may be, in order, in the repository root. */
export const SEARCH_PLACES = [
  'package.json',
  '.flumerc',
  '.flumerc.json',
  '.flumerc.yaml',
  '.flumerc.yml',
  '.flumerc.js',
  '.flumerc.mjs',
  '.flumerc.ts',
  '.flumerc.mts',
  'flume.config.ts',
  'flume.config.mts',
  'flume.config.js',
  'flume.config.mjs',
];

/** A config file as found: its path, the sha256 of what would run (for package.json, its `flume` key), and the text read. */
export interface FoundConfig {
  file: string;
  digest: string;
  /** The file's whole text as read when it was found: what the digest was taken of, and what runs. */
  text: string;
}

/** The config file at `root`, or undefined when the repository has none. Runs nothing. */
export function findConfigFile(root: string): FoundConfig | undefined {
  for (const place of SEARCH_PLACES) {
    const file = join(root, place);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // absent, a folder, unreadable: the loader passes over it too
    }
    // An empty file is passed over, as the loader does.
    if (text.trim() === '') continue;
    if (place === 'package.json') {
      const key = flumeKey(text);
      if (key === undefined) continue;
      // Only the `flume` key runs: an unrelated edit of package.json must not revoke trust.
      return { file, digest: sha256(JSON.stringify(key)), text };
    }
    return { file, digest: sha256(text), text };
  }
  return undefined;
}

/** The sha256 of a text or buffer, as hex. */
export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function flumeKey(text: string): unknown {
  try {
    const value = JSON.parse(text) as Record<string, unknown> | null;
    return value && typeof value === 'object' ? value.flume ?? undefined : undefined;
  } catch {
    return undefined; // a package.json that is not JSON holds no config flume could read
  }
}
