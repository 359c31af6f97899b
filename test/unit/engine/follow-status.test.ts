/**
 * The live view's loop (core/cli/view/status-follow.ts): it reads, shows, then watches the paths the
 * reading named. A change made to a path after the reading and before its watcher opened (an agent
 * that asks just as the first frame is drawn) woke nothing, and the view showed it only at its slow
 * poll, a minute later. A path watched for the first time is now read once more.
 */
import { describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { followStatus } from '../../../core/cli/view/status-follow.js';
import type { StatusReport } from '../../../core/engine/status/status.js';
import { remove, tempDir } from '../../helpers/repo.js';
import { waitUntil } from '../../helpers/wait.js';

describe('followStatus', () => {
  it('shows a change made between a reading and its watcher opening without waiting for the slow poll', async () => {
    const root = tempDir('flume-follow-');
    const transcripts = join(root, 'transcripts');
    mkdirSync(transcripts);
    const transcript = join(transcripts, 'session.jsonl');
    writeFileSync(transcript, '{"turn":1}\n');
    const place = { id: 'fix/a', repo: join(root, 'repo'), kind: 'fix', path: join(root, 'place'), stage: { agent: { transcript } } };
    const report = { repositories: [], places: [place] } as unknown as StatusReport;
    const lines: number[] = [];
    const controller = new AbortController();
    try {
      const followed = followStatus(
        async () => report,
        // The slow poll far beyond the test's own limit: only an event or the loop's own rule reads again.
        { signal: controller.signal, pollMs: 3_600_000 },
        () => {
          lines.push(1);
          // The agent writes its question while the first frame is drawn, before any watcher is open.
          if (lines.length === 1) appendFileSync(transcript, '{"ask":"which way?"}\n');
        },
      );
      await waitUntil(() => lines.length >= 2, 'a second reading after the first frame');
      // Watched now: a later line wakes a reading of its own.
      const before = lines.length;
      appendFileSync(transcript, '{"turn":2}\n');
      await waitUntil(() => lines.length > before, 'a reading after the transcript grew');
      controller.abort();
      expect(await followed).toBe('aborted');
    } finally {
      controller.abort();
      remove(root);
    }
  });
});
