/**
 * The REAL Claude Code with a UserPromptSubmit hook slower than flume's prompt timeout: the prompt it
 * was sent is echoed and held while the hook runs, and only then written to its transcript. flume
 * reads it held from the screen (never typing it a second time, which the program would queue and
 * send again), and a tell is answered `held`, reaching the model once.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e/slow-hook.test.ts'
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { realRepo, waitFor, type RealRepo } from './real-repo.js';

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The hook's time, twice the prompt timeout the test sets (4 s). */
const HOOK_S = 8;

describe('a prompt Claude Code holds while its prompt hook runs', () => {
  it('is read held, never typed again: a tell is answered held and reaches the model once', async () => {
    const marks = join((await import('node:os')).tmpdir(), `flume-slow-hook-${process.pid}-${Date.now()}`);
    // The hook is slow only once the test makes the mark file: the stage's own prompt goes as usual.
    const settings = { hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', timeout: 120, command: `if [ -e ${marks} ]; then echo run >> ${marks}.runs; sleep ${HOOK_S}; fi; exit 0` }] }] } };
    current = await realRepo({ script: () => 'Noted.', settings, config: { limits: { promptTimeout: '4s' } } });
    const t = current;
    const place = await t.launch('fix', 'hook', 'Say noted, then stop.');
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1 });
    await t.until('fix/hook', (p) => p.stage?.agent?.state === 'idle', 'the first turn to end');
    writeFileSync(marks, '');
    const told = await t.flume(['tell', 'fix/hook', 'slow hook tell', '--json']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(JSON.parse(told.stdout)).toMatchObject({ taken: false, held: true, sends: 1 });
    await waitFor(() => t.api.requests.some((r) => lastUserText(r.body) === 'slow hook tell'), 'the tell at the model, once the hook ends');
    await waitFor(() => t.view('fix/hook').then((p) => p.stage?.agent?.state === 'idle'), 'the told turn to end');
    expect(t.api.requests.filter((r) => lastUserText(r.body) === 'slow hook tell')).toHaveLength(1);
    expect(existsSync(`${marks}.runs`) ? readFileSync(`${marks}.runs`, 'utf8').trim().split('\n') : []).toEqual(['run']);
  });
});
