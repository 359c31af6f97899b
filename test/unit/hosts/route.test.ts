/**
 * Which host a command line is for (core/hosts/route.ts), and what is left of it for that host's
 * flume; and the relay's request, whose texts are read from files here (core/hosts/relay.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { route } from '../../../core/hosts/route.js';
import { answerRelay, relayRefusal, relayRequest } from '../../../core/hosts/relay.js';
import { COMMAND_LINES } from '../../../core/cli/options.js';

const state = mkdtempSync(join(tmpdir(), 'flume-route-'));
afterAll(() => rmSync(state, { recursive: true, force: true }));
const HOSTS = [{ name: 'build-1', target: 'me@b1', flume: 'flume', addedAt: 'then' }, { name: 'gpu', target: 'gpu', flume: 'flume', addedAt: 'then' }];
writeFileSync(join(state, 'hosts.json'), JSON.stringify({ hosts: HOSTS }));
const env = { FLUME_STATE_DIR: state } as NodeJS.ProcessEnv;
const routeOf = (argv: string[], more: Record<string, string> = {}) => route(argv, { ...env, ...more }, COMMAND_LINES);
const code = async (work: Promise<unknown>) => work.then(() => 'none', (error: { code?: string }) => error.code);

describe('the route of a command line', () => {
  it('takes --host, --host=, a leading --host and FLUME_HOST off the line, everything else kept as given', async () => {
    expect(await routeOf(['tell', 'fix/a', '--host', 'build-1', '--repo', '/r', '-- not a flag'])).toEqual({ to: 'host', host: HOSTS[0], argv: ['tell', 'fix/a', '--repo', '/r', '-- not a flag'] });
    expect(await routeOf(['stop', '--host=gpu', 'fix/a'])).toMatchObject({ to: 'host', host: HOSTS[1], argv: ['stop', 'fix/a'] });
    expect(await routeOf(['--host', 'gpu', 'status', '--json'])).toMatchObject({ to: 'host', host: HOSTS[1], argv: ['status', '--json'] });
    expect(await routeOf(['status'], { FLUME_HOST: 'build-1' })).toMatchObject({ to: 'host', host: HOSTS[0], argv: ['status'] });
    // --host given wins over FLUME_HOST; `local` is this host.
    expect(await routeOf(['status', '--host', 'local'], { FLUME_HOST: 'build-1' })).toEqual({ to: 'here', argv: ['status'] });
    expect(await routeOf(['launch', '--brief', 'build-1:fix/x', '--kind', 'fix'])).toEqual({ to: 'here', argv: ['launch', '--brief', 'build-1:fix/x', '--kind', 'fix'] });
  });

  it('reads HOST:kind/name where a place is taken, and only there', async () => {
    expect(await routeOf(['tell', 'build-1:fix/a', 'gpu:not-a-place'])).toMatchObject({ to: 'host', host: HOSTS[0], argv: ['tell', 'fix/a', 'gpu:not-a-place'] });
    expect(await routeOf(['drop', '--repo', 'gpu:x', 'gpu:fix/a', '--reason', 'build-1:y'])).toMatchObject({ to: 'host', host: HOSTS[1], argv: ['drop', '--repo', 'gpu:x', 'fix/a', '--reason', 'build-1:y'] });
    expect(await routeOf(['tell', '--', 'build-1:fix/a'])).toEqual({ to: 'here', argv: ['tell', '--', 'build-1:fix/a'] });
  });

  it('reads several hosts only for status, and refuses an unknown one', async () => {
    expect(await routeOf(['status', '--all-hosts', '--json'])).toEqual({ to: 'hosts', here: true, hosts: HOSTS, argv: ['status', '--json'] });
    expect(await routeOf(['status', '--host', 'gpu', '--host', 'build-1'])).toEqual({ to: 'hosts', here: false, hosts: [HOSTS[1], HOSTS[0]], argv: ['status'] });
    expect(await routeOf(['status', '--host', 'gpu', '--host', 'local'])).toMatchObject({ to: 'hosts', here: true, hosts: [HOSTS[1]] });
    expect(await code(routeOf(['tell', 'fix/a', '--host', 'gpu', '--host', 'build-1']))).toBe('UNKNOWN_HOST');
    expect(await code(routeOf(['tell', '--all-hosts', 'fix/a']))).toBe('UNKNOWN_HOST');
    expect(await code(routeOf(['stop', 'nowhere:fix/a']))).toBe('UNKNOWN_HOST');
    expect(await routeOf(['hosts', '--host', 'gpu'])).toEqual({ to: 'here', argv: ['hosts', '--host', 'gpu'] });
  });
});

describe('the relay request', () => {
  it('sends the text of --brief-file and --file read here, and the remote hands the command a file of its own holding it', async () => {
    writeFileSync(join(state, 'brief.md'), '-rf "$(x)"\n');
    const request = await relayRequest(['launch', '--brief-file', 'brief.md', '--kind', 'fix', '--file=brief.md'], state);
    expect(request).toEqual({ relay: 1, argv: ['launch', '--brief-file', 'brief.md', '--kind', 'fix', '--file', 'brief.md'], files: [{ index: 2, text: '-rf "$(x)"\n' }, { index: 6, text: '-rf "$(x)"\n' }] });
    await expect(relayRequest(['tell', 'fix/a', '--file', 'missing.md'], state)).rejects.toMatchObject({ code: 'BAD_USAGE' });
    const seen: string[][] = [];
    const texts: string[] = [];
    const { readFileSync } = await import('node:fs');
    const code = await answerRelay(Readable.from([JSON.stringify(request)]), async (argv) => (seen.push(argv), texts.push(readFileSync(argv[2], 'utf8'), readFileSync(argv[6], 'utf8')), 0), async () => 9, () => undefined);
    expect(code).toBe(0);
    expect(seen[0].filter((_, i) => i !== 2 && i !== 6)).toEqual(['launch', '--brief-file', '--kind', 'fix', '--file']);
    expect(texts).toEqual(['-rf "$(x)"\n', '-rf "$(x)"\n']);
    await expect(answerRelay(Readable.from(['not json']), async () => 0, async () => 0, () => undefined)).rejects.toMatchObject({ code: 'BAD_USAGE' });
  });

  it('reads the request to its newline; the input ending after it, while the command runs, says the caller is gone', async () => {
    const input = new PassThrough();
    let gone = 0;
    let ended: (code: number) => void = () => undefined;
    const seen: string[][] = [];
    const answered = answerRelay(input, (argv) => (seen.push(argv), new Promise<number>((resolve) => (ended = resolve))), async () => 9, () => gone++);
    const request = JSON.stringify({ relay: 1, argv: ['events', '--follow', 'a\nb'], files: [] });
    input.write(request.slice(0, 10));
    input.write(`${request.slice(10)}\n`);
    await vi.waitFor(() => expect(seen).toEqual([['events', '--follow', 'a\nb']]));
    expect(gone).toBe(0);
    input.end();
    await vi.waitFor(() => expect(gone).toBe(1));
    ended(130);
    expect(await answered).toBe(130);
    expect(input.destroyed).toBe(true);

    // Once the command has ended, the input is let go: its end says nothing.
    const after = new PassThrough();
    after.write(`${request}\n`);
    let late = 0;
    expect(await answerRelay(after, async () => 0, async () => 9, () => late++)).toBe(0);
    after.end();
    // A request with no newline is all of the input: its end is the request's, not a caller gone.
    let none = 0;
    expect(await answerRelay(Readable.from([request]), async () => 3, async () => 9, () => none++)).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect([late, none]).toEqual([0, 0]);
  });
});

describe("the relay entry's version check", () => {
  const request = (version?: unknown, more: object = {}) => JSON.stringify({ relay: 1, ...(version === undefined ? {} : { version }), argv: ['launch', '--kind', 'fix'], files: [], ...more });
  /** The answer to `text` from a relay entry of flume 0.1.2: the command's exit code, or the refusal's code and whether it was JSON. */
  const answered = async (text: string) => {
    const ran: string[] = [];
    const refused: Array<{ code: string; details: unknown; json: boolean }> = [];
    const own = { version: '0.1.2', refuse: (error: { code: string; details: unknown }, json: boolean) => (refused.push({ code: error.code, details: error.details, json }), 1) };
    const code = await answerRelay(Readable.from([`${text}\n`]), async () => (ran.push('run'), 0), async () => (ran.push('call'), 0), () => undefined, own);
    return { code, ran, refused };
  };

  it('runs a request of its own minor version, and one that names none (an older caller)', async () => {
    expect(await answered(request('0.1.0'))).toEqual({ code: 0, ran: ['run'], refused: [] });
    expect(await answered(request('0.1.9'))).toEqual({ code: 0, ran: ['run'], refused: [] });
    expect(await answered(request())).toEqual({ code: 0, ran: ['run'], refused: [] });
    expect(await answered(request('0.1.0', { call: { command: 'status', args: {} } }))).toEqual({ code: 0, ran: ['call'], refused: [] });
  });

  it('refuses a request of another minor version with HOST_VERSION_MISMATCH, running nothing, as JSON when its caller asked for JSON', async () => {
    expect(await answered(request('0.2.0'))).toEqual({ code: 1, ran: [], refused: [{ code: 'HOST_VERSION_MISMATCH', details: { remote: '0.1.2', local: '0.2.0' }, json: false }] });
    expect((await answered(request('1.1.2', { argv: ['status', '--json'] }))).refused).toMatchObject([{ code: 'HOST_VERSION_MISMATCH', json: true }]);
    expect((await answered(request('0.0.9', { call: { command: 'status', args: {} } })))).toMatchObject({ ran: [], refused: [{ code: 'HOST_VERSION_MISMATCH', json: true }] });
    expect(relayRefusal({ version: '0.3.1' }, '0.3.0')).toBeUndefined();
    expect(relayRefusal({}, '9.9.9')).toBeUndefined();
  });

  it('takes a version that is not text for a request that is not one', async () => {
    await expect(answered(request(12))).rejects.toMatchObject({ code: 'BAD_USAGE' });
  });
});
