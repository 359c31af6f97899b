/**
 * The fake draws and takes keys as the real Claude Code 2.1.332 does, wherever flume relies on it.
 * Each case drives fake-claude in a 200×50 tmux pane (the size of the captures) to the state of a
 * real capture in test/fixtures/claude-2.1.332, then reads both with flume's own screen reader
 * (classifyScreen, draftText): both must read alike, and as that capture's README says 2.1.332
 * shows it (a comparison alone would pass if a broken reader misread both the same way).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyScreen, draftText } from '../../agents/claude-code/screen.js';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { run, which } from '../../core/support/exec.js';
import { waitGone } from '../../core/support/process.js';
import { fakeClaude, readRecords, waitFor, type FakeClaudeOptions, type FakeScript } from '../helpers/fake-claude/index.js';
import { remove } from '../helpers/repo.js';

const REAL = join(import.meta.dirname, '../fixtures/claude-2.1.332');
/** Where the captures were taken; the fake's folder is put in its place before comparing lines. */
const REAL_CWD = '/tmp/flume-claude-FIXTURE/repo';
const real = (name: string) => readFileSync(join(REAL, 'screens', name), 'utf8');
const realPrompts = (name: string): string[] =>
  readFileSync(join(REAL, 'transcripts', name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((r) => r.type === 'user' && typeof r.message?.content === 'string')
    .map((r) => r.message.content);
const prompts = (path: string): string[] => readRecords(path).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content);
/** A paste's id is 4 hex digits of the session's own: the same shape, not the same digits. */
const sameId = (text: string) => text.replace(/id="[0-9a-f]{4}"/g, 'id="XXXX"');
const RULE = /^─{20,}$/;

/** The input box's line (`❯` and what follows) and the footer under the box, as drawn. */
function box(screen: string): { line: string; footer: string } | undefined {
  const lines = screen.split('\n');
  for (let i = lines.length - 1; i > 0; i--) {
    if (!lines[i]!.startsWith('❯') || !RULE.test(lines[i - 1]!)) continue;
    const bottom = lines.findIndex((line, j) => j > i && RULE.test(line));
    return { line: trimSpaces(lines[i]!), footer: trimSpaces(lines[bottom + 1] ?? '') };
  }
  return undefined;
}

/** Trailing spaces off, but not a no-break space (trimEnd would take the box's own). */
const trimSpaces = (line: string) => line.replace(/ +$/, '');
/** The screen lines matching `pattern` (a menu's options, say). */
const linesOf = (screen: string, pattern: RegExp) => screen.split('\n').filter((line) => pattern.test(line)).map(trimSpaces);

describe.skipIf(!which('tmux'))('fake-claude against the real 2.1.332 captures', () => {
  let root: string;
  let socket: string;
  let host: ReturnType<typeof tmuxHost>;
  let cases = 0;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flume-fake-real-'));
    socket = join(root, 'tmux.sock');
    host = tmuxHost({ socket });
  });

  afterAll(async () => {
    // The fakes write their session files as they exit: their folders are removed once they are gone.
    const listed = await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_pid}']);
    await killTmuxServer(socket);
    for (const pid of listed.stdout.split('\n').filter(Boolean).map(Number)) await waitGone(pid, 10_000);
    remove(root);
  });

  /** A fake in acceptEdits mode (as the captures, unless `mode` says otherwise), ready for keys. */
  async function start(script: FakeScript = {}, { mode = 'acceptEdits', ready = true, ...more }: Partial<FakeClaudeOptions> & { mode?: string; ready?: boolean } = {}) {
    const dir = join(root, `case-${++cases}`);
    const cwd = join(dir, 'repo');
    mkdirSync(cwd, { recursive: true });
    const session = fakeClaude({ configDir: join(dir, 'config'), cwd, script, args: ['--permission-mode', mode], ...more });
    const { pane } = await host.open(session.spec);
    const fake = {
      ...session,
      pane: pane!,
      cwd,
      screen: async () => ((await host.capture(pane!)) ?? '').split(cwd).join(REAL_CWD),
      waitScreen: (test: (screen: string) => boolean, what: string) => waitFor(async () => ((s) => (test(s) ? s : undefined))(await fake.screen()), what),
      /** Literal keys in one `send-keys -l`, as the captures typed them (a `\n` is typed, not pasted). */
      typeRaw: (text: string) => run('tmux', ['-S', socket, 'send-keys', '-t', pane!, '-l', '--', text]),
      /** Types and waits for the box to show it: as 2.1.332, an Enter before the text shows is lost. */
      typeShown: async (text: string) => {
        await fake.typeRaw(text);
        await fake.waitScreen((s) => draftText(s) === text, `${JSON.stringify(text)} in the box`);
      },
      prompts: () => prompts(session.transcriptPath),
    };
    if (ready) await fake.waitScreen((s) => box(s)?.footer.endsWith('← for agents') ?? false, 'the ready footer');
    return fake;
  }

  it('idle: the box is `❯` and a no-break space, the footer as 2.1.332 draws it once it takes keys', async () => {
    const fake = await start();
    const [mine, theirs] = [await fake.screen(), real('idle.txt')];
    expect(box(theirs)).toEqual({ line: '❯\u00a0', footer: '  ⏵⏵ accept edits on (shift+tab to cycle) · ← for agents' });
    expect(box(mine)).toEqual(box(theirs));
    expect([classifyScreen(mine), draftText(mine)]).toEqual([classifyScreen(theirs), draftText(theirs)]);
    expect(classifyScreen(theirs)).toBe('input-ready');
    const manual = await start({}, { mode: 'default' });
    expect(box(await manual.screen())).toEqual(box(real('idle-default-mode.txt')));
  });

  it('an Enter sent after the box shows but before the footer’s second render is lost, the text left in the box', async () => {
    const fake = await start({ footerReadyMs: 1500 }, { ready: false });
    const first = await fake.waitScreen((s) => box(s) !== undefined, 'the box');
    // The box's first frame: the footer without `← for agents`, as 2.1.332 draws it first.
    expect(box(first)).toEqual({ line: '❯\u00a0', footer: '  ⏵⏵ accept edits on (shift+tab to cycle)' });
    await fake.typeShown('Say hello.');
    await host.keys(fake.pane, ['Enter']);
    await sleep(400);
    const lost = await fake.screen();
    expect(box(lost)?.footer).toBe('  ⏵⏵ accept edits on (shift+tab to cycle)');
    expect(draftText(lost)).toBe('Say hello.');
    expect(fake.prompts()).toEqual([]);
    // Its second render is past (the draft in the box hides `← for agents`): now Enter submits.
    await sleep(1500);
    await host.keys(fake.pane, ['Enter']);
    await waitFor(() => fake.prompts().length === 1, 'the prompt');
    expect(fake.prompts()).toEqual(['Say hello.']);
  });

  it('an Enter sent before the typed text shows is lost, the text then shown in the box, unsent', async () => {
    const fake = await start({ echoMs: 1000 });
    await fake.typeRaw('Say hello early.');
    await host.keys(fake.pane, ['Enter']);
    const shown = await fake.waitScreen((s) => draftText(s) === 'Say hello early.', 'the text in the box');
    expect(classifyScreen(shown)).toBe('input-ready');
    await sleep(300);
    expect(fake.prompts()).toEqual([]);
    await host.keys(fake.pane, ['Enter']);
    await waitFor(() => fake.prompts().length === 1, 'the prompt');
    expect(fake.prompts()).toEqual(['Say hello early.']);
  });

  it('a draft: flume reads the text after the no-break space on both', async () => {
    const fake = await start();
    const text = 'a draft that is typed but not sent';
    await fake.typeRaw(text);
    const mine = await fake.waitScreen((s) => box(s)?.line.endsWith('sent') ?? false, 'the draft');
    const theirs = real('draft.txt');
    // A box holding text loses `← for agents` from its footer.
    expect(box(mine)).toEqual(box(theirs));
    expect(draftText(theirs)).toBe(text);
    expect(draftText(mine)).toBe(text);
    expect(classifyScreen(mine)).toBe(classifyScreen(theirs));
  });

  it('a multi-line draft typed in bursts, and the same lines pasted: a placeholder, recorded as 2.1.332 records it', async () => {
    const multi = ['Line one of a multi-line prompt.', 'Line two: with `code` and "quotes".', '', 'Line four after a blank line.', 'Line five.'].join('\n');
    const fake = await start();
    await fake.typeRaw(multi);
    const typed = await fake.waitScreen((s) => draftText(s).endsWith('Line five.'), 'the typed lines');
    expect(draftText(typed)).toBe(multi);
    expect(draftText(real('draft-multiline.txt'))).toBe(multi);
    await host.keys(fake.pane, ['Enter']);
    await waitFor(() => fake.prompts().length === 1, 'the typed prompt');
    // host.type pastes text holding a newline (paste-buffer -p), as the capture pasted it.
    await host.type(fake.pane, multi);
    const pasted = await fake.waitScreen((s) => /Pasted/.test(draftText(s)), 'the paste placeholder');
    const theirs = real('paste-placeholder.txt');
    expect(box(pasted)).toEqual({ line: '❯\u00a0[Pasted text #1 +4 lines]', footer: '  paste again to expand' });
    expect(box(pasted)).toEqual(box(theirs));
    expect(draftText(pasted)).toBe(draftText(theirs));
    await host.keys(fake.pane, ['Enter']);
    await waitFor(() => fake.prompts().length === 2, 'the pasted prompt');
    const recorded = realPrompts('typing-long-multiline-paste.jsonl');
    expect(fake.prompts()[0]).toBe(recorded[1]);
    expect(sameId(fake.prompts()[1]!)).toBe(sameId(recorded[2]!));
    // A burst of more than 800 characters is a paste too (#2 of the session); 800 stay typed, as do
    // three pasted lines.
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i} of a long prompt that goes on for a while.`).join(' ');
    await fake.typeRaw(long.slice(0, 1000));
    const burst = await fake.waitScreen((s) => /Pasted/.test(draftText(s)), 'the burst placeholder');
    expect(box(burst)).toEqual(box(real('burst-over-800-placeholder.txt')));
    await host.keys(fake.pane, ['Enter']);
    await waitFor(() => fake.prompts().length === 3, 'the burst prompt');
    expect(sameId(fake.prompts()[2]!)).toBe(sameId(recorded[3]!));
    await fake.typeRaw(long.slice(0, 800));
    await fake.waitScreen((s) => draftText(s) === long.slice(0, 800).trimEnd(), '800 characters typed');
    await host.keys(fake.pane, ['C-u']);
    await host.type(fake.pane, 'one\ntwo\nthree');
    await fake.waitScreen((s) => draftText(s) === 'one\ntwo\nthree', 'three pasted lines inline');
  });

  it('a prompt typed while working: echoed as queued above the spinner, the box showing its dim placeholder', async () => {
    const fake = await start({ onPrompt: [{ match: 'slow', actions: [{ sleepMs: 30_000 }] }] });
    await fake.typeShown('First, a slow one.');
    await host.keys(fake.pane, ['Enter']);
    await fake.waitScreen((s) => classifyScreen(s) === 'working', 'working');
    await fake.typeShown('Queued while busy.');
    await host.keys(fake.pane, ['Enter']);
    const mine = await fake.waitScreen((s) => /Queued ·/.test(s), 'the queued echo');
    const theirs = real('working-with-queued.txt');
    expect(box(mine)).toEqual({ line: '❯\u00a0Press up to edit queued messages', footer: '  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt · ← for agents' });
    expect(box(mine)).toEqual(box(theirs));
    const echo = /^❯ Queued while busy\.$|^ {2}⎿ {2}Queued · ctrl\+x ctrl\+s to send now$/;
    expect(linesOf(mine, echo)).toEqual(linesOf(theirs, echo));
    expect(linesOf(theirs, echo)).toHaveLength(2);
    // flume reads the placeholder as an empty box on both: a tell would not be refused for a draft.
    expect([classifyScreen(mine), draftText(mine)]).toEqual(['working', '']);
    expect([classifyScreen(theirs), draftText(theirs)]).toEqual(['working', '']);
  });

  it('a Bash permission prompt: four options; 3 allows, 4 refuses', async () => {
    const fake = await start(
      {
        onPrompt: [
          { match: 'allowed', actions: [{ permission: { command: 'touch allowed.txt', run: ['touch', 'allowed.txt'] } }, { say: 'Created it.' }] },
          { match: 'denied', actions: [{ permission: { command: 'touch denied-no.txt', run: ['touch', 'denied-no.txt'] } }, { say: 'never' }] },
        ],
      },
      { mode: 'default' },
    );
    await fake.typeShown('Create allowed.txt');
    await host.keys(fake.pane, ['Enter']);
    const mine = await fake.waitScreen((s) => classifyScreen(s) === 'permission', 'the permission prompt');
    const theirs = real('permission-bash.txt');
    const menu = /^ (?:❯| ) \d\. |^ Do you want to proceed\?$|^ Esc to cancel/;
    expect(linesOf(mine, menu)).toEqual(linesOf(theirs, menu));
    expect(linesOf(theirs, menu)).toHaveLength(6);
    expect(classifyScreen(theirs)).toBe('permission');
    await sleep(300);
    await host.type(fake.pane, '3');
    await waitFor(() => readRecords(fake.transcriptPath).some((r) => r.type === 'system' && r.subtype === 'turn_duration'), 'the allowed turn to end');
    const allowed = readRecords(fake.transcriptPath).find((r) => Array.isArray(r.message?.content) && r.message.content[0]?.type === 'tool_result');
    expect(allowed?.message.content[0]).toMatchObject({ type: 'tool_result', content: '(No content)' });
    expect(allowed?.message.content[0].is_error ?? false).toBe(false);
    await fake.typeShown('Create denied-no.txt');
    await host.keys(fake.pane, ['Enter']);
    await fake.waitScreen((s) => classifyScreen(s) === 'permission', 'the second permission prompt');
    await sleep(300);
    await host.type(fake.pane, '4');
    await waitFor(() => readRecords(fake.transcriptPath).some((r) => r.message?.content?.[0]?.text === '[Request interrupted by user for tool use]'), 'the refusal');
    await fake.waitScreen((s) => classifyScreen(s) === 'input-ready', 'the box again');
    expect(classifyScreen(real('permission-after-4-no.txt'))).toBe('input-ready');
    expect(readFileSync(join(fake.cwd, 'allowed.txt'), 'utf8')).toBe('');
    expect(() => readFileSync(join(fake.cwd, 'denied-no.txt'))).toThrow();
  });

  it('the trust dialog: `No, exit` first and under the cursor, no numbers; a bare Enter exits', async () => {
    const fake = await start({ trust: true }, { ready: false });
    const mine = await fake.waitScreen((s) => classifyScreen(s) === 'trust', 'the trust dialog');
    const theirs = real('trust-dialog.txt');
    const menu = /^ (?:❯| ) (?:No, exit|Yes, I trust this folder)$|^ Enter to confirm/;
    expect(linesOf(mine, menu)).toEqual(linesOf(theirs, menu));
    expect(linesOf(theirs, menu)).toEqual([' ❯ No, exit', '   Yes, I trust this folder', ' Enter to confirm · Esc to cancel']);
    await host.keys(fake.pane, ['Enter']);
    await waitFor(async () => !(await host.alive(fake.pane)), 'the exit');
    const after = /^Claude Code didn't start|^Run claude again/;
    expect(linesOf(await fake.screen(), after)).toEqual(linesOf(real('trust-dialog-after-enter.txt'), after));
    // Each look through the host nudges a tmux that missed its pane's SIGCHLD (tmux/tmux#311) into recording the status.
    const status = async () => (await host.alive(fake.pane), (await run('tmux', ['-S', socket, 'display-message', '-p', '-t', fake.pane, '#{pane_dead_status}'])).stdout.trim());
    expect(await waitFor(async () => (await status()) || undefined, 'the exit status')).toBe('1');
  });

  it('a question and the first Ctrl-C read as on the real screens', async () => {
    const fake = await start({ onPrompt: [{ actions: [{ ask: { question: 'Which database should we use?', header: 'Database', options: [{ label: 'Postgres', description: 'Relational, robust' }, { label: 'SQLite', description: 'A single file' }] } }, { say: 'Noted: {answer}.' }] }] });
    await fake.typeShown('Ask me which database.');
    await host.keys(fake.pane, ['Enter']);
    const mine = await fake.waitScreen((s) => classifyScreen(s) === 'question', 'the question');
    const theirs = real('question-single.txt');
    const menu = /^(?:❯| ) \d\. |^ {5}\S|^ ☐ |^Which database|^Enter to select/;
    expect(linesOf(mine, menu)).toEqual(linesOf(theirs, menu));
    expect(classifyScreen(theirs)).toBe('question');
    await sleep(300);
    await host.type(fake.pane, '2');
    await fake.waitScreen((s) => /Noted: SQLite/.test(s) && classifyScreen(s) === 'input-ready', 'the answer');
    await host.keys(fake.pane, ['C-c']);
    const once = await fake.waitScreen((s) => /Ctrl-C again/.test(s), 'the Ctrl-C note');
    expect(box(once)).toEqual(box(real('ctrl-c-once.txt')));
  });
});
