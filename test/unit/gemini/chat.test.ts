/**
 * The Gemini CLI's chat file and screen as agents/gemini/ reads them, on lines and screens shaped as
 * the real 0.61.0 writes and draws them (test/e2e-gemini/gemini-vs-real.test.ts pins the real ones).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { promptState, readChat, readUsage } from '../../../agents/gemini/chat.js';
import { askedFor, classifyScreen, draftText, isQueued, questionOf, queuedOf, sameDraft } from '../../../agents/gemini/screen.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A chat file of these lines. */
function chat(lines: object[]): string {
  const folder = mkdtempSync(join(tmpdir(), 'flume-gemini-chat-'));
  folders.push(folder);
  const path = join(folder, 'session-2026-12-04T14-43-5c5d5a67.jsonl');
  writeFileSync(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return path;
}

const context = { id: 'c1', timestamp: '2026-12-04T14:43:57.137Z', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.' }] };
const tokens = (input: number, cached: number, output: number) => ({ input, output, cached, thoughts: 0, tool: 0, total: input + output });

describe("the Gemini CLI's chat", () => {
  it('reads a turn: its prompt taken, its reply ending it, its tokens once', async () => {
    const path = chat([
      { sessionId: '5c5d5a67-2ff4', projectHash: 'h', startTime: '2026-12-04T14:43:57.136Z', lastUpdated: '2026-12-04T14:43:57.136Z', kind: 'main' },
      { $set: { messages: [context] } },
      { id: 'u1', timestamp: '2026-12-04T14:44:08.067Z', type: 'user', content: [{ text: 'hello there' }] },
      { $set: { lastUpdated: '2026-12-04T14:44:08.067Z' } },
      { id: 'g1', timestamp: '2026-12-04T14:44:08.169Z', type: 'gemini', content: 'Noted.', tokens: tokens(100, 30, 20), model: 'gemini-2.5-flash' },
    ]);
    const state = (await readChat(path))!;
    expect(state).toMatchObject({ working: false, turnEnded: true, aborted: false, lastText: 'Noted.', prompts: [{ text: 'hello there' }] });
    expect(promptState(state, 'hello   there', '2026-12-04T14:44:00.000Z')).toBe('taken');
    expect(promptState(state, 'This is the Gemini CLI.')).toBe('not-yet');
    expect((await readUsage(path))!.usage).toEqual({ models: { 'gemini-2.5-flash': { input: 70, cacheRead: 30, cacheWrite: 0, output: 20 } }, replies: 1 });
  });

  it('takes each of the messages it held queued and then submitted as one, joined by a blank line', async () => {
    const path = chat([
      { sessionId: '5c5d5a67-2ff4', projectHash: 'h', startTime: '2026-12-04T14:43:57.136Z', lastUpdated: '2026-12-04T14:43:57.136Z', kind: 'main' },
      { id: 'u1', timestamp: '2026-12-04T14:44:08.067Z', type: 'user', content: [{ text: 'First queued.\n\nSecond, with\n\na blank line of its own.\n\nThird.' }] },
    ]);
    const state = (await readChat(path))!;
    for (const text of ['First queued.', 'Second, with\n\na blank line of its own.', 'Third.']) expect(promptState(state, text)).toBe('taken');
    expect(promptState(state, 'First')).toBe('not-yet');
    expect(promptState(state, 'a blank line of its own.\n\nThird. More')).toBe('not-yet');
  });

  it('reads a call in flight as working, a call that ran as working on, and counts its reply once though written twice', async () => {
    const lines: object[] = [
      { $set: { messages: [context] } },
      { id: 'u1', timestamp: '2026-12-04T14:45:06.342Z', type: 'user', content: [{ text: 'make a file' }] },
      { id: 'g1', timestamp: '2026-12-04T14:45:06.486Z', type: 'gemini', content: '', tokens: tokens(100, 30, 20), model: 'm' },
    ];
    expect(await readChat(chat(lines))).toMatchObject({ working: true, turnEnded: false });
    lines.push({ id: 'g1', timestamp: '2026-12-04T14:45:07.000Z', type: 'gemini', content: '', tokens: tokens(100, 30, 20), model: 'm', toolCalls: [{ id: 't1', name: 'run_shell_command', args: { command: 'touch x' }, status: 'success' }] });
    lines.push({ id: 'u2', timestamp: '2026-12-04T14:45:07.100Z', type: 'user', content: [{ functionResponse: { name: 'run_shell_command', response: {} } }] });
    const path = chat(lines);
    expect(await readChat(path)).toMatchObject({ working: true, turnEnded: false, prompts: [{ text: 'make a file' }] });
    expect((await readUsage(path))!.usage.replies).toBe(1);
  });

  it('reads a cancelled turn as ended and cancelled, keeps its prompt though the chat takes it back, and reads the history written again as no reply', async () => {
    const path = chat([
      { $set: { messages: [context] } },
      { id: 'u1', timestamp: '2026-12-04T14:44:08.067Z', type: 'user', content: [{ text: 'Say hello.' }] },
      { id: 'g1', timestamp: '2026-12-04T14:44:08.169Z', type: 'gemini', content: 'First answer.', tokens: tokens(100, 30, 20), model: 'm' },
      { id: 'u2', timestamp: '2026-12-04T14:45:06.342Z', type: 'user', content: [{ text: 'Touch a file outside.' }] },
      { id: 'g2', timestamp: '2026-12-04T14:45:06.486Z', type: 'gemini', content: '', tokens: tokens(100, 30, 20), model: 'm' },
      { id: 'g2', timestamp: '2026-12-04T14:45:11.800Z', type: 'gemini', content: '', tokens: tokens(100, 30, 20), model: 'm', toolCalls: [{ id: 't1', name: 'run_shell_command', status: 'cancelled' }] },
      { id: 'i1', timestamp: '2026-12-04T14:45:11.850Z', type: 'info', content: 'Request cancelled.' },
      { id: 'u3', timestamp: '2026-12-04T14:45:11.860Z', type: 'user', content: [{ functionResponse: { name: 'run_shell_command', response: { error: 'cancelled' } } }] },
      { ...context, id: 'c2', timestamp: '2026-12-04T14:45:11.873Z' },
      { id: 'g3', timestamp: '2026-12-04T14:45:11.874Z', type: 'gemini', content: [{ text: 'First answer.' }] },
      { $set: { messages: [{ ...context, id: 'c2' }] } },
    ]);
    const state = (await readChat(path))!;
    // The cancelled turn said nothing: the history written again is no reply of it.
    expect(state).toMatchObject({ working: false, turnEnded: true, aborted: true, lastText: undefined });
    expect(state.prompts.map((p) => p.text)).toEqual(['Say hello.', 'Touch a file outside.']);
    expect((await readUsage(path))!.usage.replies).toBe(2);
  });
});

/** The bottom of the screen: the rule, the approval mode's line, the input box, the footer. */
function bottom(box: string[], mode = ' Shift+Tab to accept edits', blank = false): string[] {
  return ['─'.repeat(80), mode, ...(blank ? [''] : []), ...box, ' workspace (/directory)                  sandbox                /model'];
}

describe("the Gemini CLI's screen", () => {
  it('reads the input box below the last rule, not a prompt of the history', () => {
    const ready = [' > Say hello.', '✦ First answer.', ...bottom([' >   Type your message or @path/to/file'])].join('\n');
    expect(classifyScreen(ready)).toBe('input-ready');
    expect(draftText(ready)).toBe('');
    const draft = [' > Say hello.', ...bottom([' > Line one', '   line two'])].join('\n');
    expect(draftText(draft)).toBe('Line one\nline two');
    expect(draftText(bottom([' * A yolo draft.'], ' YOLO Ctrl+Y', true).join('\n'))).toBe('A yolo draft.');
  });

  it('reads an approval below the history as a dialog naming the command, with no box', () => {
    const dialog = [' > Touch a file outside.', '╭──────╮', '│ ? Shell  touch ../outside.txt    │', '│ Allow execution of [Shell]?      │', '│ ● 1. Allow once                  │', '│   3. No, suggest changes (esc)   │', '╰──────╯'].join('\n');
    expect(classifyScreen(dialog)).toBe('permission');
    expect(askedFor(dialog)).toEqual({ tool: 'Shell', what: 'touch ../outside.txt' });
    expect(draftText(dialog)).toBe('');
    // The same words in the history above a box are not a dialog.
    expect(classifyScreen([dialog, ...bottom([' >   Type your message or @path/to/file'])].join('\n'))).toBe('input-ready');
  });

  it('takes a folded paste, or the last ten lines of a long one, for the text', () => {
    const text = Array.from({ length: 20 }, (_, i) => `Line ${i + 1} of the paste.`).join('\n');
    expect(sameDraft('[Pasted Text: 20 lines]', text)).toBe(true);
    // Folded, only the count tells: another paste of another count is someone else's.
    expect(sameDraft('[Pasted Text: 19 lines]', text)).toBe(false);
    expect(sameDraft(text.split('\n').slice(10).join('\n'), text)).toBe(true);
    expect(sameDraft('Line 20 of the paste.', text)).toBe(false);
  });

  it('reads its question box as a question, naming what it asks, with no box', () => {
    const box = (line: string) => `│ ${line.padEnd(60)} │`;
    const asked = [' > Ask me.', `╭${'─'.repeat(62)}╮`, box('Answer Questions'), box(''), box('Which colour should it be?'), box(''), box('> Enter your response'), box(''), box('Enter to submit · Esc to cancel'), `╰${'─'.repeat(62)}╯`].join('\n');
    expect(classifyScreen(asked)).toBe('question');
    expect(questionOf(asked)).toBe('Which colour should it be?');
    // Several questions: a bar of tabs above them is not the question.
    const tabs = asked.replace(box('Which colour should it be?'), `${box('← □ Colour │ □ Go on │ ≡ Review →')}\n${box('')}\n${box('Pick a colour?')}`);
    expect(questionOf(tabs)).toBe('Pick a colour?');
    expect(draftText(asked)).toBe('');
    // The same words in the history above a box are not a question open.
    expect(classifyScreen([asked, ...bottom([' >   Type your message or @path/to/file'])].join('\n'))).toBe('input-ready');
  });

  it('reads what it holds queued, each on a line of its own, a long one cut at the width', () => {
    const long = `Prompt B ${'is long '.repeat(30)}and ends here.`;
    const screen = [' > Prompt A here.', '  Queued (press ↑ to edit):', '    Prompt   two\tspaced.', `    ${long.slice(0, 100)}…`, ' ⠧ Thinking... (esc to cancel, 2s)', ...bottom([' >   Type your message or @path/to/file'])].join('\n');
    expect(queuedOf(screen)).toEqual(['Prompt   two\tspaced.', `${long.slice(0, 100)}…`]);
    expect(isQueued(screen, 'Prompt two\n  spaced.')).toBe(true);
    expect(isQueued(screen, long)).toBe(true);
    expect(isQueued(screen, 'Prompt two')).toBe(false);
    expect(isQueued(screen, 'Prompt A here.')).toBe(false);
    expect(isQueued(bottom([' >   Type your message or @path/to/file']).join('\n'), 'Prompt A here.')).toBe(false);
    // Past three it shows how many more it holds: a text not shown may be one of them.
    const more = ['  Queued (press ↑ to edit):', '    one', '    two', '    three', '    ... (+2 more)', ...bottom([' >   Type your message or @path/to/file'])].join('\n');
    expect(isQueued(more, 'five')).toBe(true);
  });
});
