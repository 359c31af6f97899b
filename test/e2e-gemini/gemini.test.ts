/**
 * The Gemini CLI driver end to end: the flume CLI (`launch`, `watch`, `tell`, `stop`, `status --json`)
 * running the REAL Gemini CLI 0.61.0 in flume's own tmux server against the scripted Gemini API on
 * 127.0.0.1, inside the network namespace `sh scripts/test.sh` makes. Every "taken" was read by flume
 * from the chat file the real program wrote.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { descendantsOf, processRunning } from '../../core/index.js';
import { GEMINI_MODEL, GEMINI_VERSION } from '../helpers/gemini-env.js';
import { call, lastParts, lastUserText, shell, type GeminiRequest } from '../helpers/gemini-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { git } from '../helpers/repo.js';
import { geminiRepo, type GeminiRepo } from './gemini-repo.js';

beforeAll(() => assertIsolated());

let current: GeminiRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** Which stage a request belongs to, from its first prompt. */
function stageOf(request: GeminiRequest): string {
  return JSON.stringify(request.body.contents).includes('CHECK:') ? 'check' : 'code';
}

/** A kind of two stages run by Gemini: `code` ends on a commit, `check` on one more. */
function mend(permissionMode?: string) {
  return {
    kinds: [
      {
        name: 'mend',
        stages: [
          { name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'gemini', ...(permissionMode ? { permissionMode } : {}) },
          { name: 'check', prompt: 'CHECK: {brief}', deliverable: 'commit', agent: 'gemini' },
        ],
      },
    ],
  };
}

