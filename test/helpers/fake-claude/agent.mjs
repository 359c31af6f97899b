/**
 * The fake's agent: takes prompts, plays the script's actions for each as one turn, and keeps the
 * transcript the way Claude Code does (prompt, reply blocks, tool calls and results, turn end).
 * Dialogs (permission, question, trust) hold the turn until a key answers them.
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createDialogs } from './dialogs.mjs';
import { runHooks } from './hooks.mjs';
import { actionKind, actionsFor } from './script.mjs';
import { BULLET, echoLines } from './screen.mjs';

const VERBS = ['Working', 'Pondering', 'Brewing', 'Crafting', 'Thinking'];
const REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/** Makes the agent over the app's state; returns { submit, interrupt, dialogKey, trust }. */
export function createAgent(app, { transcript, script, settings }) {
  let dropsLeft = script.dropInputs;
  let idleTimer;
  const { openDialog, dialogKey } = createDialogs(app);
  const base = () => ({ session_id: app.sessionId, transcript_path: transcript.path, cwd: app.cwd, permission_mode: app.permissionMode });

  async function submit(text, { typed = true } = {}) {
    if (typed && dropsLeft > 0) return void dropsLeft--;
    if (app.phase !== 'idle') {
      app.queued.push(text);
      transcript.queue('enqueue', text);
      return app.render();
    }
    clearTimeout(idleTimer);
    const turn = (app.turn = { startedAt: Date.now(), verb: pick(VERBS), tokens: 0, prompt: text });
    app.setPhase('busy');
    const blocked = (await runHooks(settings, 'UserPromptSubmit', { ...base(), prompt: text })).find((hook) => hook.exitCode === 2);
    if (blocked) app.history.push(`  ⎿ UserPromptSubmit operation blocked by hook: ${blocked.stderr.trim()}`);
    else {
      transcript.prompt(text);
      const echo = echoLines(text);
      app.history.push(...echo);
      const reply = new Reply(transcript);
      const outcome = await perform(actionsFor(script, text), turn, reply);
      reply.end(outcome === 'done' ? 'end_turn' : null);
      if (outcome === 'interrupted' && !reply.started) cancel(text, echo);
      else if (outcome === 'done') {
        await runHooks(settings, 'Stop', { ...base(), stop_hook_active: false });
        transcript.turnDuration(Date.now() - turn.startedAt);
      } else transcript.interrupted(outcome === 'tool');
      if (outcome !== 'done' && reply.started) app.history.push('  ⎿ Interrupted · What should Claude do instead?');
    }
    app.turn = null;
    app.setPhase('idle');
    idleTimer = setTimeout(() => runHooks(settings, 'Notification', { ...base(), message: 'Claude is waiting for your input', notification_type: 'idle_prompt' }, 'idle_prompt'), script.idleNotifyAfterMs);
    idleTimer.unref();
    if (app.queued.length) {
      transcript.queue('dequeue');
      submit(app.queued.shift(), { typed: false });
    }
  }

  /**
   * Esc before the first reply, as 2.1.332 (test/fixtures/claude-2.1.332, queued-and-interrupted):
   * no interrupted line and no turn end; the prompt's line stays, a dead branch (the next record
   * takes its parent), its echo goes from the screen, and the prompt goes back into the input box.
   */
  function cancel(text, echo) {
    transcript.cancelPrompt();
    app.history.splice(app.history.length - echo.length, echo.length);
    const unwrapped = text.replace(/^\n*<pasted_content id="[^"]*">\n([\s\S]*?)\n<\/pasted_content id="[^"]*">\n*$/, '$1');
    app.draft = app.draft ? `${unwrapped}\n${app.draft}` : unwrapped;
  }

  /** Plays actions; resolves 'done', 'interrupted' (Esc) or 'tool' (a dialog was refused). */
  async function perform(actions, turn, reply) {
    for (const action of actions) {
      if (turn.aborted) return 'interrupted';
      const kind = actionKind(action);
      if (kind === 'say') {
        const text = action.say.replaceAll('{answer}', turn.answer ?? '').replaceAll('{prompt}', turn.prompt);
        reply.block({ type: 'text', text });
        turn.tokens += Math.ceil(text.length / 4) + 3;
        app.history.push(...text.split('\n').map((line, index) => `${index ? '  ' : BULLET}${line}`));
      } else if (kind === 'sleepMs') await pause(turn, action.sleepMs);
      else if (kind === 'waitFile') await waitFile(turn, action.waitFile);
      else if (kind === 'run') await runTool(action, reply);
      else if (kind === 'draft') app.draft = action.draft;
      else if (kind === 'hang') await new Promise(() => (turn.hanging = true));
      else if (kind === 'crash') await app.crash(action.crash);
      else if (kind === 'exit') app.exit(action.exit);
      else if (kind === 'ask' && !(await ask(action.ask, turn, reply, action.transcriptLagMs))) return 'tool';
      else if (kind === 'permission' && !(await permission(action.permission, reply))) return 'tool';
      app.render();
    }
    return turn.aborted ? 'interrupted' : 'done';
  }

  async function runTool(action, reply, name = 'Bash', input) {
    const command = action.run.map(shellWord).join(' ');
    const id = toolId();
    reply.block({ type: 'tool_use', id, name, input: input ?? { command, description: action.description ?? command } });
    const source = reply.end('tool_use');
    app.history.push(`${BULLET}${name}(${command})`);
    app.render();
    const result = await runCommand(action.run, app.cwd);
    const output = (result.stdout + result.stderr).trim() || '(No content)';
    transcript.toolResult(id, output, { isError: result.code !== 0, toolUseResult: { stdout: result.stdout, stderr: result.stderr, interrupted: false, isImage: false }, source });
    app.history.push(`  ⎿  ${output.split('\n')[0]}`);
  }

  /** A question dialog; with `lagMs`, its tool_use line reaches the transcript that late (or at the answer). */
  async function ask(spec, turn, reply, lagMs) {
    const options = (spec.options ?? []).map((option) => (typeof option === 'string' ? { label: option, description: '' } : option));
    const questions = [{ question: spec.question, header: spec.header ?? 'Question', options, multiSelect: false }];
    const id = toolId();
    const lag = transcript.lagMs;
    if (lagMs !== undefined) transcript.lagMs = lagMs;
    reply.block({ type: 'tool_use', id, name: 'AskUserQuestion', input: { questions } });
    const source = reply.end('tool_use');
    const choice = await openDialog({ kind: 'question', header: questions[0].header, question: spec.question, options, typing: null });
    if (lagMs !== undefined) {
      transcript.flush();
      transcript.lagMs = lag;
    }
    if (choice.answer === undefined) {
      transcript.toolResult(id, 'User declined to answer questions', { isError: true, source });
      return false;
    }
    turn.answer = choice.answer;
    const text = `User has answered your questions: "${spec.question}"="${choice.answer}". You can now continue with the user's answers in mind.`;
    transcript.toolResult(id, text, { toolUseResult: { questions, answers: { [spec.question]: choice.answer } }, source });
    app.history.push(`  ⎿  · ${spec.question} → ${choice.answer}`);
    return true;
  }

  async function permission(spec, reply) {
    const tool = spec.tool ?? 'Bash';
    const input = tool === 'Write' ? { file_path: spec.file, content: spec.content ?? '' } : { command: spec.command, description: spec.command };
    const id = toolId();
    reply.block({ type: 'tool_use', id, name: tool, input });
    const source = reply.end('tool_use');
    app.history.push(`${BULLET}${tool}(${spec.command ?? spec.file})`);
    runHooks(settings, 'PermissionRequest', { ...base(), tool_name: tool, tool_input: input }, tool);
    const notify = setTimeout(() => runHooks(settings, 'Notification', { ...base(), message: `Claude needs your permission to use ${tool}`, notification_type: 'permission_prompt' }, 'permission_prompt'), script.notifyAfterMs);
    const choice = await openDialog({ kind: 'permission', tool, subject: spec.command ?? spec.file });
    clearTimeout(notify);
    if (!choice.approve) {
      transcript.toolResult(id, REJECTED, { isError: true, source });
      return false;
    }
    const result = spec.run ? await runCommand(spec.run, app.cwd) : { code: 0, stdout: '', stderr: '' };
    const output = (result.stdout + result.stderr).trim() || '(No content)';
    transcript.toolResult(id, output, { isError: result.code !== 0, toolUseResult: { stdout: result.stdout, stderr: result.stderr, interrupted: false, isImage: false }, source });
    app.history.push(`  ⎿  ${output.split('\n')[0]}`);
    return true;
  }

  /** Esc while working: the turn stops after the running step (a hang ignores it). */
  function interrupt() {
    if (!app.turn || app.turn.hanging) return;
    app.turn.aborted = true;
    app.turn.wake?.();
  }

  /** The trust dialog before the session starts; resolves true when the folder was trusted. */
  async function trust() {
    return (await openDialog({ kind: 'trust', cwd: app.cwd })).trusted === true;
  }

  return { submit, interrupt, dialogKey, trust };
}

