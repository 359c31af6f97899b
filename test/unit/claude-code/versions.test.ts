/**
 * flume's screen classifier, draft reader and prompt finder over what every tested Claude Code
 * version really showed and wrote (test/fixtures/claude-<version>/, captured by
 * test/fixtures/capture-claude.ts), each read with the patterns the driver picks for that version.
 * A version whose screens or records change shows up here as a failing capture, before any e2e run.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodePatternTable, parseVersion, patternsFor } from '../../../agents/claude-code/patterns.js';
import { classifyScreen, draftText, type ScreenState } from '../../../agents/claude-code/screen.js';
import { findPrompt, readState } from '../../../agents/claude-code/transcript.js';
import { versionIn } from '../../../agents/claude-code/version.js';
import { CLAUDE_VERSIONS, PINNED_CLAUDE_VERSION, selectedClaudeVersions } from '../../helpers/claude-env.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');

/** What each capture of capture-claude.ts shows, and the draft in its input box. */
const SCREENS: Record<string, [ScreenState, string]> = {
  idle: ['input-ready', ''],
  'idle-default-mode': ['input-ready', ''],
  draft: ['input-ready', 'a draft that is typed but not sent'],
  'draft-multiline': ['input-ready', 'Line one of a multi-line prompt.\nLine two: with `code` and "quotes".\n\nLine four after a blank line.\nLine five.'],
  'paste-placeholder': ['input-ready', '[Pasted text #1 +4 lines]'],
  // A TAB typed is the Tab key (dropped); a TAB pasted becomes four spaces (2.1.332, capture.ts `tabs`).
  'tab-typed-draft': ['input-ready', 'at the start'],
  'tab-pasted-draft': ['input-ready', 'first line\n    indented\nab    c'],
  'burst-over-800-placeholder': ['input-ready', '[Pasted text #2]'],
  'after-reply': ['input-ready', ''],
  working: ['working', ''],
  // The box shows the dim "Press up to edit queued messages", which is no draft.
  'working-with-queued': ['working', ''],
  // Esc before the first reply puts the prompt back in the box as a draft.
  'after-esc-before-reply': ['input-ready', 'This one is interrupted.'],
  'permission-bash': ['permission', ''],
  'permission-denied-esc': ['input-ready', ''],
  'permission-after-4-no': ['input-ready', ''],
  'question-single': ['question', ''],
  'question-multi-1': ['question', ''],
  'question-multi-2-multiselect': ['question', ''],
  'question-multi-review': ['question', ''],
  'question-answered': ['input-ready', ''],
  'trust-dialog': ['trust', ''],
  'ctrl-c-once': ['input-ready', ''],
  'slash-exit-typed': ['input-ready', '/exit'],
  // The dialog's text stays on the dead pane; flume reads the process gone before it reads a screen.
  'trust-dialog-after-enter': ['trust', ''],
  'exited-ctrl-c': ['unknown', ''],
  'exited-slash-exit': ['unknown', ''],
};

/** The prompts capture-claude.ts typed into each transcript, all of which were taken. */
const LONG = Array.from({ length: 30 }, (_, i) => `Sentence ${i} of a long prompt that goes on for a while.`).join(' ');
const MULTI = ['Line one of a multi-line prompt.', 'Line two: with `code` and "quotes".', '', 'Line four after a blank line.', 'Line five.'].join('\n');
const PROMPTS: Record<string, string[]> = {
  'short-prompt': ['Say hello.'],
  // Pasted with TABs (found as the four spaces each became), and spaces typed first kept as typed.
  tabs: ['p\tpasted one line', '\tpasted, a tab first', 'abc\tthree, then\t\ttwo tabs', 'first line\n\tindented\nab\tc', '    four spaces typed first'],
  'typing-long-multiline-paste': [LONG, MULTI, LONG.slice(0, 1000), 'a short pasted line'],
  'queued-while-busy.partial': ['First, a slow one.', 'Queued while busy.'],
  'queued-and-interrupted': ['First, a slow one.', 'Queued while busy.', 'A prompt after the interrupt.'],
  'permission-allowed-and-denied': ['Create a file.', 'Create another file.', 'And one more.'],
  'question-answered': ['Ask me which database.', 'Ask me two things.'],
  'exit-ctrl-c': ['Hello.'],
  'exit-slash-exit': ['Hello.'],
};

/**
 * Prompts typed but cancelled with Esc before any reply: their user line stays in the file as a dead
 * branch (the next prompt takes the cancelled one's parent), and they were NOT taken.
 */
const CANCELLED: Record<string, string[]> = {
  'queued-and-interrupted': ['This one is interrupted.'],
};

/** How each transcript ends, as readState reads it. */
const ENDS: Record<string, { state: string; needs?: string }> = {
  'short-prompt': { state: 'idle', needs: 'Hello from the scripted API.' },
  'queued-while-busy.partial': { state: 'working' },
  'queued-and-interrupted': { state: 'idle', needs: 'After the interrupt.' },
  'question-answered': { state: 'idle', needs: 'Noted both.' },
  'exit-ctrl-c': { state: 'idle', needs: 'Hi.' },
};

