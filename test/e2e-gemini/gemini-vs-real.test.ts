/**
 * What the Gemini CLI driver reads, pinned against the real Gemini CLI 0.61.0: the screens
 * agents/gemini/screen.ts classifies and the chat lines agents/gemini/chat.ts reads, produced by the
 * real program in a pane against the scripted Gemini API, started as the driver starts it (its own
 * session id, flume's trust and approval flags). Run inside the network namespace.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { promptState, readChat, readUsage } from '../../agents/gemini/chat.js';
import { askedFor, classifyScreen, draftText, sameDraft } from '../../agents/gemini/screen.js';
import { descendantsOf, processRunning } from '../../core/index.js';
import { geminiEnv, startGeminiPane, GEMINI_MODEL, GEMINI_VERSION, type GeminiEnv, type GeminiPane } from '../helpers/gemini-env.js';
import { lastParts, lastUserText, shell, type ReplyLike } from '../helpers/gemini-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { makeRepo, remove } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

/** How long after typed text shows Enter is pressed, as the driver waits (core/drivers/driving.ts `typeWhole`). */
const ENTER_AFTER_MS = 250;

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function start(script: ReplyLike[], args: string[] = ['--skip-trust']): Promise<{ env: GeminiEnv; pane: GeminiPane; repo: string }> {
  const env = await geminiEnv({ script });
  const repo = makeRepo();
  cleanups.push(() => env.cleanup(), () => remove(repo));
  const pane = await startGeminiPane(env, repo, args);
  cleanups.push(() => pane.stop());
  return { env, pane, repo };
}

/** The chat read until `until` holds of it. */
async function chatUntil(pane: GeminiPane, until: (chat: NonNullable<Awaited<ReturnType<typeof readChat>>>) => boolean, what: string) {
  return waitFor(async () => {
    const path = await pane.chat();
    const chat = path ? await readChat(path) : undefined;
    return chat && until(chat) ? chat : undefined;
  }, `the chat to show ${what}`).catch(async (error: Error) => {
    throw new Error(`${error.message}: ${JSON.stringify(await pane.lines()).slice(-2000)}`);
  });
}

