/**
 * The lock file `npm ci` installs from (README's set-up, `.ci/run`): it refuses a lock that does not
 * list every optional dependency of the packages in it, even one for another system that it would
 * skip. The registry these machines reach serves only some of OpenCode's platform packages, and
 * `npm install` here leaves the others out of the lock (docs/decisions/lockfile-platform-packages.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT } from '../../helpers/repo.js';

type Entry = { version?: string; optionalDependencies?: Record<string, string> };

describe('the lock file', () => {
  it('lists every optional dependency of every package in it, as npm ci wants', () => {
    const packages = (JSON.parse(readFileSync(join(PROJECT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Entry> }).packages;
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // npm looks a dependency up from the package's own node_modules outwards.
        const folders = path.split('/node_modules/').map((_, i, parts) => parts.slice(0, i + 1).join('/node_modules/'));
        const found = [...folders.reverse().map((folder) => `${folder}/node_modules/${name}`), `node_modules/${name}`].some((key) => packages[key]);
        if (!found) missing.push(`${path} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
