/**
 * What a permission prompt needs, read from a captured dialog whether or not the transcript has its
 * tool_use line yet: Claude Code draws the dialog, header first, in one frame, and the header names
 * the tool, so flume says the same whenever it looks (a busy machine lets the screen run ahead of
 * the transcript). The screens are the real 2.1.250, 2.1.300 and 2.1.332 captures; the transcript
 * is 2.1.332's own, cut before and after the tool_use line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeAgent } from '../../../agents/claude-code/reading.js';
import { permissionTool } from '../../../agents/claude-code/screen.js';
import { patternsFor } from '../../../agents/claude-code/patterns.js';
import { readState } from '../../../agents/claude-code/transcript.js';
import type { AgentHandle } from '../../../core/index.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const capture = (version: string, name: string) => readFileSync(join(FIXTURES, `claude-${version}`, 'screens', name), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'flume-permission-tool-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The 2.1.332 transcript of a Bash permission prompt, read as it stood with its first `keep` lines. */
async function transcriptWith(keep: (record: { type?: string; message?: { content?: unknown } }) => boolean) {
  const lines = readFileSync(join(FIXTURES, 'claude-2.1.332', 'transcripts', 'permission-allowed-and-denied.jsonl'), 'utf8').split('\n').filter(Boolean);
  const cut: string[] = [];
  for (const line of lines) {
    if (!keep(JSON.parse(line))) break;
    cut.push(line);
  }
  const path = join(scratch, `t-${cut.length}.jsonl`);
  writeFileSync(path, cut.join('\n') + '\n');
  return readState(path, { patterns: patternsFor('2.1.332') });
}

const isToolUse = (r: { type?: string; message?: { content?: unknown } }) => r.type === 'assistant' && Array.isArray(r.message?.content) && r.message.content.some((b: { type?: string }) => b.type === 'tool_use');
const isToolResult = (r: { type?: string; message?: { content?: unknown } }) => r.type === 'user' && Array.isArray(r.message?.content) && r.message.content.some((b: { type?: string }) => b.type === 'tool_result');

describe('a permission prompt on screen', () => {
  it.each(['2.1.250', '2.1.300', '2.1.332'])('names its tool in %s, the header drawn with the dialog', (version) => {
    expect(permissionTool(capture(version, 'permission-bash.txt'), patternsFor(version))).toBe('Bash');
    // No dialog open, no tool named: the same build's idle screen and question dialog.
    expect(permissionTool(capture(version, 'idle.txt'), patternsFor(version))).toBeUndefined();
    expect(permissionTool(capture(version, 'question-single.txt'), patternsFor(version))).toBeUndefined();
  });

  it('needs permission to use Bash whether or not the transcript holds the tool_use yet', async () => {
    const handle: AgentHandle = { driver: 'claude-code', sessionId: 's', host: 'tmux', cwd: '/tmp/flume-claude-FIXTURE/repo', startedAt: '', pane: '%1', version: '2.1.332' };
    const screen = capture('2.1.332', 'permission-bash.txt');
    let toolSeen = false;
    const before = await transcriptWith((r) => !isToolUse(r));
    const after = await transcriptWith((r) => !isToolResult(r) && !(toolSeen && isToolUse(r)) && ((toolSeen ||= isToolUse(r)), true));
    expect(before?.pendingTool).toBeUndefined();
    expect(after?.pendingTool?.name).toBe('Bash');
    for (const [transcript, session] of [[before, 'busy'], [after, 'busy'], [after, 'waiting']] as const) {
      const reading = judgeAgent(handle, { own: true, alive: true, transcript, screen, session: { pid: 1, sessionId: 's', status: session } });
      expect(reading).toMatchObject({ state: 'asking', dialog: 'permission', needs: 'permission to use Bash' });
    }
  });
});
