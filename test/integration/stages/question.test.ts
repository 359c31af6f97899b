import { describe, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LONG, promptsOf, repoFor, running } from './helpers.js';
import { validResult } from '../../helpers/result-schema.js';

describe('a question, driven by the supervisor', { timeout: LONG }, () => {
  it('ends its session on conclusion.md; go-on runs it again with a fresh agent and the note, ending only on a new conclusion', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    // Each round concludes once the test opens its gate: the test reads status before and after.
    const conclude = t.bin('conclude.sh', `${t.gate('$2')}\nprintf "%s\\n" "$1" > conclusion.md`);
    t.script({
      onPrompt: [
        { match: 'look at y', actions: [{ say: 'Looking at y.' }, { run: [conclude, 'Use y: it is faster.', 'round-2'] }, { say: 'Concluded again.' }] },
        { match: 'Work the question in this place', actions: [{ run: [conclude, 'Use x.', 'round-1'] }, { say: 'Concluded.' }] },
      ],
    });
    const place = await t.launch('question', 'x', 'Which parser should we use?');
    const first = place.stage.agent;
    // A short slow poll: while a round works behind its gate nothing writes, and the test waits on passes.
    t.watch({}, { poll: '500ms' });
    t.open('round-1');
    const delivered = await t.until('question/x', (p) => p?.stage?.state === 'delivered' && p.stage, 'the session to conclude');
    expect(delivered).toMatchObject({ name: 'session', attempt: 1, delivered: { what: 'conclusion.md' } });
    // The conclusion is not committed and nothing lands from a question: the place stays.
    // Status shows the conclusion in the reading that finds it; the supervisor then ends the agent.
    await t.until('question/x', (p) => p?.stage?.agent?.state === 'exited' && t.events('question--x').some((e) => e.event === 'agent-stopped'), 'the session\'s agent to be ended');
    expect(running(first.pid)).toBe(false);
    const after = await t.view('question/x');
    expect(after).toMatchObject({ state: 'active', landing: { state: 'no-commits' } });

    const goOn = await t.flume(['go-on', 'question/x', '--note', 'look at y', '--json']);
    expect(goOn.code, goOn.stdout + goOn.stderr).toBe(0);
    const second = validResult('stage', JSON.parse(goOn.stdout)).stage;
    expect(second).toMatchObject({ name: 'session', attempt: 2, delivery: 'taken' });
    expect(second.agent.sessionId).not.toBe(first.sessionId);
    // go-on answers with the stage as status shows it; flume's record names the transcript file.
    const prompt = promptsOf(t.record('question--x').stage.agent.transcriptPath)[0];
    expect(prompt).toContain('Work the question in this place');
    expect(prompt).toContain('look at y');
    expect(prompt).toContain('Which parser should we use?');

    // The old conclusion.md stands while the new round works: passes that read it do not end the round.
    const conclusion = () => readFileSync(join(place.path, 'conclusion.md'), 'utf8');
    await t.quiet(3);
    expect((await t.view('question/x')).stage).toMatchObject({ attempt: 2, state: 'working', agent: { sessionId: second.agent.sessionId } });
    expect(t.record('question--x').stage).toMatchObject({ attempt: 2 });
    expect(t.record('question--x').stage.delivered).toBeUndefined();
    expect(conclusion()).toBe('Use x.\n');
    t.open('round-2');
    const ended = await t.until('question/x', (p) => p?.stage?.state === 'delivered' && p.stage.attempt === 2 && p.stage, 'the second round to conclude');
    expect(ended.delivered.what).toBe('conclusion.md');
    expect(conclusion()).toBe('Use y: it is faster.\n');
    expect(t.events('question--x').filter((e) => e.event === 'stage-started')).toHaveLength(2);
  });

  it('ends a next round that writes the same conclusion as the last: a new write, not a stop short', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    const conclude = t.bin('conclude.sh', `${t.gate('$2')}\nprintf "%s\\n" "$1" > conclusion.md`);
    t.script({
      onPrompt: [
        { match: 'check again', actions: [{ run: [conclude, 'Use x.', 'round-2'] }, { say: 'Still x.' }] },
        { match: 'Work the question in this place', actions: [{ run: [conclude, 'Use x.', 'round-1'] }, { say: 'Concluded.' }] },
      ],
    });
    await t.launch('question', 'same', 'Which parser should we use?');
    // A short slow poll: while a round works behind its gate nothing writes, and the test waits on passes.
    t.watch({}, { poll: '500ms' });
    t.open('round-1');
    await t.until('question/same', (p) => p?.stage?.agent?.state === 'exited' && t.events('question--same').some((e) => e.event === 'agent-stopped'), 'the first round to conclude and end');
    const goOn = await t.flume(['go-on', 'question/same', '--note', 'check again', '--json']);
    expect(goOn.code, goOn.stdout + goOn.stderr).toBe(0);
    // The old conclusion stands while the round works (passes read it, and end nothing); then it is
    // written again, word for word.
    await t.quiet(3);
    expect((await t.view('question/same')).stage).toMatchObject({ attempt: 2, state: 'working' });
    expect(t.record('question--same').stage.delivered).toBeUndefined();
    t.open('round-2');
    const seen: any[] = [];
    const ended = await t.until('question/same', (p) => p?.stage?.attempt === 2 && t.record('question--same')?.stage?.delivered && p.stage, 'the second round to be recorded as delivered', { seen });
    expect(ended.delivered.what).toBe('conclusion.md');
    expect(seen.filter((p) => p?.stage?.attempt === 2).map((p) => p.stage.state)).not.toContain('waiting');
    expect(readFileSync(join(t.repo, 'places', 'question--same', 'conclusion.md'), 'utf8')).toBe('Use x.\n');
  });
});