describe('the Gemini CLI driver with the real Gemini CLI', () => {
  it('runs a stage that bypasses permissions to a commit, in Gemini\'s yolo mode, and starts the next stage: each prompt confirmed in its own chat, sent once; its tokens from the chat', async () => {
    const turns: Record<string, number> = {};
    const t = (current = await geminiRepo({
      config: mend('bypassPermissions'),
      script: (request) => {
        const stage = stageOf(request);
        const n = (turns[stage] = (turns[stage] ?? 0) + 1);
        if (stage === 'code') {
          if (n === 1) return shell('echo fixed > fix.txt && git add fix.txt && git commit -q -m "Fix the thing"', { usage: { promptTokenCount: 1000, cachedContentTokenCount: 400, candidatesTokenCount: 50 } });
          return n === 2 ? 'Committed the fix.' : undefined;
        }
        return n === 1 ? 'Looking.' : undefined;
      },
    }));
    const place = await t.launch('mend', 'one', 'Fix the thing.');
    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken', sends: 1, agent: { driver: 'gemini', host: 'tmux', version: GEMINI_VERSION } });
    expect(place.stage.agent.command.join(' ')).toContain('--approval-mode yolo');
    expect(place.stage.agent.command.join(' ')).toContain(`--session-id ${place.stage.agent.sessionId}`);
    expect(await t.promptsOf(place.stage.agent.sessionId, 1)).toEqual(['Fix the thing.']);

    // What the stage used, from the chat's tokens: the scripted figures, each reply once.
    const used = await t.until('mend/one', (p) => p?.stage.usage?.replies === 2 && p.stage.usage, "the code stage's usage");
    expect(used.models[GEMINI_MODEL]).toEqual({ input: 600 + 70, cacheRead: 400 + 30, cacheWrite: 0, output: 50 + 20 });

    t.watch();
    const next = await t.until('mend/one', (p) => p?.stage.name === 'check' && p.stage.delivery === 'taken' && p, 'the check stage to start and take its prompt', 45_000);
    expect(next.stage.agent.sessionId).not.toBe(place.stage.agent.sessionId);
    expect(t.record('mend--one').stage.agent.command.join(' ')).not.toContain('--approval-mode');
    expect(await t.promptsOf(next.stage.agent.sessionId, 1)).toEqual(['CHECK: Fix the thing.']);
    expect(git(place.path, 'log', '-1', '--format=%s')).toBe('Fix the thing');
    // The commit ran through Gemini's shell tool, unasked, and its answer went back to the model.
    const codeTurns = t.gemini.api.requests.filter((r) => stageOf(r) === 'code');
    expect(lastUserText(codeTurns[0]!)).toBe('Fix the thing.');
    expect(lastParts(codeTurns[1]!)[0]).toHaveProperty('functionResponse.name', 'run_shell_command');
    expect(t.events('mend--one').filter((e) => e.event === 'stage-started').map((e) => e.stage)).toEqual(['code', 'check']);
  });

  it('commits as the user whose identity git finds only in their global config: Gemini\'s shell tool reads none, the driver hands it over', async () => {
    const t = (current = await geminiRepo({
      config: { kinds: [{ name: 'one', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'gemini', permissionMode: 'bypassPermissions' }] }] },
      script: (request) => {
        const n = request.body.contents.filter((c: { role: string }) => c.role === 'model').length;
        if (n === 0) return shell('echo fixed > fix.txt && git add fix.txt && git commit -q -m "Fix the thing"');
        return n === 1 ? 'Committed the fix.' : undefined;
      },
    }));
    // As most users have it: no identity in the environment nor the repository, only in the global
    // file git reads (the test's repositories carry one of their own: taken out here).
    for (const name of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']) delete t.env[name];
    git(t.repo, 'config', '--unset', 'user.name');
    git(t.repo, 'config', '--unset', 'user.email');
    const global = join(t.state, 'gitconfig');
    writeFileSync(global, '[user]\n\tname = Operator One\n\temail = one@example.org\n');
    t.env.GIT_CONFIG_GLOBAL = global;
    const place = await t.launch('one', 'who', 'Fix the thing.');
    await t.until('one/who', (p) => p?.stage.state === 'delivered' || p === undefined || p.stage.needs, 'the commit, or what stopped it');
    expect(git(place.path, 'log', '-1', '--format=%an <%ae> / %cn <%ce>')).toBe('Operator One <one@example.org> / Operator One <one@example.org>');
  });

  it('asks before a shell command in its default approval mode: status names the command, a tell is refused with nothing typed, stop ends every process of it', async () => {
    const t = (current = await geminiRepo({ config: mend(), script: [shell('touch ../outside.txt')] }));
    const place = await t.launch('mend', 'asks', 'Touch a file outside.');
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1 });
    const asking = await t.until('mend/asks', (p) => p?.stage.agent.state === 'asking' && p, 'the approval dialog');
    expect(asking.stage).toMatchObject({ state: 'waiting', needs: 'approval to run `touch ../outside.txt`' });

    const told = await t.flume(['tell', 'mend/asks', 'Never mind.', '--json', '--no-watch']);
    expect(told.code).not.toBe(0);
    expect(JSON.parse(told.stdout).error.code).toBe('AGENT_ASKING');
    expect(await t.promptsOf(place.stage.agent.sessionId, 1)).toEqual(['Touch a file outside.']);
    expect(t.gemini.api.requests).toHaveLength(1);

    const processes = [place.stage.agent.pid, ...descendantsOf(place.stage.agent.pid)];
    expect(processes.length).toBeGreaterThanOrEqual(2);
    const stopped = await t.flume(['stop', 'mend/asks', '--force', '--json', '--no-watch']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(processes.filter(processRunning)).toEqual([]);
    expect((await t.view('mend/asks')).stage.agent.state).toBe('exited');
    expect(existsSync(join(t.repo, 'places', 'outside.txt'))).toBe(false);
  });

  it("reads its own question (the model's ask_user) as a question: status names it, a tell is refused with nothing typed, stop needs no force", async () => {
    const t = (current = await geminiRepo({ config: mend(), script: [call('ask_user', { questions: [{ question: 'Which colour should it be?', header: 'Colour', type: 'text' }] })] }));
    const place = await t.launch('mend', 'question', 'Ask me.');
    const asking = await t.until('mend/question', (p) => p?.stage.agent.state === 'asking' && p, 'the question');
    expect(asking.stage).toMatchObject({ state: 'waiting', needs: 'an answer: Which colour should it be?' });

    const told = await t.flume(['tell', 'mend/question', 'Blue.', '--json', '--no-watch']);
    expect(JSON.parse(told.stdout).error?.code, told.stdout).toBe('AGENT_ASKING');
    expect(await t.promptsOf(place.stage.agent.sessionId, 1)).toEqual(['Ask me.']);
    expect(t.gemini.api.requests).toHaveLength(1);

    // An agent waiting on its own question is not working: stop ends it without --force.
    const stopped = await t.flume(['stop', 'mend/question', '--json', '--no-watch']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect((await t.view('mend/question')).stage.agent.state).toBe('exited');
  });

  it('waits for what it holds queued: a prompt sent while its MCP server starts is taken once, never sent again, and a tell during a turn is reported queued, then taken once', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    // The prompt timeout is short, so flume's first wait ends while Gemini still holds the prompt.
    const config = mend();
    Object.assign(config.kinds[0]!, { limits: { promptTimeout: '4s' } });
    const t = (current = await geminiRepo({ config, script: ['Started.', { text: 'Working on it.', until: held }, 'Noted.'] }));
    // An MCP server that takes 15 s to fail: until then Gemini queues what is submitted.
    const settings = join(t.gemini.home, '.gemini', 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), mcpServers: { slow: { command: 'sh', args: ['-c', 'sleep 15'] } } }));
    const place = await t.launch('mend', 'queued', 'Start now.');
    expect(place.stage).toMatchObject({ delivery: 'sending', sends: 1 });
    t.watch();
    await t.until('mend/queued', (p) => p?.stage.delivery === 'taken' && p, 'the queued prompt to be taken', 60_000);
    expect(t.record('mend--queued').stage.sends, JSON.stringify(t.events('mend--queued'))).toBe(1);
    expect(await t.promptsOf(place.stage.agent.sessionId, 1)).toEqual(['Start now.']);
    expect(t.events('mend--queued').map((e) => e.event)).not.toContain('never-started');

    // A turn held open; a tell now is queued by Gemini: reported so, typed once, and taken when the turn ends.
    await t.until('mend/queued', (p) => p?.stage.agent.state === 'idle' && p, 'the first turn to end');
    const busy = t.flume(['tell', 'mend/queued', 'Go on with the rest.', '--json', '--no-watch']);
    await t.gemini.api.waitForRequest(2);
    const told = await t.flume(['tell', 'mend/queued', 'Also add a test.', '--json', '--no-watch']);
    expect(JSON.parse(told.stdout), told.stdout + told.stderr).toEqual({ place: 'mend/queued', taken: false, held: true, sends: 1 });
    expect((await busy).code).toBe(0);
    release();
    await t.gemini.api.waitForRequest(3);
    expect(await t.promptsOf(place.stage.agent.sessionId, 3)).toEqual(['Start now.', 'Go on with the rest.', 'Also add a test.']);
    expect(t.gemini.api.requests.map((request) => lastUserText(request))).toEqual(['Start now.', 'Go on with the rest.', 'Also add a test.']);
  });
});
