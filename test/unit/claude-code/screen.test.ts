/**
 * classifyScreen and draftText on the screens in test/fixtures/claude-screens (hand-written after
 * Claude Code 2.1.332's strings and public 2.1.29x captures; see that folder's README).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodePatterns } from '../../../agents/claude-code/patterns.js';
import { classifyScreen, draftText, type ScreenState } from '../../../agents/claude-code/screen.js';

const SCREENS = join(import.meta.dirname, '../../fixtures/claude-screens');
const screen = (name: string) => readFileSync(join(SCREENS, name), 'utf8');
const RULE = '─'.repeat(100);
/** The input box's prompt: `❯` and a no-break space, as 2.1.332 draws it (an echo of a sent prompt has a plain space). */
const BOX = '❯\u00a0';

const EXPECTED: Array<[string, ScreenState, string]> = [
  ['idle-startup.txt', 'input-ready', ''],
  ['idle-after-turn.txt', 'input-ready', ''],
  ['draft-typed.txt', 'input-ready', 'also update the changelog'],
  ['draft-multiline.txt', 'input-ready', 'two things:\n1. update the changelog\n2. bump the version'],
  ['draft-paste.txt', 'input-ready', '[Pasted text #1 +42 lines]'],
  ['working.txt', 'working', ''],
  ['working-with-draft.txt', 'working', 'and keep the old test name'],
  ['working-old-footer.txt', 'working', ''],
  ['permission-bash.txt', 'permission', ''],
  ['permission-create.txt', 'permission', ''],
  ['permission-plan.txt', 'permission', ''],
  ['question.txt', 'question', ''],
  ['question-proceed.txt', 'question', ''],
  ['question-tabs.txt', 'question', ''],
  ['question-multiselect.txt', 'question', ''],
  ['trust.txt', 'trust', ''],
  ['idle-quoting-dialog.txt', 'input-ready', ''],
  ['menu-under-rule.txt', 'question', ''],
];

describe('classifyScreen and draftText on each fixture', () => {
  it.each(EXPECTED)('%s is %s', (name, state, draft) => {
    expect(classifyScreen(screen(name))).toBe(state);
    expect(draftText(screen(name))).toBe(draft);
  });
});

describe('classifyScreen', () => {
  it('is unknown for a screen that is not Claude Code’s, or not drawn yet', () => {
    expect(classifyScreen('')).toBe('unknown');
    expect(classifyScreen('user@host:~/repo$ claude\n')).toBe('unknown');
    expect(classifyScreen(`${RULE}\n${BOX}half a box\n`)).toBe('unknown');
  });

  it('reads a capture taken with escape sequences (capture-pane -e)', () => {
    const colored = `\x1b[2m${RULE}\x1b[0m\n\x1b[1m❯\x1b[0m\u00a0\x1b[7mo\x1b[27mk go\n\x1b[2m${RULE}\x1b[0m\n  \x1b[2m? for shortcuts\x1b[0m\n`;
    expect(classifyScreen(colored)).toBe('input-ready');
    expect(draftText(colored)).toBe('ok go');
  });

  it('reads a spinner only above the box, not a finished turn’s past tense', () => {
    const box = `${RULE}\n${BOX}\n${RULE}\n`;
    expect(classifyScreen(`✻ Cooked for 2m 3s\n\n${box}`)).toBe('input-ready');
    expect(classifyScreen(`✽ Reticulating… (4s · ↓ 12 tokens)\n\n${box}`)).toBe('working');
    expect(classifyScreen(`* Thinking…\n${box}`)).toBe('working');
  });

  it('needs both the question line and a numbered Yes for a permission prompt', () => {
    expect(classifyScreen(' Do you want to proceed?\n\n Esc to cancel\n')).toBe('unknown');
    expect(classifyScreen(' ❯ 1. Yes\n   2. No\n')).toBe('unknown');
    expect(classifyScreen(' Do you want to proceed?\n ❯ 1. Yes\n   2. No\n')).toBe('permission');
  });

  it('names the lowest dialog when an older one is still drawn above it', () => {
    expect(classifyScreen(`${screen('question.txt')}\n${screen('permission-bash.txt')}`)).toBe('permission');
    expect(classifyScreen(`${screen('permission-bash.txt')}\n${screen('question.txt')}`)).toBe('question');
  });

  it('takes its patterns as data: a changed footer is a change of patterns.ts alone', () => {
    const next = { ...claudeCodePatterns, screen: { ...claudeCodePatterns.screen, trust: [/Do you trust the files in this folder\?/] } };
    const trust = ' Do you trust the files in this folder?\n\n ❯ 1. Yes, proceed\n   2. No, exit\n';
    expect(classifyScreen(trust)).toBe('unknown');
    expect(classifyScreen(trust, next)).toBe('trust');
  });
});

describe('draftText', () => {
  it('is empty while a dialog is open, even with a box drawn above it', () => {
    expect(draftText(`${screen('draft-typed.txt')}\n${screen('permission-bash.txt')}`)).toBe('');
  });

  it('ignores the placeholder hint but keeps text that merely starts like one', () => {
    expect(draftText(`${RULE}\n${BOX}Try "refactor src/a.ts"\n${RULE}\n`)).toBe('');
    expect(draftText(`${RULE}\n${BOX}Try again with the fix\n${RULE}\n`)).toBe('Try again with the fix');
  });
});
