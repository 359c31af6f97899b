/**
 * Transcript records of newer Claude Code builds (2.1.2xx–2.1.332), for which no public transcript
 * exists: written here in the shapes Claude Code 2.1.332's own code writes (`origin`,
 * `promptSource`, queued_command attachments, queue operations, `<pasted_content>` blocks,
 * `stop_reason` on the last line of a reply). Plus edge cases of the backward reader.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPrompt, readState, sessionState } from '../../../agents/claude-code/transcript.js';

let dir: string;
let count = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flume-transcript-new-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes records as a transcript; strings are written as raw lines. */
async function transcript(...records: Array<object | string>): Promise<string> {
  const path = join(dir, `t${count++}.jsonl`);
  await writeFile(path, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return path;
}

const at = (s: number) => new Date(Date.UTC(2026, 5, 1, 12, 0, s)).toISOString();
const base = (s: number) => ({ sessionId: 's', isSidechain: false, timestamp: at(s), uuid: `u${s}` });
const typed = (s: number, content: unknown, extra: object = {}) => ({
  ...base(s),
  type: 'user',
  message: { role: 'user', content },
  origin: { kind: 'human' },
  promptSource: 'typed',
  ...extra,
});
const reply = (s: number, id: string, content: object[], stop: string | null = null) => ({
  ...base(s),
  type: 'assistant',
  message: { id, role: 'assistant', content, stop_reason: stop },
});
const result = (s: number, toolUseId: string) => ({
  ...base(s),
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'ok' }] },
});
const ask = (id: string, question: string) => ({
  type: 'tool_use',
  id,
  name: 'AskUserQuestion',
  input: { questions: [{ question, header: 'Q', options: [], multiSelect: false }] },
});
const tool = (id: string, name = 'Bash') => ({ type: 'tool_use', id, name, input: {} });
const text = (t: string) => ({ type: 'text', text: t });

describe('findPrompt on newer records', () => {
  it('takes a typed prompt carrying origin and promptSource, or as text blocks', async () => {
    expect(await findPrompt(await transcript(typed(1, 'fix the bug')), 'fix the bug')).toBe('taken');
    const blocks = await transcript(typed(1, [{ type: 'image', source: {} }, text('fix the bug')]));
    expect(await findPrompt(blocks, 'fix the bug')).toBe('taken');
  });

  it('takes a queued_command attachment, its prompt a string or blocks', async () => {
    const queued = (prompt: unknown) => ({ ...base(2), type: 'attachment', attachment: { type: 'queued_command', prompt } });
    expect(await findPrompt(await transcript(queued('and the docs')), 'and the docs')).toBe('taken');
    expect(await findPrompt(await transcript(queued([text('and the docs')])), 'and the docs')).toBe('taken');
  });

  it('takes an enqueue, unless the queued prompt was taken back out', async () => {
    const op = (s: number, operation: string, content?: string) => ({ type: 'queue-operation', operation, timestamp: at(s), sessionId: 's', content });
    expect(await findPrompt(await transcript(op(1, 'enqueue', 'more')), 'more')).toBe('taken');
    const popped = await transcript(op(1, 'enqueue', 'more'), op(2, 'popAll', 'more'));
    expect(await findPrompt(popped, 'more')).toBe('not-yet');
    const removed = await transcript(op(1, 'enqueue', 'more'), op(2, 'remove', 'more'), op(3, 'dequeue'));
    expect(await findPrompt(removed, 'more')).toBe('not-yet');
    const again = await transcript(op(1, 'enqueue', 'more'), op(2, 'remove', 'more'), op(3, 'enqueue', 'more'));
    expect(await findPrompt(again, 'more')).toBe('taken');
  });

  it('takes a long paste wrapped in <pasted_content> tags', async () => {
    const body = Array.from({ length: 30 }, (_, i) => `Step ${i + 1}: do the thing number ${i + 1} carefully.`).join('\n');
    const whole = await transcript(typed(1, `<pasted_content id="a1b2">\n${body}\n</pasted_content id="a1b2">`));
    expect(await findPrompt(whole, body)).toBe('taken');
    const inText = await transcript(typed(1, `Read this:\n\n<pasted_content id="0f9e">\n${body}\n</pasted_content id="0f9e">\n\nthen fix it`));
    expect(await findPrompt(inText, `Read this:\n${body}\nthen fix it`)).toBe('taken');
    expect(await findPrompt(inText, `Read this:\n${body}\nthen break it`)).toBe('not-yet');
  });

  it('ignores meta, compaction summaries, sidechains and tool results', async () => {
    const path = await transcript(
      typed(1, 'secret', { isMeta: true }),
      typed(2, 'secret', { isCompactSummary: true }),
      typed(3, 'secret', { isSidechain: true }),
      result(4, 'secret'),
    );
    expect(await findPrompt(path, 'secret')).toBe('not-yet');
  });

  it('skips a line still being written', async () => {
    const path = await transcript(typed(1, 'first'), '{"type":"user","message":{"content":"sec');
    expect(await findPrompt(path, 'first')).toBe('taken');
  });
});

