/**
 * The prompt finder on the real 2.1.332 capture of TABs (test/fixtures/claude-2.1.332/transcripts/
 * tabs.jsonl, made by capture.ts `tabs`): a prompt flume sends with TABs in it is found where the
 * real program recorded each TAB as four spaces, so it is never sent a second time.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPrompt } from '../../../agents/claude-code/transcript.js';
import { asRecorded } from '../../../agents/claude-code/records.js';
import { claudeCodePatterns } from '../../../agents/claude-code/patterns.js';

const TABS = fileURLToPath(new URL('../../fixtures/claude-2.1.332/transcripts/tabs.jsonl', import.meta.url));

/** The texts capture.ts pasted, TABs and all; the real program recorded them with four spaces each. */
const PASTED = ['p\tpasted one line', '\tpasted, a tab first', 'abc\tthree, then\t\ttwo tabs', 'first line\n\tindented\nab\tc'];

describe('a prompt with TABs in the real 2.1.332 transcript', () => {
  it('is found as taken, each TAB read as the four spaces the agent recorded', async () => {
    for (const text of PASTED) expect(await findPrompt(TABS, text), JSON.stringify(text)).toBe('taken');
  });

  it('is what the driver sends: no TAB left, four spaces in its place', () => {
    expect(asRecorded('ab\tc\n\tx', claudeCodePatterns)).toBe('ab    c\n    x');
  });

  it('would not be found by a finder that kept TABs, which is how it came to be sent twice', async () => {
    const keeping = { ...claudeCodePatterns, transcript: { ...claudeCodePatterns.transcript, tab: '\t' } };
    for (const text of PASTED) expect(await findPrompt(TABS, text, undefined, keeping), JSON.stringify(text)).toBe('not-yet');
  });

  it('is not matched by a prompt whose typed TAB the agent dropped: that text was never sent as flume sends it', async () => {
    // capture.ts typed `a\tafter one` as keys; 2.1.332 recorded `aafter one`. flume sends spaces instead.
    expect(await findPrompt(TABS, 'a\tafter one')).toBe('not-yet');
    expect(await findPrompt(TABS, '    four spaces typed first')).toBe('taken');
  });
});
