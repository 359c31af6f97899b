/**
 * What the terminal-UI drivers share about a text sent to their agent: the commands refused however
 * they are dressed, and a prompt matched in the record only from its sending on.
 */
import { describe, expect, it } from 'vitest';
import { commandsRefused, promptIn } from '../../../agents/prompts.js';

describe('a text its program would run as a command', () => {
  const refuse = commandsRefused('Claude Code');
  it('is refused with `/` first, after spaces or after characters that show as nothing', () => {
    for (const text of ['/init', '  /init', '\t/x', '\n/init', '\u00a0/init', '\u3000/x', '\ufeff/x', '\u200b/init', '\u200c/x', '\u200d/x', '\u2060/x', '\u00ad/x', '\u180e/x', '\u200e/x', '\u{e0020}/x', '\u200b \u200b/about']) {
      expect(refuse(text), JSON.stringify(text)).toMatchObject({ code: 'BAD_TEXT', details: { start: '/' } });
    }
  });
  it('is not refused with a word first, or a `/` later', () => {
    for (const text of ['look at /init', 'a/b', '\u200bhello /x', 'é/']) expect(refuse(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe('a prompt in the record', () => {
  const at = (ms: number) => new Date(Date.parse('2026-12-06T01:00:00.000Z') + ms).toISOString();
  it('is taken only when recorded from its sending on, a second of rounding aside', () => {
    const since = at(0);
    expect(promptIn([{ text: 'go on', at: at(200) }], 'go on', since)).toBe('taken');
    expect(promptIn([{ text: 'go on', at: at(-900) }], 'go on', since)).toBe('taken');
    // The same words taken before this sending are an earlier prompt, not this one.
    expect(promptIn([{ text: 'go on', at: at(-5_000) }], 'go on', since)).toBe('not-yet');
    expect(promptIn([{ text: 'go  on\n', at: at(10) }], 'go on', since)).toBe('taken');
    expect(promptIn(undefined, 'go on', since)).toBe('unknown');
  });
});
