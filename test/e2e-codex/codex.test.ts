/**
 * The Codex CLI driver end to end: the flume CLI (`launch`, `watch`, `tell`, `stop`, `status --json`)
 * running the REAL Codex CLI 0.171.0 in flume's own tmux server against the scripted Responses API
 * on 127.0.0.1, inside the network namespace `sh scripts/test.sh` makes. Every "taken" was read by
 * flume from the rollout the real program wrote.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_MODEL, CODEX_VERSION } from '../helpers/codex-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { exec, lastUserText, message, toolOutputs, type ResponsesRequest } from '../helpers/responses-api.js';
import { git } from '../helpers/repo.js';
import { codexRepo, DEFAULT_SANDBOX, rolloutLines, rolloutOf, userPromptsWritten, type CodexRepo } from './codex-repo.js';

beforeAll(() => assertIsolated());

let current: CodexRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The sandbox the rollout's last turn ran in, as Codex records it there. */
function sandboxOf(rollout: string): unknown {
  const contexts = rolloutLines(rollout).filter((l) => l.type === 'turn_context');
  const last = contexts.at(-1)?.payload;
  if (!last?.sandbox_policy) console.log(`codex.test: a turn_context without sandbox_policy: ${JSON.stringify(last)}`);
  return last?.sandbox_policy;
}

/** Which stage a request belongs to, from its first prompt (the stage prompts are the repository's own). */
function stageOf(request: ResponsesRequest): string {
  const all = request.body.input.filter((i) => i.type === 'message' && i.role === 'user').map((i) => (i.content ?? []).map((c) => c.text ?? '').join('')).join('\n');
  return all.includes('SUBMIT:') ? 'submission' : 'code';
}

describe('the Codex driver with the real Codex CLI', () => {
  it('runs a fix to a commit and starts the next stage under Codex\'s default sandbox: each prompt confirmed in its own rollout, sent once; writes outside the place refused', async () => {
    const turns: Record<string, number> = {};
    let repo = '';
    // Outside its place and what its commit needs: the main checkout's tree, and another branch's ref
    // (a new one, with no reflog to write, so only the ref's own folder could refuse it).
    const outside = () => `touch ${repo}/outside.txt; echo "tree=$?"; git -c core.logAllRefUpdates=false update-ref refs/heads/other HEAD; echo "other=$?"`;
    const t = (current = await codexRepo({
      // The code stage's prompt is the built-in template: many lines, sent as one paste.
      config: { prompts: { 'fix.submission': 'SUBMIT: {brief}' } },
      args: DEFAULT_SANDBOX,
      script: (request) => {
        const stage = stageOf(request);
        const n = (turns[stage] = (turns[stage] ?? 0) + 1);
        if (stage === 'code') {
          if (n === 1) return exec('echo fixed > fix.txt && git add fix.txt && git commit -q -m "Fix the thing"', { usage: { input_tokens: 1000, cached_tokens: 400, output_tokens: 50 } });
          return n === 2 ? exec(outside()) : n === 3 ? message('Committed the fix.') : undefined;
        }
        return n === 1 ? message('Waiting for the landing.') : undefined;
      },
    }));
    repo = t.repo;
    const mainBefore = git(t.repo, 'rev-parse', 'main');
    const place = await t.launch('fix', 'one', 'Fix the thing.');
    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken', sends: 1, agent: { driver: 'codex', host: 'tmux', version: CODEX_VERSION } });
    expect(place.stage.prompt.split('\n').length).toBeGreaterThan(4);
    const rollout = rolloutOf(t.state, place.stage.agent.sessionId)!;
    expect(await userPromptsWritten(rollout, 1)).toEqual([place.stage.prompt]);

    // What the stage used, from the rollout's token counts: the scripted figures, each response once.
    const used = await t.until('fix/one', (p) => p?.stage.usage?.replies === 3 && p.stage.usage, 'the code stage\'s usage');
    expect(used.models[CODEX_MODEL]).toEqual({ input: 600 + 80 + 80, cacheRead: 400 + 20 + 20, cacheWrite: 0, output: 50 + 20 + 20 });
    // The agent ran in Codex's own sandbox, as its rollout says.
    expect(sandboxOf(rollout)).toMatchObject({ type: 'workspace-write' });

    t.watch();
    const next = await t.until('fix/one', (p) => p?.stage.name === 'submission' && p.stage.delivery === 'taken' && p, 'the submission stage to start and take its prompt', 45_000);
    expect(next.stage).toMatchObject({ agent: { driver: 'codex' } });
    expect(t.record('fix--one').stage).toMatchObject({ name: 'submission', delivery: 'taken', sends: 1 });
    expect(next.stage.agent.sessionId).not.toBe(place.stage.agent.sessionId);
    expect(await userPromptsWritten(rolloutOf(t.state, next.stage.agent.sessionId)!, 1)).toEqual(['SUBMIT: Fix the thing.']);
    expect(git(place.path, 'log', '-1', '--format=%s')).toBe('Fix the thing');
    // The commit ran through Codex's exec_command and its output went back to the model.
    const codeTurns = t.codex.api.requests.filter((r) => stageOf(r) === 'code');
    expect(lastUserText(codeTurns[0]!.body)).toBe(place.stage.prompt);
    const [committed, refused] = toolOutputs(codeTurns[2]!.body).map((o) => String(o.output));
    expect(committed).toContain('Process exited with code 0');
    // Outside the place the sandbox still refuses: the main checkout's tree, and another branch's ref.
    expect(refused).toMatch(/outside\.txt.*Read-only file system/);
    expect(refused).toContain('tree=1');
    expect(refused).toMatch(/refs\/heads\/other.*Read-only file system/);
    expect(refused).toMatch(/other=[1-9]/);
    expect(existsSync(join(t.repo, 'outside.txt'))).toBe(false);
    expect(git(t.repo, 'branch', '--list', 'other')).toBe('');
    expect(git(t.repo, 'rev-parse', 'main')).toBe(mainBefore);
    const starts = t.events('fix--one').filter((e) => e.event === 'stage-started').map((e) => e.stage);
    expect(starts).toEqual(['code', 'submission']);
  });

  it('reads a stage whose agent stops short to ask a question as waiting, in its own words (the stage chose codex itself)', async () => {
    const question = 'Which parser do you mean: the TOML one or the JSON one?';
    // The default driver stays Claude Code; the declared kind's stage names codex.
    const t = (current = await codexRepo({
      config: { agent: { host: 'tmux' }, kinds: [{ name: 'mend', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit', agent: 'codex' }] }] },
      script: [message(question)],
    }));
    await t.launch('mend', 'short', 'Mend the parser.');
    t.watch();
    const waiting = await t.until('mend/short', (p) => p?.stage.state === 'waiting' && p, 'the stage to wait on the operator');
    expect(waiting.stage.needs).toBe(question);
    expect(waiting.stage.agent).toMatchObject({ driver: 'codex', state: 'idle' });
  });
});
