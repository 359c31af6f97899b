import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { run, which } from '../../core/support/exec.js';
import { FAKE_CLAUDE, fakeClaude, readRecords, waitFor, type FakeClaudeOptions, type FakeScript } from '../helpers/fake-claude/index.js';
import { remove } from '../helpers/repo.js';

// The box's `❯` is followed by a no-break space, as 2.1.332 draws it; the footer's second render
// (`← for agents`) says keys are taken (an Enter before it is lost).
const IDLE = /\n─{20,}\n❯\u00a0(.*)\n─{20,}\n {2}⏸ manual mode on · \? for shortcuts · ← for agents\n/;
const SPINNER = /^[·✢✳✶✻✽] [A-Z][a-z]+ing… \(\d+s · ↓ \d+ tokens\)$/m;
type Rec = Record<string, any>;
const prompts = (records: Rec[]) => records.filter((r) => r.type === 'user' && typeof r.message.content === 'string').map((r) => r.message.content);
const turnEnds = (records: Rec[]) => records.filter((r) => r.type === 'system' && r.subtype === 'turn_duration');
const texts = (records: Rec[]) => records.filter((r) => r.type === 'assistant' && r.message.content[0].type === 'text').map((r) => r.message.content[0].text);
const toolUse = (records: Rec[], name: string) => records.find((r) => r.type === 'assistant' && r.message.content[0].name === name)?.message.content[0];
const resultFor = (records: Rec[], id: string) => records.find((r) => r.type === 'user' && Array.isArray(r.message.content) && r.message.content[0].tool_use_id === id);
const readJson = (path: string) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined);

