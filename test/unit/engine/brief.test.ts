/**
 * A launch's brief is read once per request: a launch with no name tries names made from the brief
 * (eachName) and plans the place for each (planPlace reads the brief), but its brief file is read and
 * checked only the first time. Shown by removing the file after the first read: later attempts still
 * have the brief, and a new request reads afresh (and finds the file gone).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readBrief } from '../../../core/engine/launch/brief.js';
import { eachName } from '../../../core/engine/launch/launch-plan.js';
import { FlumeError } from '../../../core/api/errors.js';
import { remove, tempDir } from '../../helpers/repo.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('readBrief', () => {
  it('reads a brief file once for every name an unnamed launch tries', async () => {
    const dir = tempDir();
    cleanups.push(() => remove(dir));
    const file = join(dir, 'brief.md');
    writeFileSync(file, 'Mend the widget\n');
    const request = { kind: 'fix', briefFile: file };
    const tried: Array<[string, string]> = [];
    const name = await eachName(request, async (attempt) => {
      tried.push([attempt, await readBrief(request)]);
      rmSync(file, { force: true });
      if (tried.length < 3) throw new FlumeError('PLACE_EXISTS', `${attempt} exists`, { fix: 'none' });
      return attempt;
    });
    expect(name).toBe('mend-the-widget-3');
    expect(tried).toEqual([
      ['mend-the-widget', 'Mend the widget\n'],
      ['mend-the-widget-2', 'Mend the widget\n'],
      ['mend-the-widget-3', 'Mend the widget\n'],
    ]);
    await expect(readBrief({ briefFile: file })).rejects.toMatchObject({ code: 'BRIEF_MISSING' });
  });
});
