/**
 * readState and findPrompt on real Claude Code transcripts (see test/fixtures/claude-transcripts/
 * PROVENANCE.md). A transcript cut at line N is the file as it stood when line N was written.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPrompt, readState } from '../../../agents/claude-code/transcript.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/claude-transcripts');
const SPOTTER = join(FIXTURES, 'spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
const SHORT = join(FIXTURES, 'spotter_short.jsonl');
const CCV = join(FIXTURES, 'ccv_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');

const FIRST_PROMPT =
  'Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and bd ready to find available subtasks. Start with the first ready task.';
const QUESTION =
  'Pre-commit hook blocks on pre-existing dialyzer/credo issues in waiting_summary.ex (not our code). How should we proceed?';

let dir: string;
const lines = new Map<string, string[]>();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flume-transcript-'));
  for (const file of [SPOTTER, SHORT, CCV]) lines.set(file, (await readFile(file, 'utf8')).split('\n'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The transcript as it stood once its line `n` (1-based) was written. */
async function cut(file: string, n: number): Promise<string> {
  const path = join(dir, `${n}-${file.split('/').pop()}`);
  await writeFile(path, `${lines.get(file)!.slice(0, n).join('\n')}\n`);
  return path;
}

/** The JSON record at line `n` (1-based). */
function record(file: string, n: number): Record<string, any> {
  return JSON.parse(lines.get(file)![n - 1]!);
}

describe('readState on spotter_4d5611e5 (2.1.39)', () => {
  it('is asking while the AskUserQuestion of line 1251 has no result', async () => {
    for (const n of [1251, 1252]) {
      const reading = await readState(await cut(SPOTTER, n));
      expect(reading).toMatchObject({ state: 'asking', dialog: 'question', needs: QUESTION });
    }
  });

  it('is working once line 1253 answers it, matched by its tool_use_id', async () => {
    const reading = await readState(await cut(SPOTTER, 1253));
    expect(reading.state).toBe('working');
    expect(reading.dialog).toBeUndefined();
  });

  it('does not count the question answered long ago at the end of the file', async () => {
    const reading = await readState(SPOTTER);
    expect(reading).toMatchObject({ state: 'idle', turnEnded: true, lastActivity: '2026-02-12T21:03:34.206Z' });
    expect(reading.needs).toMatch(/^Background task completed successfully/);
  });

  it('reads a pending tool call as working, naming the tool', async () => {
    const reading = await readState(await cut(SPOTTER, 10));
    expect(reading).toMatchObject({ state: 'working', pendingTool: { name: 'Bash' } });
  });

  it('reads a turn that ended after a tool result as idle, with what the agent said last', async () => {
    for (const n of [277, 278]) {
      const reading = await readState(await cut(SPOTTER, n));
      expect(reading).toMatchObject({ state: 'idle', turnEnded: true });
      expect(reading.needs).toMatch(/^Good - the duplicate helpers are now unused/);
    }
  });

  it('reads a fresh prompt as working', async () => {
    expect((await readState(await cut(SPOTTER, 280))).state).toBe('working');
    expect((await readState(await cut(SPOTTER, 1502))).state).toBe('working');
  });

  it('reads an automatic compaction as working', async () => {
    expect((await readState(await cut(SPOTTER, 754))).state).toBe('working');
    expect((await readState(await cut(SPOTTER, 755))).state).toBe('working');
  });

  it('leaves a final text without a turn end to the screen, and idles at turn_duration', async () => {
    const before = await readState(await cut(SPOTTER, 1495));
    expect(before.state).toBe('working');
    expect(before.turnEnded).toBeUndefined();
    expect(before.lastText).toMatch(/^All done\./);
    const after = await readState(await cut(SPOTTER, 1501));
    expect(after).toMatchObject({ state: 'idle', turnEnded: true, lastActivity: '2026-02-12T21:03:25.648Z' });
    expect(after.needs).toBe(before.lastText);
  });
});

