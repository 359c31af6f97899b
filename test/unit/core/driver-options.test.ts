/**
 * A driver's options found valid are remembered in the user's cache folder, so the next command skips
 * loading ajv: the verdict holds for exactly those options under exactly that schema, is kept only
 * for "valid", and is trusted only in a folder of the user's alone.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { optionProblems, rememberedValid } from '../../../core/config/driver-options.js';
import { remove, tempDir } from '../../helpers/repo.js';

const schema = { type: 'object', properties: { binary: { type: 'string' }, retries: { type: 'integer', minimum: 0 } } };

function cache(): { env: NodeJS.ProcessEnv; dir: string; cleanup: () => void } {
  const base = tempDir('flume-options-cache-');
  return { env: { ...process.env, FLUME_CACHE_DIR: base }, dir: join(base, 'driver-options'), cleanup: () => remove(base) };
}

describe("a driver's options", () => {
  it('found valid are remembered, privately, for those options under that schema only', () => {
    const { env, dir, cleanup } = cache();
    try {
      const good = { binary: '/usr/bin/agent', retries: 2 };
      expect(rememberedValid(schema, good, env)).toBe(false);
      expect(optionProblems('agent', schema, good, 'plugin-a', env)).toEqual([]);
      expect(rememberedValid(schema, good, env)).toBe(true);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      const files = readdirSync(dir);
      expect(files).toHaveLength(1);
      expect(statSync(join(dir, files[0])).mode & 0o777).toBe(0o600);
      // The same options a second time: valid, from the verdict.
      expect(optionProblems('agent', { ...schema }, { ...good }, 'plugin-a', env)).toEqual([]);

      // Other options are checked, not covered by the verdict: refused ones are named and never remembered.
      const bad = { binary: '/usr/bin/agent', retries: -1 };
      expect(rememberedValid(schema, bad, env)).toBe(false);
      const problems = optionProblems('agent', schema, bad, 'plugin-a', env);
      expect(problems).toHaveLength(1);
      expect(problems[0].path).toBe('agents.agent.retries');
      expect(problems[0].fix).toContain('plugin-a');
      expect(rememberedValid(schema, bad, env)).toBe(false);
      expect(optionProblems('agent', schema, bad, 'plugin-a', env)).toHaveLength(1);

      // The same options under another schema: checked afresh.
      const strict = { ...schema, additionalProperties: false, properties: { binary: { type: 'string' } } };
      expect(rememberedValid(strict, good, env)).toBe(false);
      expect(optionProblems('agent', strict, good, 'plugin-a', env)).toHaveLength(1);
      expect(readdirSync(dir)).toHaveLength(1);
    } finally {
      cleanup();
    }
  });

  it('are not taken from, nor remembered in, a folder others can write', () => {
    const { env, dir, cleanup } = cache();
    try {
      const good = { binary: 'x' };
      expect(optionProblems('agent', schema, good, 'plugin-a', env)).toEqual([]);
      expect(rememberedValid(schema, good, env)).toBe(true);
      chmodSync(dir, 0o777);
      expect(rememberedValid(schema, good, env)).toBe(false);
      expect(optionProblems('agent', schema, { binary: 'y' }, 'plugin-a', env)).toEqual([]);
      expect(readdirSync(dir)).toHaveLength(1);
      expect(optionProblems('agent', schema, { binary: 3 }, 'plugin-a', env)).toHaveLength(1);
    } finally {
      cleanup();
    }
  });

  it('are checked as before where no cache folder can be made', () => {
    const base = tempDir('flume-options-nocache-');
    try {
      // The cache folder would lie under a file: it cannot be made (even by root, unlike a 500 folder).
      writeFileSync(join(base, 'file'), '');
      const env = { ...process.env, FLUME_CACHE_DIR: join(base, 'file', 'cache') };
      expect(optionProblems('agent', schema, { binary: 'x' }, 'plugin-a', env)).toEqual([]);
      expect(optionProblems('agent', schema, { retries: 'many' }, 'plugin-a', env)).toHaveLength(1);
      expect(rememberedValid(schema, { binary: 'x' }, env)).toBe(false);
    } finally {
      remove(base);
    }
  });
});
