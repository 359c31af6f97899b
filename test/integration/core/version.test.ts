import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume, PROJECT, tempDir, remove } from '../../helpers/repo.js';
import { plainStatusArgs } from '../../../core/cli/index.js';

const VERSION = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version as string;

describe('flume --version', () => {
  it('prints flume\'s version, as a line or as JSON, and nothing else is read as it', async () => {
    const state = tempDir('flume-version-');
    const env = { ...(process.env as Record<string, string>), FLUME_STATE_DIR: state };
    try {
      for (const flag of ['--version', '-V']) {
        const plain = await flume([flag], { env });
        expect(plain, flag).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
      }
      const json = await flume(['--version', '--json'], { env });
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ flume: VERSION, node: process.versions.node });
      // Not a way into anything else: with a command or more flags it is bad usage, as before.
      const mixed = await flume(['--version', 'status', '--json'], { env });
      expect(mixed.code).toBe(2);
      expect(JSON.parse(mixed.stdout).error.code).toBe('BAD_USAGE');
    } finally {
      remove(state);
    }
  });
});

describe('the status command line that skips the argument parser', () => {
  it('is only `status`, with at most one place and --json, in any order', () => {
    expect(plainStatusArgs(['status'])).toEqual({});
    expect(plainStatusArgs(['status', '--json'])).toEqual({ json: true });
    expect(plainStatusArgs(['status', 'fix/a', '--json'])).toEqual({ place: 'fix/a', json: true });
    expect(plainStatusArgs(['status', '--json', 'fix/a'])).toEqual({ place: 'fix/a', json: true });
    // Anything else goes through yargs, which checks it.
    for (const argv of [['status', '--repo', 'x'], ['status', 'a', 'b'], ['status', '--json', '--json'], ['status', '--watch'], ['status', '-j'], ['status', ''], ['launch'], []]) {
      expect(plainStatusArgs(argv), argv.join(' ')).toBeUndefined();
    }
  });
});