/** Every version that has a capture folder. */
const captured = readdirSync(FIXTURES)
  .map((name) => /^claude-(\d+\.\d+\.\d+)$/.exec(name)?.[1])
  .filter((v): v is string => v !== undefined);

describe('the versions flume is tested on', () => {
  it('each has its captures and its own row in the patterns table', () => {
    expect([...captured].sort()).toEqual([...CLAUDE_VERSIONS].sort());
    for (const version of CLAUDE_VERSIONS) expect(patternsFor(version).version).toBe(version);
    expect(claudeCodePatternTable[0]!.patterns.version).toBe(PINNED_CLAUDE_VERSION);
  });

  it('picks the row of the newest checked version at or below the one reported; unknown gets the newest', () => {
    expect(patternsFor('2.1.332 (Claude Code)').version).toBe('2.1.332');
    expect(patternsFor('2.1.400').version).toBe('2.1.332');
    expect(patternsFor('2.1.331').version).toBe('2.1.300');
    expect(patternsFor('2.1.299').version).toBe('2.1.250');
    expect(patternsFor('1.0.98').version).toBe('2.1.250');
    expect(patternsFor(undefined).version).toBe('2.1.332');
    expect(patternsFor('not a version').version).toBe('2.1.332');
    expect(parseVersion('v2.10.3-beta')).toEqual([2, 10, 3]);
    expect(versionIn('2.1.300 (Claude Code)\n')).toBe('2.1.300');
    expect(versionIn('claude: command not found')).toBeUndefined();
  });

  it('runs the pinned one by default, all in CI, and any listed ones when asked', () => {
    expect(selectedClaudeVersions({})).toEqual([PINNED_CLAUDE_VERSION]);
    expect(selectedClaudeVersions({ CI: 'true' })).toEqual([...CLAUDE_VERSIONS]);
    expect(selectedClaudeVersions({ CI: 'true', FLUME_CLAUDE_VERSIONS: '2.1.250' })).toEqual(['2.1.250']);
    expect(selectedClaudeVersions({ FLUME_CLAUDE_VERSIONS: 'all' })).toEqual([...CLAUDE_VERSIONS]);
    expect(() => selectedClaudeVersions({ FLUME_CLAUDE_VERSIONS: '2.1.999' })).toThrow(/2\.1\.999/);
  });

  it('keeps node_modules/.bin/claude the pinned one, though the older versions are installed beside it', () => {
    const bin = join(import.meta.dirname, '../../../node_modules/.bin/claude');
    if (!existsSync(bin)) return;
    expect(readFileSync(join(bin, '../../@anthropic-ai/claude-code/package.json'), 'utf8')).toContain(`"version": "${PINNED_CLAUDE_VERSION}"`);
    expect(readlinkSync(bin)).toMatch(/@anthropic-ai\/claude-code\/bin\/claude\.exe$/);
  });
});

describe.each(captured)('what Claude Code %s showed', (version) => {
  const patterns = patternsFor(version);
  const dir = join(FIXTURES, `claude-${version}`, 'screens');
  const files = readdirSync(dir).filter((f) => f.endsWith('.txt'));

  it('has every screen flume reads (input box, working, permission, question, trust)', () => {
    for (const name of ['idle', 'draft', 'working', 'permission-bash', 'question-single', 'trust-dialog']) expect(files).toContain(`${name}.txt`);
  });

  it.each(files)('%s', (file) => {
    const name = file.replace(/(\.ansi)?\.txt$/, '');
    const expected = SCREENS[name];
    expect(expected, `no expectation for ${name}`).toBeDefined();
    const screen = readFileSync(join(dir, file), 'utf8');
    expect(classifyScreen(screen, patterns)).toBe(expected![0]);
    expect(draftText(screen, patterns)).toBe(expected![1]);
  });
});

describe.each(captured)('what Claude Code %s wrote', (version) => {
  const patterns = patternsFor(version);
  const dir = join(FIXTURES, `claude-${version}`, 'transcripts');

  it.each(readdirSync(dir).filter((f) => f.endsWith('.jsonl')))('%s: every prompt typed is found taken', async (file) => {
    const name = file.replace(/\.jsonl$/, '');
    const prompts = PROMPTS[name];
    expect(prompts, `no prompts listed for ${name}`).toBeDefined();
    for (const prompt of prompts!) expect(await findPrompt(join(dir, file), prompt, undefined, patterns), prompt.slice(0, 40)).toBe('taken');
    expect(await findPrompt(join(dir, file), 'a prompt nobody typed', undefined, patterns)).toBe('not-yet');
    for (const prompt of CANCELLED[name] ?? []) expect(await findPrompt(join(dir, file), prompt, undefined, patterns), `cancelled: ${prompt}`).toBe('not-yet');
    // What the agent said is no prompt, though it is text in the same file.
    for (const said of assistantTexts(join(dir, file)).filter((text) => !prompts!.includes(text))) {
      expect(await findPrompt(join(dir, file), said, undefined, patterns), `said: ${said.slice(0, 40)}`).toBe('not-yet');
    }
    const end = ENDS[name];
    if (end) expect(await readState(join(dir, file), { patterns })).toMatchObject(end.state === 'idle' ? { ...end, turnEnded: true } : end);
  });
});

