/**
 * footerReady on the real captures: Claude Code takes keys once the footer under its box has had its
 * second render (`← for agents`), which an empty box shows and a draft, a dialog or a note hides.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { patternsFor } from '../../../agents/claude-code/patterns.js';
import { footerReady } from '../../../agents/claude-code/screen.js';

const capture = (version: string, name: string) => readFileSync(join(import.meta.dirname, `../../fixtures/claude-${version}/screens`, name), 'utf8');

describe('footerReady on the real captures', () => {
  it.each(['2.1.332', '2.1.300', '2.1.250'])('%s: ready at idle and while working; not with a draft, a dialog or the trust question', (version) => {
    const p = patternsFor(version);
    for (const name of ['idle.txt', 'idle-default-mode.txt', 'idle.ansi.txt', 'working.txt', 'working-with-queued.txt']) expect(footerReady(capture(version, name), p), name).toBe(true);
    for (const name of ['draft.txt', 'draft-multiline.txt', 'paste-placeholder.txt', 'permission-bash.txt', 'question-single.txt', 'trust-dialog.txt']) expect(footerReady(capture(version, name), p), name).toBe(false);
  });

  it('is false for a box whose footer has not had its second render, and for a screen without a box', () => {
    const idle = capture('2.1.332', 'idle.txt');
    expect(footerReady(idle.replace(' · ← for agents', ''))).toBe(false);
    expect(footerReady('')).toBe(false);
  });
});