/** One assistant reply: blocks share a message id; the last one written carries the stop reason. */
class Reply {
  constructor(transcript) {
    this.transcript = transcript;
    this.id = undefined;
    this.pending = undefined;
    /** True once any reply block was made: an Esc after that interrupts, before it cancels. */
    this.started = false;
  }

  block(content) {
    this.started = true;
    this.id ??= `msg_fake${randomBytes(10).toString('hex')}`;
    if (this.pending) this.transcript.assistant(this.id, this.pending, null);
    this.pending = content;
  }

  /** Writes the held block with `stopReason`; returns that record's uuid. */
  end(stopReason) {
    const uuid = this.pending ? this.transcript.assistant(this.id, this.pending, stopReason) : undefined;
    this.id = undefined;
    this.pending = undefined;
    return uuid;
  }
}

function pause(turn, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    turn.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/** Busy until the file exists (a test's release of a held reply); Esc cuts it short. */
async function waitFile(turn, path) {
  while (!turn.aborted && !existsSync(path)) await pause(turn, 50);
}

function runCommand(argv, cwd) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => (stdout += data));
    child.stderr.on('data', (data) => (stderr += data));
    child.on('error', (error) => resolve({ code: 127, stdout, stderr: String(error.message) }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function toolId() {
  return `toolu_fake${randomBytes(12).toString('hex')}`;
}

function shellWord(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}
