/**
 * The OpenCode driver end to end: the flume CLI (`launch`, `tell`, `stop`, `status --json`) running the
 * REAL OpenCode 1.18.33 in flume's own tmux server against the scripted Chat Completions API on
 * 127.0.0.1, inside the network namespace `sh scripts/test.sh` makes. Every "taken" was read by flume
 * from the record the real program keeps, through its own server.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { descendantsOf, processRunning } from '../../core/index.js';
import { bash, lastUserText, toolOutputs } from '../helpers/chat-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { opencodeEnv, OPENCODE_VERSION, type OpencodeEnv } from '../helpers/opencode-env.js';
import { programRepo, type ProgramRepo } from '../helpers/program-repo.js';
import { git } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

let current: (ProgramRepo & { opencode: OpencodeEnv }) | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('the OpenCode driver with the real OpenCode', () => {
  it('runs a stage that bypasses permissions to a commit, takes a tell as a prompt, and stops truthfully: each prompt confirmed in its own record, its tokens from there', async () => {
    const opencode = await opencodeEnv({
      script: [bash('echo fixed > fix.txt && git add fix.txt && git commit -q -m "Fix the thing"', { usage: { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 50 } }), 'Committed the fix.', 'Noted: a test too.'],
    });
    const kinds = [{ name: 'mend', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'opencode', permissionMode: 'bypassPermissions' }] }];
    const t = (current = { ...programRepo('opencode', opencode.options, { kinds }, () => opencode.cleanup()), opencode });
    const place = await t.launch('mend', 'one', 'Fix the thing.');
    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken', sends: 1, agent: { driver: 'opencode', host: 'tmux', version: OPENCODE_VERSION } });
    const idle = await t.until('mend/one', (p) => p?.stage.agent.state === 'idle' && p.stage.usage?.replies === 2 && p, 'the first turn to end');
    expect(git(place.path, 'log', '-1', '--format=%s')).toBe('Fix the thing');
    // The commit ran through OpenCode's bash tool, unasked, and its output went back to the model.
    expect(lastUserText(t.opencode.api.requests[0]!.body)).toBe('Fix the thing.');
    expect(toolOutputs(t.opencode.api.requests[1]!.body)).toHaveLength(1);
    // What the stage used, from the record's tokens: the scripted figures, each step once.
    expect(Object.values(idle.stage.usage.models)).toEqual([{ input: 600 + 70, cacheRead: 400 + 30, cacheWrite: 0, output: 50 + 20 }]);

    const told = await t.flume(['tell', 'mend/one', 'Also add a test.', '--json', '--no-watch']);
    expect(told.code, told.stdout + told.stderr).toBe(0);
    expect(lastUserText((await t.opencode.api.waitForRequest(3, 15_000)).body)).toBe('Also add a test.');
    await t.until('mend/one', (p) => p?.stage.agent.state === 'idle' && p.stage.usage?.replies === 3 && p, 'the told turn to end');

    const processes = [place.stage.agent.pid, ...descendantsOf(place.stage.agent.pid)];
    const stopped = await t.flume(['stop', 'mend/one', '--json', '--no-watch']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(processes.filter(processRunning)).toEqual([]);
    // The program's server is gone with it: its usage is what its record said when it was stopped,
    // even to a reader that kept nothing of earlier readings (flume's own cache of them removed).
    rmSync(join(t.repo, '.git', 'flume', 'usage'), { recursive: true, force: true });
    const gone = await t.view('mend/one');
    expect(gone.stage.agent.state).toBe('exited');
    expect(gone.stage.usage).toMatchObject({ replies: 3 });
  });

  it('is recorded stopped short by the supervisor as its turn ends, not at the slow poll: what grows in its data folder wakes the reading', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    // The model answers once the test releases it: the turn is under way until then.
    const opencode = await opencodeEnv({ script: (_request, index) => (index === 0 ? held.then(() => 'I need the staging database URL to go on.') : undefined) });
    const kinds = [{ name: 'mend', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'opencode', permissionMode: 'bypassPermissions' }] }];
    const t = (current = { ...programRepo('opencode', opencode.options, { kinds }, () => opencode.cleanup()), opencode });
    await t.launch('mend', 'short', 'Fix the thing.');
    // The turn is under way (its reply held); the supervisor's full look comes once in ten minutes,
    // so only the events its watch sees can bring the end of the turn to its record.
    t.watch({ poll: '10m' });
    const passes = () => {
      try {
        return JSON.parse(readFileSync(join(t.state, 'watch.json'), 'utf8')).passes as number;
      } catch {
        return 0;
      }
    };
    await waitFor(() => passes() >= 2 || undefined, 'two passes of the supervisor');
    expect(t.record('mend--short').stage.waiting).toBeUndefined();
    release();
    const waiting = await waitFor(() => t.record('mend--short').stage.waiting, 'the supervisor to record the stage stopped short');
    expect(waiting.needs).toContain('staging database URL');
  });

  it("keeps the tokens of the step that committed: the agent hung up as its stage delivers is read once that step has closed", async () => {
    // The commit lands while its tool call still runs; OpenCode writes the step's tokens only once the
    // call has returned, a moment after flume sees the commit and ends the agent.
    const opencode = await opencodeEnv({
      script: [bash('echo fixed > fix.txt && git add fix.txt && git commit -q -m "Fix the thing" && sleep 2', { usage: { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 50 } }), 'Committed the fix.'],
    });
    const kinds = [{ name: 'mend', stages: [
      { name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'opencode', permissionMode: 'bypassPermissions' },
      { name: 'check', prompt: 'Check it.', deliverable: 'commit', agent: 'opencode', permissionMode: 'bypassPermissions' },
    ] }];
    const t = (current = { ...programRepo('opencode', opencode.options, { kinds }, () => opencode.cleanup()), opencode });
    await t.launch('mend', 'tokens', 'Fix the thing.');
    t.watch();
    const moved = await t.until('mend/tokens', (p) => p?.stage.name === 'check' && p, 'the code stage to deliver and the next to start');
    const code = moved.usage.stages.find((run: { name: string }) => run.name === 'code');
    expect(Object.keys(code.usage.models)).toHaveLength(1);
    expect(Object.values(code.usage.models)[0]).toMatchObject({ input: 600, cacheRead: 400, output: 50 });
  });
});