describe('a prompt whose line came late (2.1.250, 2.1.300)', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 11, 0, s)).toISOString();
  const prompt = (s: number, text: string) => ({ type: 'user', uuid: `u${s}`, timestamp: at(s), message: { role: 'user', content: text } });
  const ask = (s: number) => ({ type: 'assistant', uuid: `a${s}`, timestamp: at(s), message: { id: `m${s}`, content: [{ type: 'tool_use', id: 'toolu_1', name: 'AskUserQuestion', input: { questions: [{ question: 'Which fruit?' }] } }], stop_reason: 'tool_use' } });
  const say = (s: number, text: string) => ({ type: 'assistant', uuid: `a${s}`, timestamp: at(s), message: { id: `m${s}`, content: [{ type: 'text', text }], stop_reason: 'end_turn' } });
  const end = (s: number) => ({ type: 'system', subtype: 'turn_duration', uuid: `e${s}`, timestamp: at(s) });
  const read = async (version: string, lines: object[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'flume-late-'));
    try {
      const path = join(dir, 't.jsonl');
      writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      return await readState(path, { patterns: patternsFor(version) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('belongs to the turn written before it: an open question is still asked', async () => {
    // As 2.1.250 wrote it in the e2e run: the question's line, then the prompt that led to it.
    expect(await read('2.1.250', [ask(2), prompt(1, 'Pick a fruit with me.')])).toMatchObject({ state: 'asking', needs: 'Which fruit?' });
    expect(await read('2.1.300', [say(2, 'Hello.'), end(3), prompt(1, 'Say hello.')])).toMatchObject({ state: 'idle', needs: 'Hello.' });
    // 2.1.332 was never seen doing it: its row reads the line where it stands.
    expect(await read('2.1.332', [ask(2), prompt(1, 'Pick a fruit with me.')])).toMatchObject({ state: 'working' });
  });

  it('is a new turn when it is newer than what came before it', async () => {
    expect(await read('2.1.250', [say(1, 'Hello.'), end(2), prompt(5, 'And now?')])).toMatchObject({ state: 'working' });
    expect(await read('2.1.250', [prompt(1, 'First.')])).toMatchObject({ state: 'working' });
  });
});

describe.each(captured)('a prompt cancelled with Esc before any reply (Claude Code %s)', (version) => {
  const patterns = patternsFor(version);
  const file = join(FIXTURES, `claude-${version}`, 'transcripts', 'queued-and-interrupted.jsonl');
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const cut = lines.findIndex((line) => line.includes('A prompt after the interrupt.') && JSON.parse(line).type === 'user');

  it('is the open last prompt until the next one comes, which leaves it a dead branch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flume-cancelled-'));
    try {
      // The file as it stood between the Esc and the next prompt: the cancelled line and bookkeeping.
      const before = join(dir, 'before.jsonl');
      writeFileSync(before, lines.slice(0, cut).join('\n') + '\n');
      expect(await readState(before, { patterns })).toMatchObject({ state: 'working', openPrompt: 'This one is interrupted.' });
      // The file alone cannot tell it from a live prompt yet: the driver looks at the input box.
      expect(await findPrompt(before, 'This one is interrupted.', undefined, patterns)).toBe('taken');
      expect(await findPrompt(file, 'This one is interrupted.', undefined, patterns)).toBe('not-yet');
      // Answered prompts are never open.
      expect((await readState(file, { patterns })).openPrompt).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a session\'s first prompt cancelled with Esc before any reply', () => {
  it('is a dead branch at the root: the next prompt has the same null parent (as 2.1.332 wrote in the e2e run)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flume-root-'));
    try {
      const path = join(dir, 't.jsonl');
      const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 12, 0, s)).toISOString();
      const lines = [
        { type: 'user', uuid: 'u1', parentUuid: null, timestamp: at(1), message: { role: 'user', content: 'Cancelled first.' } },
        { type: 'user', uuid: 'u2', parentUuid: null, timestamp: at(5), message: { role: 'user', content: 'Then this.' } },
        { type: 'assistant', uuid: 'a2', parentUuid: 'u2', timestamp: at(6), message: { id: 'm2', content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' } },
      ];
      writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      expect(await findPrompt(path, 'Cancelled first.')).toBe('not-yet');
      expect(await findPrompt(path, 'Then this.')).toBe('taken');
      // Records that carry no parent field at all (hand-made, very old builds) are never a fork.
      writeFileSync(path, lines.map(({ parentUuid: _p, ...l }) => JSON.stringify(l)).join('\n') + '\n');
      expect(await findPrompt(path, 'Cancelled first.')).toBe('taken');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The text blocks of a transcript's main-chain assistant lines. */
function assistantTexts(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((rec) => rec.type === 'assistant' && rec.isSidechain !== true && Array.isArray(rec.message?.content))
    .flatMap((rec) => rec.message.content.filter((b: any) => b.type === 'text' && b.text?.trim()).map((b: any) => String(b.text)));
}
