/**
 * What flume ships imports no test runner: the conformance kit (`flume/testing`, core/testing/) hands
 * its checks to the runner the driver's author passes in, so installing flume never needs vitest.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT } from '../../helpers/repo.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' || name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('shipped code', () => {
  it('imports no test runner (vitest, jest, node:test)', () => {
    const files = ['core', 'kinds', 'deliverables', 'agents', 'plugins', 'bin'].flatMap((folder) => sources(join(PROJECT, folder)));
    expect(files.some((file) => file.includes(join('core', 'testing')))).toBe(true);
    const runners = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)]
        .map((match) => match[1])
        .filter((spec) => /^(vitest|@vitest\/|jest|@jest\/|node:test$)/.test(spec))
        .map((spec) => `${relative(PROJECT, file)} imports ${spec}`),
    );
    expect(runners).toEqual([]);
  });
});
