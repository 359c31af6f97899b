/**
 * A prompt is taken only when a main-chain `user` record holds it. An agent that quotes its own
 * prompt — or the next prompt it expects — in its reply writes the text in an `assistant` record; that
 * must never read as taken, or flume would stop sending a prompt the agent never got. Built from the
 * real 2.1.332 capture `short-prompt.jsonl` (test/fixtures/claude-2.1.332), its records kept whole and
 * only their texts, ids and times changed.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPrompt } from '../../../agents/claude-code/transcript.js';

const CAPTURE = join(import.meta.dirname, '../../fixtures/claude-2.1.332/transcripts/short-prompt.jsonl');
const NEXT = 'Run the parser tests, then commit the fix on the branch.';

let dir: string;
let lines: Array<Record<string, any>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flume-self-quote-'));
  lines = (await readFile(CAPTURE, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The capture's one typed prompt and its one reply, as records to copy. */
const userRecord = () => structuredClone(lines.find((l) => l.type === 'user')!);
const assistantRecord = () => structuredClone(lines.find((l) => l.type === 'assistant')!);

/** An assistant record like the capture's, saying `blocks`, written at `at`. */
function reply(blocks: Array<Record<string, unknown>>, at: string, uuid: string): Record<string, any> {
  const rec = assistantRecord();
  rec.message.content = blocks;
  rec.timestamp = at;
  rec.uuid = uuid;
  return rec;
}

/** A typed prompt like the capture's, holding `text`, written at `at`. */
function prompt(text: string, at: string, uuid: string): Record<string, any> {
  const rec = userRecord();
  rec.message.content = text;
  rec.timestamp = at;
  rec.uuid = uuid;
  return rec;
}

async function file(name: string, records: Array<Record<string, any>>): Promise<string> {
  const path = join(dir, `${name}.jsonl`);
  await writeFile(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

describe('findPrompt on a transcript whose agent quotes a prompt', () => {
  it('does not take a prompt that only an assistant record holds, whole or within its words', async () => {
    const path = await file('quotes-next', [
      ...lines,
      // The agent, answering "Say hello.", quotes the next prompt word for word, alone and in a sentence,
      // then in a second text block and beside a tool call, as a model that plans its next step may.
      reply([{ type: 'text', text: NEXT }], '2026-11-30T05:46:26.000Z', '00000000-0000-4000-8000-000000000001'),
      reply([{ type: 'text', text: `Next you will say: "${NEXT}"` }, { type: 'text', text: NEXT }], '2026-11-30T05:46:26.100Z', '00000000-0000-4000-8000-000000000002'),
      reply([{ type: 'text', text: NEXT }, { type: 'tool_use', id: 'toolu_01self', name: 'Bash', input: { command: `echo '${NEXT}'` } }], '2026-11-30T05:46:26.200Z', '00000000-0000-4000-8000-000000000003'),
    ]);
    expect(await findPrompt(path, NEXT)).toBe('not-yet');
    expect(await findPrompt(path, NEXT, '2026-11-30T05:46:25.500Z')).toBe('not-yet');
    // The capture's own prompt is still found: the reader reads the file, only not the assistant's words as a prompt.
    expect(await findPrompt(path, 'Say hello.')).toBe('taken');
  });

  it('does not take again a prompt that was typed before `since` and that the agent quotes after it', async () => {
    // "Say hello." was taken at 05:46:24.978; a tell of the same text is sent at 05:46:30, and the
    // agent's reply quoting "Say hello." comes after that: the tell has not been taken.
    const path = await file('quotes-own', [
      ...lines,
      reply([{ type: 'text', text: 'Say hello.' }], '2026-11-30T05:46:31.000Z', '00000000-0000-4000-8000-000000000004'),
    ]);
    expect(await findPrompt(path, 'Say hello.', '2026-11-30T05:46:30.000Z')).toBe('not-yet');
    // The real thing: a user record after `since` holding it.
    const taken = await file('quotes-own-then-taken', [
      ...lines,
      reply([{ type: 'text', text: 'Say hello.' }], '2026-11-30T05:46:31.000Z', '00000000-0000-4000-8000-000000000004'),
      prompt('Say hello.', '2026-11-30T05:46:32.000Z', '00000000-0000-4000-8000-000000000005'),
    ]);
    expect(await findPrompt(taken, 'Say hello.', '2026-11-30T05:46:30.000Z')).toBe('taken');
  });

  it('takes the prompt once a user record holds it, after the assistant quoted it', async () => {
    const path = await file('quoted-then-taken', [
      ...lines,
      reply([{ type: 'text', text: NEXT }], '2026-11-30T05:46:26.000Z', '00000000-0000-4000-8000-000000000001'),
      prompt(NEXT, '2026-11-30T05:46:27.000Z', '00000000-0000-4000-8000-000000000006'),
    ]);
    expect(await findPrompt(path, NEXT, '2026-11-30T05:46:25.500Z')).toBe('taken');
  });
});
