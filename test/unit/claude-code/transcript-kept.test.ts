/**
 * A process that reads the same transcripts again and again (the supervisor answering status) keeps
 * each file's last reading by its identity (agents/claude-code/reading.ts `readTranscript`): every
 * reading must still be what reading the file afresh gives, whatever happened to the file since.
 */
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTranscript } from '../../../agents/claude-code/reading.js';
import { readState } from '../../../agents/claude-code/transcript.js';
import { patternsFor } from '../../../agents/claude-code/patterns.js';
import type { AgentHandle } from '../../../core/api/agent.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/claude-2.1.332/transcripts');
const handle = { version: '2.1.332' } as AgentHandle;
const fresh = (path: string) => readState(path, { patterns: patternsFor('2.1.332') });
const dir = mkdtempSync(join(tmpdir(), 'flume-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a transcript reading kept by the file it came from', () => {
  it('is the fresh reading after the file grows, is rewritten at the same size, or is replaced', async () => {
    const lines = readFileSync(join(FIXTURES, 'question-answered.jsonl'), 'utf8').split('\n').filter(Boolean);
    const path = join(dir, 'session.jsonl');
    const seen = new Set<string>();
    // Line by line, as the agent writes it: each reading equals the fresh one, twice in a row.
    writeFileSync(path, '');
    for (const line of lines) {
      appendFileSync(path, line + '\n');
      const want = await fresh(path);
      expect(await readTranscript(handle, path)).toEqual(want);
      expect(await readTranscript(handle, path)).toEqual(want);
      seen.add(want.state);
    }
    // The file went through more than one state, so a reading kept too long would have shown.
    expect(seen.size).toBeGreaterThan(1);
    // The same size, other bytes (the last line's prompt changed in place).
    const whole = readFileSync(path, 'utf8');
    const before = await readTranscript(handle, path);
    const shorter = lines.slice(0, Math.ceil(lines.length / 2)).join('\n') + '\n';
    writeFileSync(path, shorter + ' '.repeat(Buffer.byteLength(whole) - Buffer.byteLength(shorter) - 1) + '\n');
    expect(readFileSync(path).length).toBe(Buffer.byteLength(whole));
    expect(await readTranscript(handle, path)).toEqual(await fresh(path));
    expect(await readTranscript(handle, path)).not.toEqual(before);
    // Replaced by another file (a rename over it).
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, readFileSync(join(FIXTURES, 'short-prompt.jsonl')));
    renameSync(other, path);
    expect(await readTranscript(handle, path)).toEqual(await fresh(path));
    // Gone.
    rmSync(path);
    expect(await readTranscript(handle, path)).toEqual(await fresh(path));
  });

  it('a caller that changes a reading changes no later one', async () => {
    const path = join(dir, 'copy.jsonl');
    writeFileSync(path, readFileSync(join(FIXTURES, 'short-prompt.jsonl')));
    const first = (await readTranscript(handle, path))!;
    const want = structuredClone(first);
    (first as { state: string }).state = 'changed by a caller';
    expect(await readTranscript(handle, path)).toEqual(want);
  });
});