describe('findPrompt on spotter_4d5611e5', () => {
  it('confirms the prompt given on the command line', async () => {
    expect(await findPrompt(SPOTTER, FIRST_PROMPT)).toBe('taken');
    expect(await findPrompt(SPOTTER, FIRST_PROMPT, '2026-02-12T16:02:25.000Z')).toBe('taken');
  });

  it('counts only records at or after `since`', async () => {
    expect(await findPrompt(SPOTTER, FIRST_PROMPT, '2026-02-12T16:02:26.000Z')).toBe('not-yet');
    expect(await findPrompt(SPOTTER, 'continue', '2026-02-12T20:00:00.000Z')).toBe('taken');
    expect(await findPrompt(SPOTTER, 'continue', '2026-02-12T21:00:00.000Z')).toBe('not-yet');
  });

  it('compares after normalising line endings and trailing whitespace', async () => {
    expect(await findPrompt(SPOTTER, 'continue \r\n\r\n')).toBe('taken');
    expect(await findPrompt(SPOTTER, 'continue please')).toBe('not-yet');
  });

  it('confirms a queued prompt by its enqueue before its user line is written', async () => {
    const queued = record(SPOTTER, 459);
    expect(queued).toMatchObject({ type: 'queue-operation', operation: 'enqueue' });
    const early = await cut(SPOTTER, 1000);
    expect(await findPrompt(early, queued.content, '2026-02-12T20:22:00.000Z')).toBe('taken');
    // Later the same text arrives as a user line (1502), found on its own past the enqueue's time.
    expect(await findPrompt(SPOTTER, queued.content, '2026-02-12T21:00:00.000Z')).toBe('taken');
    expect(await findPrompt(await cut(SPOTTER, 458), queued.content)).toBe('not-yet');
  });

  it('is unknown while there is no transcript', async () => {
    expect(await findPrompt(join(dir, 'missing.jsonl'), FIRST_PROMPT)).toBe('unknown');
    expect(await readState(join(dir, 'missing.jsonl'))).toEqual({ state: 'starting' });
  });
});

describe('spotter_short (2.1.38): a rejected tool and the interrupt line', () => {
  it('is idle after the interrupt, whatever local command follows', async () => {
    const reading = await readState(SHORT);
    expect(reading).toMatchObject({ state: 'idle', turnEnded: true, lastActivity: '2026-02-10T21:16:12.381Z' });
    expect(reading.needs).toBe('Let me check the project structure and try running the server to see the error.');
    expect((await readState(await cut(SHORT, 13))).state).toBe('idle');
  });

  it('is working while the two tool calls wait, and after their rejection until the interrupt', async () => {
    expect(await readState(await cut(SHORT, 10))).toMatchObject({ state: 'working', pendingTool: { name: 'Glob' } });
    expect((await readState(await cut(SHORT, 12))).state).toBe('working');
  });

  it('confirms its typed prompt', async () => {
    expect(await findPrompt(SHORT, 'mix phx.server doesnt seem to start')).toBe('taken');
  });
});

describe('ccv_fe5e1c67 (1.0.98): sidechain and meta lines', () => {
  it('does not take a subagent prompt or an isMeta expansion as a prompt', async () => {
    const sidechain = record(CCV, 16);
    expect(sidechain.isSidechain).toBe(true);
    expect(await findPrompt(CCV, sidechain.message.content)).toBe('not-yet');
    const meta = record(CCV, 3);
    expect(meta.isMeta).toBe(true);
    expect(await findPrompt(CCV, meta.message.content[0].text)).toBe('not-yet');
    expect(await findPrompt(CCV, 'Thanks! Please update CLAUDE.md for current changes')).toBe('taken');
  });

  it("ignores a subagent's end_turn: the main chain still waits on its Task", async () => {
    expect(record(CCV, 429).message.stop_reason).toBe('end_turn');
    const reading = await readState(await cut(CCV, 429));
    expect(reading).toMatchObject({ state: 'working', pendingTool: { name: 'Task' } });
  });

  it('reads the main chain once the Task returns', async () => {
    const back = await readState(await cut(CCV, 430));
    expect(back.state).toBe('working');
    expect(back.pendingTool).toBeUndefined();
    expect((await readState(await cut(CCV, 434))).state).toBe('working');
  });

  it('leaves a last text to the screen, since 1.0.98 writes no turn end', async () => {
    const reading = await readState(CCV);
    expect(reading.state).toBe('working');
    expect(reading.turnEnded).toBeUndefined();
    expect(reading.lastText).toMatch(/^CLAUDE\.md has been created/);
  });
});
