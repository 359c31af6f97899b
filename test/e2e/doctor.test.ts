/**
 * `flume doctor` against the real Claude Code (each version the run selects): the driver's checks
 * read the program's own `--version` and `claude auth status` (JSON, `loggedIn`, exit 1 when not),
 * which the fake agent imitates in test/integration/core/doctor.test.ts. Inside the network namespace.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION } from '../helpers/claude-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { realRepo, type RealRepo } from './real-repo.js';

const execFileAsync = promisify(execFile);

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('flume doctor with the real Claude Code', () => {
  it(`finds ${CLAUDE_VERSION}, within the checked range, and logged in by its API key; the program says the same of itself`, async () => {
    current = await realRepo({});
    const result = await current.flume(['doctor', '--repo', current.repo, '--json']);
    const report = JSON.parse(result.stdout);
    const check = (name: string) => report.checks.find((c: { name: string }) => c.name === name);
    expect(check('Claude Code'), result.stdout).toMatchObject({ ok: true, needed: true });
    expect(check('Claude Code').detail).toMatch(new RegExp(` ${CLAUDE_VERSION.replace(/\./g, '\\.')}$`));
    expect(check('Claude Code version')).toMatchObject({ ok: true });
    expect(check('Claude Code login')).toMatchObject({ ok: true, needed: true, detail: 'logged in (api_key)' });

    const version = JSON.parse((await current.flume(['version', '--repo', current.repo, '--json'])).stdout);
    expect(version.programs).toContainEqual({ name: 'Claude Code', by: 'claude-code', version: CLAUDE_VERSION });

    // What the driver reads, from the program itself: with no key and no login, `loggedIn: false` and exit 1.
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...current.claude.vars };
    delete env.ANTHROPIC_API_KEY;
    const out = await execFileAsync(current.claude.binary, ['auth', 'status'], { env }).then(
      (done) => ({ code: 0, stdout: done.stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
    );
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ loggedIn: false, authMethod: 'none' });
  });
});
