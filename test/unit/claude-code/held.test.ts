/**
 * A prompt Claude Code 2.1.332 holds before its transcript has it, as its screen shows it: a
 * UserPromptSubmit hook slower than flume's prompt timeout (the screens below were captured from the
 * real program in the hostile pass), and the second sending then queued behind the first.
 */
import { describe, expect, it } from 'vitest';
import { holdsPrompt } from '../../../agents/claude-code/screen.js';
import { patternsFor } from '../../../agents/claude-code/patterns.js';

const RULE = '─'.repeat(120);
const screen = (above: string[], box = '❯\u00a0') => [...above, RULE, box, RULE, '  ⏸ manual mode on · esc to interrupt'].join('\n');

describe('a sent prompt Claude Code holds', () => {
  it('is read held while its prompt hook runs, and while it stands queued', () => {
    const hook = screen(['● Noted.', '✻ Cooked for 0s · done 12:56 AM', '❯ slow hook tell', '✢ Julienning… (running UserPromptSubmit hook · 3s)', '  ⎿  Tip: Start small, ask Claude for a plan, and check its edits']);
    expect(holdsPrompt(hook, 'slow hook tell')).toBe(true);
    const queued = screen(['❯ slow hook tell', '❯ slow hook tell', '  ⎿  Queued · ctrl+x ctrl+s to send now', '✢ Julienning… (running UserPromptSubmit hook · 12s)'], '❯ Press up to edit queued messages');
    expect(holdsPrompt(queued, 'slow hook tell')).toBe(true);
    // Wrapped over two rows, and the space a keyStart put before it kept.
    const wrapped = screen(['❯  look at the README and', '  then the tests', '✶ Musing… (running UserPromptSubmit hook · 1s)']);
    expect(holdsPrompt(wrapped, ' look at the README and then the tests')).toBe(true);
  });

  it('is not read held for another text, nor without the mark (an echo of a prompt answered already)', () => {
    expect(holdsPrompt(screen(['❯ slow hook tell', '✢ Julienning… (running UserPromptSubmit hook · 3s)']), 'another tell')).toBe(false);
    expect(holdsPrompt(screen(['❯ slow hook tell', '● Noted.', '✻ Cooked for 0s · done 12:56 AM']), 'slow hook tell')).toBe(false);
    // The text in the input box itself is a draft, not a prompt sent.
    expect(holdsPrompt(screen(['✢ Julienning… (running UserPromptSubmit hook · 3s)'], '❯\u00a0slow hook tell'), 'slow hook tell')).toBe(false);
  });

  it('is read held by 2.1.250 from its spinner under the echo, which names no hook, and from the second sending echoed under it', () => {
    const old = patternsFor('2.1.250');
    const hook = screen(['● Noted.', '✻ Cooked for 0s · done 2:32 AM', '❯ slow hook tell', '✻ Garnishing…', '  ⎿  Tip: Start with small features or bug fixes'], '❯ ');
    expect(holdsPrompt(hook, 'slow hook tell', old)).toBe(true);
    const queued = screen(['❯ slow hook tell', '* Garnishing…', '  ⎿  Tip: Start with small features or bug fixes', '  ❯ slow hook tell'], '❯ Press up to edit queued messages');
    expect(holdsPrompt(queued, 'slow hook tell', old)).toBe(true);
    // Working on an earlier prompt while this one sits typed in the box: not sent, so not held.
    expect(holdsPrompt(screen(['❯ slow hook tell', '✻ Garnishing…'], '❯ slow hook tell'), 'slow hook tell', old)).toBe(false);
    // The last prompt taken is another: the echo of an earlier one is not this sending.
    expect(holdsPrompt(screen(['❯ slow hook tell', '● Noted.', '❯ another', '✻ Garnishing…'], '❯ '), 'slow hook tell', old)).toBe(false);
    // With no spinner, an echo is a prompt answered already.
    expect(holdsPrompt(screen(['❯ slow hook tell', '● Noted.', '✻ Cooked for 0s · done 2:32 AM'], '❯ '), 'slow hook tell', old)).toBe(false);
  });
});
