import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flume, flumeEnv, makeRepo, PROJECT, tempDir, remove, trustMade } from '../../helpers/repo.js';
import { validResult } from '../../helpers/result-schema.js';

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

describe('a read command run without the argument parser', () => {
  it('prints what the same command prints through it', async () => {
    const state = tempDir('flume-read-');
    const repo = makeRepo({ config: `export default { kinds: [{ name: 'unit', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] }] };\n` });
    const env = flumeEnv(state);
    await trustMade(state);
    try {
      // `--json=true` and `--json=false` are not forms the fast path takes: yargs parses those.
      for (const [fast, parsed] of [
        [['kinds', '--repo', repo, '--json'], ['kinds', '--repo', repo, '--json=true']],
        [['kinds', '--repo', repo], ['kinds', '--repo', repo, '--json=false']],
        [['status', '--repo', repo, '--json'], ['status', '--repo', repo, '--json=true']],
        [['status', 'unit/none', '--repo', repo], ['status', 'unit/none', '--repo', repo, '--json=false']],
        [['kinds', '--repo', join(repo, 'missing'), '--json'], ['kinds', '--repo', join(repo, 'missing'), '--json=true']],
      ]) {
        const [a, b] = [await flume(fast, { env }), await flume(parsed, { env })].map(({ code, stdout, stderr }) => ({ code, stdout: untimed(stdout), stderr }));
        expect(a, fast.join(' ')).toEqual(b);
      }
    } finally {
      remove(repo);
      remove(state);
    }
  });
});

/** Output with status's time of reading left out (two runs read at two moments). */
const untimed = (text: string) => text.replace(/"generatedAt": "[^"]+"/g, '"generatedAt": "…"');

describe('the --json answers of trust and version', () => {
  it('match their published schemas', async () => {
    const state = tempDir('flume-json-');
    const repo = makeRepo({ config: 'export default {};\n', trusted: false });
    const env = flumeEnv(state);
    try {
      const answers = [
        ['trust', await flume(['trust', '--repo', repo, '--json'], { env })],
        ['trust', await flume(['trust', '--repo', repo, '--revoke', '--json'], { env })],
        ['version', await flume(['version', '--repo', repo, '--json'], { env })],
        ['version', await flume(['--version', '--json'], { env })],
      ] as const;
      for (const [name, result] of answers) {
        expect(result.code, result.stdout + result.stderr).toBe(0);
        validResult(name, JSON.parse(result.stdout));
      }
      expect(JSON.parse(answers[0][1].stdout)).toMatchObject({ root: repo, file: join(repo, 'flume.config.ts'), state: 'trusted' });
      expect(JSON.parse(answers[1][1].stdout)).toEqual({ root: repo, revoked: true });
    } finally {
      remove(repo);
      remove(state);
    }
  });
});
