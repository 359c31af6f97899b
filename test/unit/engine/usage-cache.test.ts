/**
 * agentUsage keeps each session's cursor in `<common>/flume/usage/`, so a later call (another status
 * process) reads only what the transcript gained: proven with the Claude Code driver on a real
 * transcript whose already-read prefix is then corrupted. A vanished transcript keeps its figures.
 */
import { readFileSync } from 'node:fs';
import { appendFile, copyFile, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPlugins } from '../../../agents/index.js';
import { createFlume } from '../../../core/api/plugin.js';
import { agentUsage, totalCounts } from '../../../core/engine/stage/usage.js';
import type { AgentHandle } from '../../../core/api/agent.js';

const SPOTTER = join(import.meta.dirname, '../../fixtures/claude-transcripts/spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
const SHORT = join(import.meta.dirname, '../../fixtures/claude-transcripts/spotter_short.jsonl');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flume-usage-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('agentUsage', () => {
  it('reads a transcript once: a later call reads only what was added, from the cursor it kept', async () => {
    const flume = await createFlume({ plugins: agentPlugins() });
    const transcriptPath = join(dir, 'session.jsonl');
    await copyFile(SPOTTER, transcriptPath);
    const handle: AgentHandle = { driver: 'claude-code', sessionId: '4d5611e5-241a-462a-8d15-5122611a9569', host: 'tmux', cwd: dir, startedAt: '', transcriptPath, data: { configDir: dir } };
    const common = join(dir, 'common');
    const first = await agentUsage(flume, common, handle);
    expect(first!.replies).toBeGreaterThan(100);
    expect(await readdir(join(common, 'flume', 'usage'))).toEqual([`${handle.sessionId}.json`]);
    // The prefix read already is overwritten in place: the next call does not read it again.
    const file = await open(transcriptPath, 'r+');
    await file.write(Buffer.alloc(1_000_000, 'x'), 0, 1_000_000, 0);
    await file.close();
    expect(await agentUsage(flume, common, handle)).toEqual(first);
    // What is appended is counted on top.
    await appendFile(transcriptPath, readFileSync(SHORT));
    const grown = await agentUsage(flume, common, handle);
    expect(grown!.replies).toBe(first!.replies + 1);
    expect(totalCounts(grown!).output).toBeGreaterThan(totalCounts(first!).output);
    // A transcript gone keeps the figures last read.
    await rm(transcriptPath);
    expect(await agentUsage(flume, common, handle)).toEqual(grown);
  });
});
