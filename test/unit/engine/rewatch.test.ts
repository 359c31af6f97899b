/**
 * The supervisor's watchers (core/engine/supervisor/files.ts `rewatch`): a folder removed and made
 * again under the same path (a branch folder whose last branch went before a new one came) is
 * watched again, so a change in the new folder still wakes a pass.
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rewatch, type Watched } from '../../../core/engine/supervisor/files.js';
import { remove } from '../../helpers/repo.js';

const settle = (ms = 200) => new Promise((done) => setTimeout(done, ms));

describe('rewatch', () => {
  it('watches a folder made again under the same path, and a change there pokes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'flume-rewatch-'));
    const folder = join(root, 'fix');
    mkdirSync(folder);
    const watchers = new Map<string, Watched>();
    let pokes = 0;
    const poke = () => void pokes++;
    try {
      // It says how many it opened: a caller reads once more after opening any (a change between
      // its reading and the watcher's opening woke nothing).
      expect(rewatch(watchers, new Set([folder]), poke)).toBe(1);
      expect(rewatch(watchers, new Set([folder]), poke)).toBe(0);
      writeFileSync(join(folder, 'a'), '1');
      await settle();
      expect(pokes).toBeGreaterThan(0);

      rmSync(folder, { recursive: true });
      mkdirSync(folder);
      await settle();
      // The pass after the change watches again; a write in the new folder then pokes.
      expect(rewatch(watchers, new Set([folder]), poke)).toBe(1);
      pokes = 0;
      writeFileSync(join(folder, 'b'), '2');
      await settle();
      expect(pokes).toBeGreaterThan(0);

      // A path no longer wanted is closed and forgotten.
      rewatch(watchers, new Set(), poke);
      expect(watchers.size).toBe(0);
    } finally {
      for (const { watcher } of watchers.values()) watcher.close();
      remove(root);
    }
  });
});
