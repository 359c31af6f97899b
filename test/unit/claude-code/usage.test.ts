/**
 * readUsage on real Claude Code transcripts (the captured 2.1.250/2.1.300/2.1.332 sessions and the
 * published ones in claude-transcripts/): its figures equal the `usage` of the file's replies, each
 * reply counted once, computed here by a pass of its own; and it reads only what a file gained.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { appendFile, mkdtemp, open, rename, rm, writeFile, mkdir, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readUsage } from '../../../agents/claude-code/usage.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const FILES = [
  ...['claude-2.1.250', 'claude-2.1.300', 'claude-2.1.332'].flatMap((version) =>
    readdirSync(join(FIXTURES, version, 'transcripts')).filter((name) => name.endsWith('.jsonl')).map((name) => join(FIXTURES, version, 'transcripts', name)),
  ),
  ...readdirSync(join(FIXTURES, 'claude-transcripts')).filter((name) => name.endsWith('.jsonl')).map((name) => join(FIXTURES, 'claude-transcripts', name)),
];
const SPOTTER = join(FIXTURES, 'claude-transcripts', 'spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
const EXIT = join(FIXTURES, 'claude-2.1.332', 'transcripts', 'exit-ctrl-c.jsonl');

type Counts = { input: number; output: number; cacheRead: number; cacheWrite: number };

/**
 * The expected figures, by a pass of the test's own: of each message id, the usage on its last line
 * (Claude Code rewrites a reply's usage on each of its block lines, the later ones complete), summed
 * by model. `naive` sums every line, as a reader that did not count by id would.
 */
function expected(text: string): { models: Record<string, Counts>; replies: number; naive: number } {
  const last = new Map<string, { model: string; usage: Record<string, number> }>();
  let naive = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    if (rec.type !== 'assistant' || !rec.message?.usage || rec.message.model === '<synthetic>') continue;
    last.set(rec.message.id, { model: rec.message.model, usage: rec.message.usage });
    naive += rec.message.usage.output_tokens;
  }
  const models: Record<string, Counts> = {};
  for (const { model, usage } of last.values()) {
    const m = (models[model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    m.input += usage.input_tokens ?? 0;
    m.output += usage.output_tokens ?? 0;
    m.cacheRead += usage.cache_read_input_tokens ?? 0;
    m.cacheWrite += usage.cache_creation_input_tokens ?? 0;
  }
  return { models, replies: last.size, naive };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flume-usage-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readUsage on real transcripts', () => {
  it.each(FILES.map((file) => [file.slice(FIXTURES.length + 1), file]))('%s: the sum of its replies\' usage, each reply once', async (_name, file) => {
    const want = expected(readFileSync(file, 'utf8'));
    const read = await readUsage(file);
    expect(read!.usage.models).toEqual(want.models);
    expect(read!.usage.replies).toBe(want.replies);
  });

  it('counts a reply written as several lines once, at its last figures', async () => {
    // The published session has replies of up to five lines, whose output count grows (10, then 299).
    const want = expected(readFileSync(SPOTTER, 'utf8'));
    const output = Object.values(want.models).reduce((sum, m) => sum + m.output, 0);
    expect(want.naive).toBeGreaterThan(output);
    const read = await readUsage(SPOTTER);
    expect(read!.usage.models['claude-opus-4-6']!.output).toBe(output);
  });

  it('takes the cost Claude Code recorded only while it covers every reply', async () => {
    const text = readFileSync(EXIT, 'utf8');
    expect((await readUsage(EXIT))!.usage.recordedCost).toEqual({ amount: 0.0008, currency: 'USD' });
    // Before its exit wrote the cost line, none is known; a reply after it makes it stale.
    const lines = text.split('\n').filter(Boolean);
    const before = join(dir, 'before.jsonl');
    await writeFile(before, lines.filter((line) => !line.includes('"cost-state"')).join('\n') + '\n');
    expect((await readUsage(before))!.usage.recordedCost).toBeUndefined();
    const after = join(dir, 'after.jsonl');
    const reply = lines.find((line) => line.includes('"type":"assistant"'))!.replace(/"id":"msg_[^"]+"/, '"id":"msg_later"');
    await writeFile(after, [...lines, reply].join('\n') + '\n');
    expect((await readUsage(after))!.usage.recordedCost).toBeUndefined();
  });

  it('counts a subagent\'s transcript (newer builds keep it beside the session) with the session', async () => {
    const main = join(dir, 'sub', 'session.jsonl');
    await mkdir(join(dir, 'sub', 'session', 'subagents'), { recursive: true });
    await copyFile(EXIT, main);
    await copyFile(join(FIXTURES, 'claude-2.1.332', 'transcripts', 'question-answered.jsonl'), join(dir, 'sub', 'session', 'subagents', 'agent-a1.jsonl'));
    const a = expected(readFileSync(EXIT, 'utf8'));
    const b = expected(readFileSync(join(FIXTURES, 'claude-2.1.332', 'transcripts', 'question-answered.jsonl'), 'utf8'));
    const read = (await readUsage(main))!.usage;
    expect(read.replies).toBe(a.replies + b.replies);
    expect(read.models['claude-opus-5-5']!.input).toBe(a.models['claude-opus-5-5']!.input + b.models['claude-opus-5-5']!.input);
    // The session's own recorded cost does not say whether it covers its subagents: none is shown.
    expect(read.recordedCost).toBeUndefined();
  });
});