describe('readState on newer records', () => {
  it('idles on a reply whose last line carries stop_reason end_turn', async () => {
    const path = await transcript(typed(1, 'hi'), reply(2, 'm1', [text('Which file?')], 'end_turn'));
    expect(await readState(path)).toEqual({ state: 'idle', turnEnded: true, needs: 'Which file?', lastActivity: at(2) });
  });

  it('asks while one of several parallel calls is an unanswered AskUserQuestion', async () => {
    const path = await transcript(
      typed(1, 'go'),
      reply(2, 'm1', [text('Two things.'), tool('t1')]),
      reply(3, 'm1', [ask('q1', 'Which database?')]),
      result(4, 't1'),
    );
    expect(await readState(path)).toMatchObject({ state: 'asking', dialog: 'question', needs: 'Which database?' });
  });

  it('does not ask for a question answered long ago', async () => {
    const filler = Array.from({ length: 3000 }, (_, i) => ({ ...base(10), type: 'progress', data: { n: i, pad: 'x'.repeat(100) } }));
    const path = await transcript(
      reply(1, 'm1', [ask('q1', 'Old?')]),
      result(2, 'q1'),
      ...filler,
      reply(20, 'm2', [tool('t2')]),
    );
    expect(await readState(path)).toMatchObject({ state: 'working', pendingTool: { id: 't2', name: 'Bash' } });
  });

  it('idles after an interrupt that came before any reply', async () => {
    const path = await transcript(typed(1, 'go'), typed(2, [text('[Request interrupted by user]')]));
    expect(await readState(path)).toMatchObject({ state: 'idle', turnEnded: true });
  });

  it('idles after a manual /compact, works on after an automatic one', async () => {
    const compact = (trigger: string) => ({ ...base(3), type: 'system', subtype: 'compact_boundary', compactMetadata: { trigger } });
    const ended = [typed(1, 'go'), reply(2, 'm1', [text('done')], 'end_turn')];
    expect((await readState(await transcript(...ended, compact('manual')))).state).toBe('idle');
    expect((await readState(await transcript(...ended, compact('auto')))).state).toBe('working');
  });

  it("stays idle after an older build's local command echo and output", async () => {
    const path = await transcript(
      typed(1, 'go'),
      reply(2, 'm1', [text('done')], 'end_turn'),
      typed(3, '<command-name>/model</command-name>\n<command-message>model</command-message>'),
      typed(4, '<local-command-stdout>Kept model as Default</local-command-stdout>'),
    );
    expect(await readState(path)).toMatchObject({ state: 'idle', needs: 'done' });
  });

  it('reads a reply longer than many chunks, split across multi-byte characters', async () => {
    const long = 'é'.repeat(150_000) + ' fin';
    const path = await transcript(typed(1, 'go'), reply(2, 'm1', [text(long)], 'end_turn'));
    expect((await readState(path)).needs).toBe(long);
  });

  it('reads as working when the bounded window holds no reply', async () => {
    const filler = Array.from({ length: 2000 }, () => ({ ...base(5), type: 'progress', data: { pad: 'x'.repeat(200) } }));
    const path = await transcript(typed(1, 'go'), reply(2, 'm1', [text('done')], 'end_turn'), ...filler);
    expect((await readState(path, { maxBytes: 64 * 1024 })).state).toBe('working');
    expect((await readState(path)).state).toBe('idle');
  });
});

describe('sessionState', () => {
  it("reads Claude Code's own state file for the session", async () => {
    const config = join(dir, 'cfg');
    await mkdir(join(config, 'sessions'), { recursive: true });
    const file = { pid: 4242, sessionId: 'abc', cwd: '/w', status: 'waiting', waitingFor: 'permission', updatedAt: 1 };
    await writeFile(join(config, 'sessions', '4242.json'), JSON.stringify(file));
    await writeFile(join(config, 'sessions', '77.json'), JSON.stringify({ ...file, sessionId: 'other', status: 'busy' }));
    await writeFile(join(config, 'sessions', '78.json'), '{"sessionId":"abc",'); // torn
    await writeFile(join(config, 'sessions', 'notes.json'), JSON.stringify(file));
    expect(await sessionState(config, 'abc')).toEqual({ pid: 4242, sessionId: 'abc', cwd: '/w', status: 'waiting', waitingFor: 'permission' });
    expect(await sessionState(config, 'zzz')).toBeUndefined();
  });

  it('is undefined where Claude Code keeps no state files', async () => {
    expect(await sessionState(join(dir, 'none'), 'abc')).toBeUndefined();
  });
});