describe(`the real Gemini CLI ${GEMINI_VERSION}, as the driver reads it`, () => {
  it('asks whether to trust a folder it was not told to trust; --skip-trust trusts it for the session alone', async () => {
    const { pane, env } = await start([], []);
    const screen = await pane.waitForScreen(/Do you trust the files in this folder\?/);
    expect(screen).toMatch(/1\. Trust folder \(/);
    expect(classifyScreen(screen)).toBe('trust');
    const trusted = await startGeminiPane(env, pane.cwd, ['--skip-trust']);
    cleanups.push(() => trusted.stop());
    const ready = await trusted.waitForScreen(/Type your message/);
    expect(classifyScreen(ready)).toBe('input-ready');
    expect(existsSync(join(env.home, '.gemini', 'trustedFolders.json'))).toBe(false);
  });

  it('shows and records what the driver reads: the input box, a draft, a turn with its tokens, an approval, a cancel', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const { pane, env } = await start([
      { text: 'First answer.', until: held, usage: { promptTokenCount: 500, cachedContentTokenCount: 100, candidatesTokenCount: 30, thoughtsTokenCount: 5 } },
      shell('touch ../outside.txt'),
    ]);

    // The input box with its placeholder: ready, no draft. The chat is written from the start, under the session id given.
    const ready = await pane.waitForScreen(/Type your message or @path\/to\/file/);
    expect(classifyScreen(ready)).toBe('input-ready');
    expect(draftText(ready)).toBe('');
    const path = await waitFor(() => pane.chat(), 'the chat file');
    expect(path).toMatch(new RegExp(`/\\.gemini/tmp/[^/]+/chats/session-[0-9T-]+-${pane.sessionId.slice(0, 8)}\\.jsonl$`));
    const first = (await pane.lines())[0]!;
    expect(first).toMatchObject({ sessionId: pane.sessionId, kind: 'main' });
    expect((await readChat(path!))!.prompts).toEqual([]);

    // A draft shows in the box, one line or several, and is not taken.
    const since = new Date().toISOString();
    pane.type('Say hello.');
    const typed = await pane.waitForScreen(/^ > Say hello\./m);
    expect(draftText(typed)).toBe('Say hello.');
    expect(promptState(await readChat(path!), 'Say hello.', since)).toBe('not-yet');

    // Submitted: the prompt is the chat's user message; the turn works until the reply comes.
    await sleep(ENTER_AFTER_MS);
    pane.keys('Enter');
    const asked = await env.api.waitForRequest(1);
    expect(lastUserText(asked)).toBe('Say hello.');
    const working = await pane.waitForScreen(/esc to cancel/);
    expect(classifyScreen(working)).toBe('working');
    const busy = await chatUntil(pane, (chat) => chat.prompts.length === 1, 'the prompt');
    expect(busy.prompts[0]).toMatchObject({ text: 'Say hello.' });
    expect(busy.working).toBe(true);
    expect(promptState(busy, 'Say hello.', since)).toBe('taken');
    release();

    // The reply ends the turn; its tokens are the chat's (input with cached inside, thoughts apart).
    const ended = await chatUntil(pane, (chat) => chat.turnEnded, 'the turn ended');
    expect(ended).toMatchObject({ working: false, aborted: false, lastText: 'First answer.' });
    const reply = (await pane.lines()).find((line) => line.type === 'gemini');
    expect(reply).toMatchObject({ content: 'First answer.', model: GEMINI_MODEL, tokens: { input: 500, cached: 100, output: 30, thoughts: 5 } });
    expect((await readUsage(path!))?.usage).toEqual({ models: { [GEMINI_MODEL]: { input: 400, cacheRead: 100, cacheWrite: 0, output: 35 } }, replies: 1 });
    expect(classifyScreen(await pane.waitForScreen(/✦ First answer\.[\s\S]*Type your message/))).toBe('input-ready');

    // A shell command in the default approval mode: a dialog that hides the input box and names the command; the
    // chat holds the reply that calls it with no text and no calls yet.
    pane.type('Touch a file outside.');
    await pane.waitForScreen(/^ > Touch a file outside\./m);
    await sleep(ENTER_AFTER_MS);
    pane.keys('Enter');
    const dialog = await pane.waitForScreen(/Allow execution of/);
    expect(dialog).toMatch(/1\. Allow once/);
    expect(classifyScreen(dialog)).toBe('permission');
    expect(askedFor(dialog)).toEqual({ tool: 'Shell', what: 'touch ../outside.txt' });
    expect(draftText(dialog)).toBe('');
    const pending = await chatUntil(pane, (chat) => chat.prompts.length === 2, 'the second prompt');
    expect(pending).toMatchObject({ working: true, turnEnded: false });

    // Esc refuses it: the turn is cancelled, and the chat takes the turn back (its list set anew) yet
    // keeps the prompt on record; the tokens of the refused call's reply are counted once.
    pane.keys('Escape');
    const cancelled = await chatUntil(pane, (chat) => chat.aborted, 'the cancel');
    expect(cancelled).toMatchObject({ working: false, turnEnded: true });
    expect(cancelled.prompts.map((p) => p.text)).toEqual(['Say hello.', 'Touch a file outside.']);
    // The list set anew comes a moment after the cancel is on record (and after flume reads the turn as
    // ended): waited for, then the lines before it read.
    const lines = await waitFor(async () => ((all) => (all.at(-1)?.$set?.messages ? all : undefined))(await pane.lines()), 'the chat to set its list anew');
    expect(lines.some((line) => line.type === 'gemini' && line.toolCalls?.[0]?.status === 'cancelled')).toBe(true);
    expect(lines.some((line) => line.type === 'info' && /Request cancelled/.test(String(line.content)))).toBe(true);
    // Before it, the history it keeps is written again: the earlier reply as a list of parts, read as no reply.
    expect(lines.some((line) => line.type === 'gemini' && Array.isArray(line.content))).toBe(true);
    expect((await readUsage(path!))?.usage.replies).toBe(2);
    expect(classifyScreen(await pane.waitForScreen(/Request cancelled[\s\S]*Type your message/))).toBe('input-ready');
    expect(env.api.requests).toHaveLength(2);
    expect(lastUserText(env.api.requests[1]!)).toBe('Touch a file outside.');
    // The first prompt of a session goes to the model after Gemini's own context, in the same content.
    expect(lastParts(env.api.requests[0]!).map((part) => String(part.text).slice(0, 17))).toEqual(['<session_context>', 'Say hello.']);
  });

  it('takes a long paste whole, shown folded or by its last ten lines; two Ctrl-C quit it, the program it restarted itself as too', async () => {
    const { pane } = await start(['Pasted.']);
    await pane.waitForScreen(/Type your message/);
    const text = Array.from({ length: 20 }, (_, i) => `Line ${i + 1} of the paste.`).join('\n');
    // As flume's tmux host types text with newlines: a bracketed paste. Gemini folds it, or shows the
    // box's last ten lines (both seen on this machine, by how the paste arrived).
    pane.paste(text);
    const shown = await pane.waitForScreen(/\[Pasted Text: \d+ lines\]|^ {3}Line 20 of the paste\./m);
    const draft = draftText(shown);
    expect(draft === '[Pasted Text: 20 lines]' || draft === text.split('\n').slice(10).join('\n'), draft).toBe(true);
    expect(sameDraft(draft, text)).toBe(true);
    // As the driver does: Enter a moment after the paste shows (one pressed at once, while Gemini still
    // takes the paste, was lost on a loaded machine).
    await sleep(ENTER_AFTER_MS);
    pane.keys('Enter');
    const chat = await chatUntil(pane, (c) => c.turnEnded, 'the pasted turn');
    expect(chat.prompts.map((p) => p.text)).toEqual([text]);
    const pids = [pane.pid(), ...descendantsOf(pane.pid())];
    expect(pids.length).toBeGreaterThan(1);
    pane.keys('C-c');
    await new Promise((resolve) => setTimeout(resolve, 150));
    pane.keys('C-c');
    expect(await waitFor(() => !pane.alive(), 'the pane to end')).toBe(true);
    const left = () => pids.filter((pid) => processRunning(pid)).map((pid) => `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
    await waitFor(() => left().length === 0, 'every process of it to end').catch((error: Error) => {
      throw new Error(`${error.message}; still running: ${left().join('; ')}`);
    });
  });

  it('in yolo mode marks its input box `*`, after the mode\'s line and a blank one', async () => {
    const { pane } = await start([], ['--skip-trust', '--approval-mode', 'yolo']);
    const ready = await pane.waitForScreen(/^ \* {3}Type your message/m);
    expect(ready).toMatch(/YOLO Ctrl\+Y\n\n \* /);
    expect(classifyScreen(ready)).toBe('input-ready');
    pane.type('A yolo draft.');
    expect(draftText(await pane.waitForScreen(/^ \* A yolo draft\./m))).toBe('A yolo draft.');
  });

  it('exits at once on an option it does not know', async () => {
    const { pane } = await start([], ['--conformance-never-up']);
    expect(await waitFor(() => !pane.alive(), 'the pane to end')).toBe(true);
    // Its help, then the refusal (its exit status is 1, or, some runs, it ends by a signal).
    expect(pane.history(200)).toMatch(/Unknown arguments: conformance-never-up/);
    expect([1, undefined]).toContain(pane.exitStatus());
  });
});