describe('readUsage as a transcript grows', () => {
  it('reads only the bytes added since its cursor, and ends where a full read does', async () => {
    const lines = readFileSync(SPOTTER, 'utf8').split('\n').filter(Boolean);
    const path = join(dir, 'growing.jsonl');
    await writeFile(path, '');
    let cursor: unknown;
    let total = 0;
    // Cut in pieces that split multi-line replies (a prime step), the last line at times half written.
    for (let at = 0; at < lines.length; at += 37) {
      const piece = lines.slice(at, at + 37).join('\n') + '\n';
      const half = at % 2 === 0 ? Math.floor(piece.length / 2) : piece.length;
      await appendFile(path, piece.slice(0, half));
      const from = cursor ? offsetOf(cursor, path) : 0;
      const read = (await readUsage(path, cursor))!;
      // From where the last read stopped (the end of its last whole line) to the end, and no more.
      expect(read.bytesRead).toBe(statSync(path).size - from);
      cursor = read.cursor;
      if (half < piece.length) {
        await appendFile(path, piece.slice(half));
        const rest = (await readUsage(path, cursor))!;
        cursor = rest.cursor;
      }
      total += Buffer.byteLength(piece);
    }
    const whole = (await readUsage(SPOTTER))!;
    const last = (await readUsage(path, cursor))!;
    expect(last.bytesRead).toBe(0);
    expect(last.usage).toEqual(whole.usage);
    expect(offsetOf(last.cursor, path)).toBe(total);
  });

  it('does not read again what it has read: a corrupted prefix leaves the figures as they were', async () => {
    const path = join(dir, 'prefix.jsonl');
    await copyFile(SPOTTER, path);
    const first = (await readUsage(path))!;
    // Same file, same size, its first 200 KB overwritten in place: nothing there is read again.
    const file = await open(path, 'r+');
    await file.write(Buffer.alloc(200_000, 'x'), 0, 200_000, 0);
    await file.close();
    const again = (await readUsage(path, first.cursor))!;
    expect(again.bytesRead).toBe(0);
    expect(again.usage).toEqual(first.usage);
    // Without its cursor the same file reads otherwise: the prefix held replies.
    expect((await readUsage(path))!.usage).not.toEqual(first.usage);
  });

  it('starts again from the top when the file shrank or was replaced', async () => {
    const path = join(dir, 'replaced.jsonl');
    await copyFile(SPOTTER, path);
    const first = (await readUsage(path))!;
    const short = join(FIXTURES, 'claude-transcripts', 'spotter_short.jsonl');
    await writeFile(path, readFileSync(short));
    const shrunk = (await readUsage(path, first.cursor))!;
    expect(shrunk.usage.models).toEqual(expected(readFileSync(short, 'utf8')).models);
    // A file of the same or a greater size, put in its place by a rename (another inode).
    const other = join(dir, 'other.jsonl');
    await copyFile(SPOTTER, other);
    await appendFile(other, '\n');
    await rename(other, path);
    const replaced = (await readUsage(path, shrunk.cursor))!;
    expect(replaced.usage.models).toEqual(expected(readFileSync(SPOTTER, 'utf8')).models);
  });
});

function offsetOf(cursor: unknown, path: string): number {
  return (cursor as { files: Record<string, { offset: number }> }).files[path]!.offset;
}