describe.skipIf(!which('tmux'))('fake-claude in a tmux pane', () => {
  let root: string;
  let socket: string;
  let host: ReturnType<typeof tmuxHost>;
  let cases = 0;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flume-fake-'));
    socket = join(root, 'tmux.sock');
    host = tmuxHost({ socket });
  });

  afterAll(async () => {
    await killTmuxServer(socket);
    remove(root);
  });

  async function start(script?: FakeScript, more: Partial<FakeClaudeOptions> = {}) {
    const dir = join(root, `case-${++cases}`);
    const cwd = join(dir, 'the_work.place');
    mkdirSync(cwd, { recursive: true });
    const session = fakeClaude({ configDir: join(dir, 'config'), cwd, script, ...more });
    const opened = await host.open(session.spec);
    const pane = opened.pane!;
    const fake = {
      ...session,
      pane,
      pid: opened.pid!,
      dir,
      cwd,
      screen: async () => (await host.capture(pane)) ?? '',
      records: () => readRecords(session.transcriptPath),
      state: () => readJson(session.statePath(opened.pid!)),
      waitScreen: (pattern: RegExp, what: string) => waitFor(async () => pattern.exec(await fake.screen()), what),
      waitRecords: (test: (records: Rec[]) => unknown, what: string) => waitFor(() => (test(fake.records()) ? fake.records() : undefined), what),
      send: async (text: string) => {
        await host.type(pane, text);
        await sleep(150);
        await host.keys(pane, ['Enter']);
      },
    };
    return fake;
  }

  it('takes a typed prompt: input box, state file, transcript made at the first prompt, two Ctrl-C exit', async () => {
    const fake = await start();
    await fake.waitScreen(IDLE, 'input box');
    expect(fake.state()).toMatchObject({ pid: fake.pid, sessionId: fake.sessionId, cwd: fake.cwd, status: 'idle' });
    expect(existsSync(fake.transcriptPath)).toBe(false);
    await fake.send('hello there; it is "me"');
    const records = await fake.waitRecords((r) => turnEnds(r).length, 'end of turn');
    const [prompt, reply, end] = records.filter((r) => r.uuid);
    expect(prompt).toMatchObject({ type: 'user', parentUuid: null, sessionId: fake.sessionId, cwd: fake.cwd, version: '2.1.332', promptSource: 'typed', origin: { kind: 'human' }, message: { role: 'user', content: 'hello there; it is "me"' } });
    expect(prompt.isMeta).toBeUndefined();
    expect(reply).toMatchObject({ type: 'assistant', parentUuid: prompt.uuid, message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' } });
    expect(end).toMatchObject({ type: 'system', subtype: 'turn_duration', parentUuid: reply.uuid });
    expect(records.map((r) => r.type)).toEqual(expect.arrayContaining(['file-history-snapshot', 'last-prompt']));
    const screen = await fake.screen();
    expect(screen).toContain('\n❯ hello there; it is "me"\n');
    expect(screen).toContain('\n● ok\n');
    await host.keys(fake.pane, ['C-c', 'C-c']);
    await waitFor(async () => !(await host.alive(fake.pane)), 'exit');
    expect(fake.state()).toBeUndefined();
  });

  it('refuses a bad command line or script as Claude Code refuses one', async () => {
    const configDir = join(root, 'refusals');
    const sessionId = 'b6f1e0a2-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
    mkdirSync(join(configDir, 'projects', 'x'), { recursive: true });
    writeFileSync(join(configDir, 'projects', 'x', `${sessionId}.jsonl`), '');
    const script = join(configDir, 'bad-script.json');
    writeFileSync(script, JSON.stringify({ onPrompt: [{ actions: [{ sya: 'typo' }] }] }));
    const fake = (args: string[], env: Record<string, string> = {}) =>
      run(process.execPath, [FAKE_CLAUDE, ...args], { clean: true, env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: configDir, ...env } });
    const cases: Array<[string[], RegExp, Record<string, string>?]> = [
      [['--session-id', 'not-a-uuid'], /Invalid session ID/],
      [['--session-id', sessionId], /already in use/],
      [['--session-id', '0b6f1e0a-3c4d-4e5f-8a9b-0c1d2e3f4a5b', '--bogus'], /unknown option '--bogus'/],
      [['--permission-mode', 'yolo'], /argument 'yolo' is invalid/],
      [[], /needs exactly one of/, { FAKE_CLAUDE_SCRIPT: script }],
    ];
    if (process.getuid?.() === 0) cases.push([['--permission-mode', 'bypassPermissions'], /root\/sudo/]);
    for (const [args, message, env] of cases) {
      const result = await fake(args, env);
      expect(result.exitCode, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(message);
    }
  });

  it('starts slowly, and what is typed before its input box shows is lost', async () => {
    const began = Date.now();
    const fake = await start({ startDelayMs: 1500 });
    await fake.send('too early');
    expect(IDLE.test(await fake.screen())).toBe(false);
    await fake.waitScreen(IDLE, 'input box');
    expect(Date.now() - began).toBeGreaterThanOrEqual(1400);
    expect(await fake.screen()).not.toContain('too early');
    await fake.send('in time');
    const records = await fake.waitRecords((r) => turnEnds(r).length, 'end of turn');
    expect(prompts(records)).toEqual(['in time']);
  });

  it('drops the first input: the typed text vanishes and nothing is recorded', async () => {
    const fake = await start({ dropInputs: 1 });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('first try');
    await sleep(500);
    expect(existsSync(fake.transcriptPath)).toBe(false);
    expect(IDLE.exec(await fake.screen())?.[1].trim()).toBe('');
    await fake.send('second try');
    expect(prompts(await fake.waitRecords((r) => turnEnds(r).length, 'end of turn'))).toEqual(['second try']);
  });

  it('works behind a spinner, runs a command in its folder, and queues a prompt typed while busy', async () => {
    const fake = await start({
      onPrompt: [{ match: '^commit', actions: [{ say: 'Committing now.' }, { sleepMs: 2500 }, { run: ['sh', '-c', 'echo done > out.txt && echo wrote it'] }, { say: 'Committed.' }] }],
    });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('commit please');
    await fake.waitScreen(SPINNER, 'spinner');
    // The state file lags the screen (stateLagMs, 250 ms by default as 2.1.332).
    await waitFor(() => fake.state()?.status === 'busy', 'busy state');
    await fake.send('and then this');
    const queued = await fake.waitRecords((r) => r.some((x) => x.type === 'queue-operation' && x.operation === 'enqueue'), 'enqueue');
    expect(queued.find((x) => x.type === 'queue-operation')).toMatchObject({ operation: 'enqueue', content: 'and then this', sessionId: fake.sessionId });
    // As 2.1.332: the queued prompt echoed above the spinner, the box showing a dim placeholder.
    expect(await fake.screen()).toMatch(/\n❯ and then this\n {2}⎿ {2}Queued · ctrl\+x ctrl\+s to send now\n/);
    expect(await fake.screen()).toMatch(/\n❯\u00a0Press up to edit queued messages\n/);
    const records = await fake.waitRecords((r) => turnEnds(r).length === 2, 'two turns');
    expect(readFileSync(join(fake.cwd, 'out.txt'), 'utf8')).toBe('done\n');
    expect(prompts(records)).toEqual(['commit please', 'and then this']);
    const [say, use] = records.filter((r) => r.type === 'assistant');
    expect(say.message).toMatchObject({ content: [{ type: 'text', text: 'Committing now.' }], stop_reason: null });
    expect(use.message).toMatchObject({ id: say.message.id, content: [{ type: 'tool_use', name: 'Bash' }], stop_reason: 'tool_use' });
    expect(resultFor(records, use.message.content[0].id)?.message.content[0]).toMatchObject({ type: 'tool_result', content: 'wrote it' });
    expect(texts(records)).toEqual(['Committing now.', 'Committed.', 'ok']);
    expect(records.findIndex((r) => r.operation === 'dequeue')).toBeLessThan(records.findIndex((r) => r.message?.content === 'and then this'));
    await waitFor(() => fake.state()?.status === 'idle', 'idle state');
  });

  it('Esc interrupts a working turn', async () => {
    const fake = await start({ onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 20_000 }, { say: 'Done.' }] }] });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('go');
    await fake.waitScreen(SPINNER, 'spinner');
    await host.keys(fake.pane, ['Escape']);
    const records = await fake.waitRecords((r) => r.some((x) => x.message?.content?.[0]?.text === '[Request interrupted by user]'), 'interruption');
    expect(texts(records)).toEqual(['On it.']);
    expect(turnEnds(records)).toHaveLength(0);
    await fake.waitScreen(IDLE, 'input box again');
  });

  it('Esc before the first reply cancels the turn as 2.1.332 does: a dead branch, the prompt back in its box', async () => {
    const fake = await start({ onPrompt: [{ match: 'slow', actions: [{ sleepMs: 20_000 }, { say: 'Too late.' }] }, { actions: [{ say: 'Answered.' }] }] });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('first');
    await fake.waitRecords((r) => turnEnds(r).length === 1, 'first turn');
    await fake.send('a slow one');
    await fake.waitScreen(SPINNER, 'spinner');
    await host.keys(fake.pane, ['Escape']);
    // (The box's `❯` may be followed by a no-break space, as in 2.1.332.)
    await fake.waitScreen(/^❯[ \u00a0]a slow one$/m, 'the prompt back in the box');
    await waitFor(() => fake.state()?.status === 'idle', 'idle state');
    let records = fake.records();
    // No interrupted line, no turn end, no reply: only the prompt's own line stays.
    expect(records.some((r) => JSON.stringify(r.message?.content ?? '').includes('[Request interrupted'))).toBe(false);
    expect(turnEnds(records)).toHaveLength(1);
    // Only the box holds it: its echo above is gone.
    expect((await fake.screen()).split('a slow one').length - 1).toBe(1);
    await host.keys(fake.pane, ['C-u']);
    await fake.send('next');
    records = await fake.waitRecords((r) => turnEnds(r).length === 2, 'the next turn');
    const chained = records.filter((r) => r.uuid);
    const cancelled = chained.find((r) => r.message?.content === 'a slow one');
    const next = chained.find((r) => r.message?.content === 'next');
    // The next prompt takes the cancelled one's parent, so the cancelled one is a dead branch.
    expect(next.parentUuid).toBe(cancelled.parentUuid);
    expect(chained.some((r) => r.parentUuid === cancelled.uuid)).toBe(false);
    expect(texts(records)).toEqual(['Answered.', 'Answered.']);
  });

  it('writes its state file as 2.1.332 does, late: the dialog is on screen before the file says waiting', async () => {
    const fake = await start({ stateLagMs: 3000, onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }, { say: 'Deleted.' }] }] });
    await fake.waitScreen(IDLE, 'input box');
    // The first write (idle at start) is at once, in the real file's shape.
    expect(fake.state()).toMatchObject({ pid: fake.pid, sessionId: fake.sessionId, cwd: fake.cwd, version: '2.1.332', kind: 'interactive', entrypoint: 'cli', status: 'idle' });
    expect(fake.state().waitingFor).toBeUndefined();
    await fake.send('delete the build');
    await fake.waitScreen(/Do you want to proceed\?/, 'permission prompt');
    expect(fake.state().status).not.toBe('waiting');
    const waiting = await waitFor(() => fake.state()?.status === 'waiting' && fake.state(), 'waiting state');
    expect(waiting).toMatchObject({ waitingFor: 'permission prompt' });
    expect(waiting.statusUpdatedAt).toBe(waiting.updatedAt);
  });

  it('asks a question in a dialog; text typed there never reaches it; a digit answers it', async () => {
    const fake = await start({
      onPrompt: [{ actions: [{ ask: { question: 'Which database?', header: 'Database', options: ['Postgres', { label: 'SQLite', description: 'one file' }] } }, { say: 'Using {answer}.' }] }],
    });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('set up storage');
    const screen = (await fake.waitScreen(/Enter to select · ↑\/↓ to navigate · Esc to cancel/, 'question dialog')).input;
    for (const line of ['☐ Database', 'Which database?', '1. Postgres', '2. SQLite', 'one file', '3. Type something.', '4. Chat about this']) expect(screen).toContain(line);
    expect(await waitFor(() => fake.state()?.status === 'waiting' && fake.state(), 'waiting state')).toMatchObject({ waitingFor: 'input needed' });
    const ask = toolUse(fake.records(), 'AskUserQuestion');
    expect(ask.input.questions[0]).toMatchObject({ question: 'Which database?', header: 'Database' });
    expect(resultFor(fake.records(), ask.id)).toBeUndefined();
    await host.type(fake.pane, 'hello');
    await sleep(300);
    expect(prompts(fake.records())).toEqual(['set up storage']);
    expect(fake.state()).toMatchObject({ status: 'waiting', waitingFor: 'input needed' });
    await host.type(fake.pane, '2');
    const records = await fake.waitRecords((r) => turnEnds(r).length, 'end of turn');
    expect(resultFor(records, ask.id)).toMatchObject({ toolUseResult: { answers: { 'Which database?': 'SQLite' } } });
    expect(texts(records)).toEqual(['Using SQLite.']);
    await waitFor(() => fake.state()?.status === 'idle', 'idle state');
  });

  it('shows a permission prompt: waiting, no line until answered, hooks told; Esc refuses, 1 allows', async () => {
    const hookDir = mkdtempSync(join(root, 'hooks-'));
    const hookFile = (event: string) => join(hookDir, `${event}.jsonl`);
    const hook = (event: string, matcher = '') => [{ matcher, hooks: [{ type: 'command', command: `cat >> '${hookFile(event)}'; echo >> '${hookFile(event)}'` }] }];
    const settings = { hooks: { UserPromptSubmit: hook('UserPromptSubmit'), Stop: hook('Stop'), Notification: hook('Notification', 'permission_prompt') } };
    const fake = await start(
      {
        notifyAfterMs: 300,
        onPrompt: [
          { match: 'delete', actions: [{ permission: { tool: 'Bash', command: 'rm -rf build' } }, { say: 'Deleted.' }] },
          { match: 'clean', actions: [{ permission: { tool: 'Bash', command: 'touch cleaned', run: ['touch', 'cleaned'] } }, { say: 'Cleaned.' }] },
        ],
      },
      { args: ['--settings', JSON.stringify(settings)] },
    );
    const hookLines = (event: string) => (existsSync(hookFile(event)) ? readFileSync(hookFile(event), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('delete the build');
    const screen = (await fake.waitScreen(/Do you want to proceed\?/, 'permission prompt')).input;
    for (const line of [' rm -rf build\n', ' ❯ 1. Yes\n', '   3. Yes, and switch to auto mode · auto mode handles these prompts for you\n', '   4. No\n', ' Esc to cancel · Tab to amend']) expect(screen).toContain(line);
    expect(await waitFor(() => fake.state()?.status === 'waiting' && fake.state(), 'waiting state')).toMatchObject({ waitingFor: 'permission prompt' });
    const use = toolUse(fake.records(), 'Bash');
    expect(resultFor(fake.records(), use.id)).toBeUndefined();
    const notified = await waitFor(() => hookLines('Notification')[0], 'Notification hook');
    expect(notified).toMatchObject({ hook_event_name: 'Notification', notification_type: 'permission_prompt', session_id: fake.sessionId, transcript_path: fake.transcriptPath, cwd: fake.cwd });
    expect(hookLines('UserPromptSubmit')[0]).toMatchObject({ prompt: 'delete the build', session_id: fake.sessionId });
    await host.keys(fake.pane, ['Escape']);
    let records = await fake.waitRecords((r) => r.some((x) => x.message?.content?.[0]?.text === '[Request interrupted by user for tool use]'), 'refusal');
    expect(resultFor(records, use.id)?.message.content[0]).toMatchObject({ is_error: true });
    expect(texts(records)).toEqual([]);
    await fake.waitScreen(IDLE, 'input box after refusal');
    await fake.send('clean up');
    await fake.waitScreen(/Do you want to proceed\?/, 'second permission prompt');
    await host.type(fake.pane, '1');
    records = await fake.waitRecords((r) => turnEnds(r).length, 'end of turn');
    expect(existsSync(join(fake.cwd, 'cleaned'))).toBe(true);
    expect(texts(records)).toEqual(['Cleaned.']);
    expect(hookLines('Stop')).toHaveLength(1);
  });

  it('takes a prompt given on its command line, and stops short saying what it needs', async () => {
    const fake = await start({ onPrompt: [{ actions: [{ say: 'I need the API key to go on.' }] }] }, { args: ['build the thing'] });
    const records = await fake.waitRecords((r) => turnEnds(r).length, 'end of turn');
    expect(prompts(records)).toEqual(['build the thing']);
    expect(records.filter((r) => r.type === 'assistant').map((r) => r.message.content[0])).toEqual([{ type: 'text', text: 'I need the API key to go on.' }]);
    await fake.waitScreen(IDLE, 'input box');
  });

  it('hangs: busy for ever, and Esc does not end it', async () => {
    const fake = await start({ onPrompt: [{ actions: [{ say: 'Starting.' }, { hang: true }] }] });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('go');
    await fake.waitScreen(SPINNER, 'spinner');
    await host.keys(fake.pane, ['Escape']);
    await sleep(1200);
    expect(SPINNER.test(await fake.screen())).toBe(true);
    expect(fake.state().status).toBe('busy');
    expect(turnEnds(fake.records())).toHaveLength(0);
  });

  it('crashes with a non-zero code, leaving its error on screen and its state file behind; exits cleanly on exit', async () => {
    const crash = await start({ onPrompt: [{ actions: [{ crash: 3 }] }] });
    const exit = await start({ onPrompt: [{ actions: [{ say: 'Bye.' }, { exit: 0 }] }] });
    for (const fake of [crash, exit]) {
      await fake.waitScreen(IDLE, 'input box');
      await fake.send('go');
      await waitFor(async () => !(await host.alive(fake.pane)), 'death');
    }
    // Each look through the host nudges a tmux that missed its pane's SIGCHLD (tmux/tmux#311), as
    // flume's own looks do: one nudge can come before the program is a zombie, and go unheeded.
    const status = async (pane: string) => (await host.alive(pane), run('tmux', ['-S', socket, 'display-message', '-p', '-t', pane, '#{pane_dead_status}']));
    await waitFor(async () => (await status(crash.pane)).stdout.trim() === '3', 'exit status 3');
    await waitFor(async () => (await status(exit.pane)).stdout.trim() === '0', 'exit status 0');
    expect(await crash.screen()).toContain('Error: fake-claude crashed');
    expect(existsSync(crash.statePath(crash.pid))).toBe(true);
    expect(existsSync(exit.statePath(exit.pid))).toBe(false);
  });

  it('leaves a draft in its box; takes typing, Backspace, Ctrl-U and pastes without submitting', async () => {
    const fake = await start({ onPrompt: [{ match: '^go$', actions: [{ say: 'ok' }, { draft: 'half typed' }] }] });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('go');
    await fake.waitScreen(/^❯\u00a0half typed$/m, 'draft');
    expect(prompts(fake.records())).toEqual(['go']);
    await host.type(fake.pane, ' more');
    await fake.waitScreen(/^❯\u00a0half typed more$/m, 'typing');
    await host.keys(fake.pane, ['BSpace', 'BSpace']);
    await fake.waitScreen(/^❯\u00a0half typed mo$/m, 'backspace');
    await host.keys(fake.pane, ['C-u']);
    await waitFor(async () => IDLE.exec(await fake.screen())?.[1].trim() === '', 'empty box');
    await host.type(fake.pane, 'line one\nline two');
    await fake.waitScreen(/^❯\u00a0line one\n {2}line two$/m, 'pasted lines');
    await sleep(200);
    expect(prompts(fake.records())).toEqual(['go']);
    await host.keys(fake.pane, ['Enter']);
    await fake.waitRecords((r) => prompts(r).length === 2, 'multi-line prompt');
    expect(prompts(fake.records())[1]).toBe('line one\nline two');
    // A paste of 4+ lines is a placeholder, its trailing newline dropped; recorded as 2.1.332 records it.
    const long = 'x\n'.repeat(500);
    await host.type(fake.pane, long);
    await fake.waitScreen(/^❯\u00a0\[Pasted text #1 \+499 lines\]$/m, 'long paste placeholder');
    await host.keys(fake.pane, ['Enter']);
    const records = await fake.waitRecords((r) => prompts(r).length === 3, 'long paste prompt');
    expect(prompts(records)[2]).toMatch(new RegExp(`^\\n\\n<pasted_content id="([0-9a-f]{4})">\\n${'x\\n'.repeat(499)}x\\n</pasted_content id="\\1">\\n$`));
  });

  it('shows the trust dialog for a folder not trusted (a bare Enter quits), and none for one trusted', async () => {
    const untrusted = await start({ trust: true });
    const screen = (await untrusted.waitScreen(/Quick safety check/, 'trust dialog')).input;
    // As 2.1.332: no numbers, `No, exit` first and under the cursor, so a bare Enter quits (status 1).
    expect(screen).toMatch(/\n ❯ No, exit\n {3}Yes, I trust this folder\n/);
    await host.keys(untrusted.pane, ['Enter']);
    await waitFor(async () => !(await host.alive(untrusted.pane)), 'exit');
    expect(await untrusted.screen()).toContain("Claude Code didn't start because this folder isn't trusted.");
    const configDir = join(root, 'trusted-config');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, '.claude.json'), JSON.stringify({ projects: { [root]: { hasTrustDialogAccepted: true } } }));
    const trusted = await start({ trust: true }, { configDir });
    await trusted.waitScreen(IDLE, 'input box');
  });

  it('writes its transcript late when told to lag', async () => {
    const fake = await start({ transcriptLagMs: 1000 });
    await fake.waitScreen(IDLE, 'input box');
    await fake.send('slow write');
    await fake.waitScreen(/^● ok$/m, 'reply on screen');
    expect(existsSync(fake.transcriptPath)).toBe(false);
    expect(prompts(await fake.waitRecords((r) => turnEnds(r).length, 'late transcript'))).toEqual(['slow write']);
  });
});
