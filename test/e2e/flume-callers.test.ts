/**
 * A kind whose caller starts its stages, end to end with the REAL Claude Code: crew's way of working
 * (its own stages, in its own order, each end read from flume) through the command line alone. The
 * supervisor runs (`flume watch` in the background) and starts nothing by itself; each `flume stage
 * --wait --json` starts one stage, and answers once the real program's commit (or landing) has
 * ended it, with what it delivered in the same reading.
 *
 * The fake-agent twin of this test is test/integration/stages/callers.test.ts.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e/flume-callers.test.ts'
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bash, type ContentBlock, type MessagesBody, type MessagesRequest, type ReplyLike } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { validResult } from '../helpers/result-schema.js';
import { realRepo, type RealRepo } from './real-repo.js';

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const UNIT = {
  name: 'unit',
  branch: 'crew/{name}',
  advance: 'caller',
  stages: [
    { name: 'settle', prompt: 'Settle the unit {name} on {target}.', deliverable: 'commit' },
    { name: 'fixround', prompt: 'Run a fix round on the unit {name}.', deliverable: 'commit' },
    { name: 'merge', prompt: 'Merge the unit {name} into {target}.', deliverable: 'landing' },
  ],
};

const COMMANDS: Record<string, string> = {
  settle: 'echo settled >> unit.txt && git add unit.txt && git commit -qm settled',
  fixround: 'echo fixed >> fix.txt && git add fix.txt && git commit -qm fixed',
  merge: 'git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." merge -q --no-edit "$(git branch --show-current)"',
};

/** The stage whose prompt opened the conversation. */
function stageOf(body: MessagesBody): string | undefined {
  const first = body.messages.find((m) => m.role === 'user');
  const content = typeof first?.content === 'string' ? first.content : (first?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
  // The program's own context names the branch's commits too: the prompts' words are not in any of them.
  if (content.includes('Merge the unit')) return 'merge';
  if (content.includes('Run a fix round')) return 'fixround';
  if (content.includes('Settle the unit')) return 'settle';
  return undefined;
}

/** The model: one Bash call, then a closing line. */
function play(request: MessagesRequest): ReplyLike | undefined {
  const stage = stageOf(request.body);
  if (!stage) return undefined;
  const done = request.body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as ContentBlock[]) : [])).some((b) => b.type === 'tool_result');
  return done ? `The ${stage} stage is done.` : bash(COMMANDS[stage], `Do the ${stage} stage`, { delayMs: 300 });
}

describe('a caller kind with the real Claude Code', () => {
  it('runs stage by stage in its caller\'s order, nothing started in between, each end read with what it delivered', async () => {
    current = await realRepo({ script: play, permissionMode: 'bypassPermissions', env: { IS_SANDBOX: '1' }, config: { kinds: [UNIT] } });
    const t = current;
    const watch = t.watch(['--poll', '1s', '--linger', '0']);
    const launched = await t.flume(['launch', '--repo', t.repo, '--kind', 'unit', '--name', 'u1', '--brief', 'A unit of crew.', '--json']);
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    expect(validResult('launch', JSON.parse(launched.stdout)).place).toMatchObject({ stage: null, awaits: 'caller' });

    for (const stage of ['fixround', 'settle']) {
      const result = await t.flume(['stage', 'unit/u1', stage, '--repo', t.repo, '--wait', '--for', 'awaits-caller', '--timeout', '3m', '--json']);
      expect(result.code, result.stdout + result.stderr + watch.output()).toBe(0);
      const ended = validResult('wait', JSON.parse(result.stdout));
      expect(ended.places[0]).toMatchObject({ awaits: 'caller', awaiting: { after: stage }, stage: { name: stage, state: 'delivered', delivered: { what: expect.stringMatching(/^commit [0-9a-f]{7}/) } } });
    }
    // Two stages ran, each with its own real session, and the supervisor started none of its own.
    const started = (await t.flume(['events', '--repo', t.repo, 'unit/u1', '--json'])).stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(started.filter((e) => e.event === 'stage-started').map((e) => e.stage)).toEqual(['fixround', 'settle']);
    expect(started.filter((e) => e.event === 'prompt-taken').map((e) => e.stage)).toEqual(['fixround', 'settle']);

    const merged = await t.flume(['stage', 'unit/u1', 'merge', '--repo', t.repo, '--wait', '--for', 'delivered,gone', '--timeout', '3m', '--json']);
    expect(merged.code, merged.stdout + merged.stderr + watch.output()).toBe(0);
    await t.until('unit/u1', (p) => p === undefined, 'the landed place to be tidied', { timeoutMs: 120_000 });
    const all = (await t.flume(['events', '--repo', t.repo, '--json'])).stdout.split('\n').filter(Boolean).map((line) => validResult('events', JSON.parse(line), 'events --json'));
    expect(all.filter((e) => e.event === 'stage-started').map((e) => e.stage)).toEqual(['fixround', 'settle', 'merge']);
    expect(all.map((e) => e.event)).toEqual(expect.arrayContaining(['finished', 'tidied']));
  }, 300_000);
});
