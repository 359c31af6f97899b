/**
 * The fake's transcript, in Claude Code's format: one JSON record a line at
 * `<config dir>/projects/<encoded cwd>/<session id>.jsonl`, made by the first write (the first
 * prompt), message records chained by parentUuid, noise records readers must skip.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The version the fake claims, the Claude Code version flume's facts were checked on. */
export const VERSION = '2.1.332';

/** The project folder name: every character outside [a-zA-Z0-9] as '-', cut at 200 with a hash. */
export function encodeCwd(cwd) {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= 200) return name;
  return `${name.slice(0, 200)}-${createHash('sha256').update(cwd).digest('hex').slice(0, 8)}`;
}

/** Writes one session's transcript; `lagMs` delays every write, as Claude Code's writes can lag. */
export class Transcript {
  constructor({ configDir, cwd, sessionId, model, permissionMode, lagMs = 0, usage }) {
    Object.assign(this, { cwd, sessionId, model, permissionMode, lagMs, usage });
    this.path = join(configDir, 'projects', encodeCwd(cwd), `${sessionId}.jsonl`);
    this.parent = null;
    this.pending = [];
  }

  /** Writes a record as it is (noise and queue operations: no uuid, no chain). */
  write(record) {
    const line = `${JSON.stringify(record)}\n`;
    if (this.lagMs <= 0) return this.append(line);
    this.pending.push(line);
    setTimeout(() => this.pending.length && this.append(this.pending.shift()), this.lagMs);
  }

  /** Writes every delayed line now (at exit). */
  flush() {
    while (this.pending.length) this.append(this.pending.shift());
  }

  /** A chained message record (user, assistant, system); returns its uuid. */
  message(type, fields) {
    const uuid = randomUUID();
    this.write({
      parentUuid: this.parent,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: VERSION,
      type,
      ...fields,
      uuid,
      timestamp: new Date().toISOString(),
    });
    this.parent = uuid;
    return uuid;
  }

  /** A prompt the person typed: content is the plain string. */
  prompt(text) {
    this.beforePrompt = this.parent;
    const messageId = randomUUID();
    this.write({ type: 'file-history-snapshot', messageId, snapshot: { messageId, trackedFileBackups: {}, timestamp: new Date().toISOString() }, isSnapshotUpdate: false });
    const uuid = this.message('user', { message: { role: 'user', content: text }, promptSource: 'typed', origin: { kind: 'human' }, permissionMode: this.permissionMode });
    this.write({ type: 'last-prompt', lastPrompt: text.slice(0, 200), sessionId: this.sessionId });
    return uuid;
  }

  /** One content block of an assistant reply; blocks of one reply share `messageId`. */
  assistant(messageId, block, stopReason) {
    return this.message('assistant', {
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { ...this.usage, service_tier: 'standard' },
      },
      requestId: `req_fake${randomBytes(8).toString('hex')}`,
    });
  }

  /** The result of a tool call, as the user record Claude Code writes. */
  toolResult(toolUseId, content, { isError = false, toolUseResult, source } = {}) {
    const result = { tool_use_id: toolUseId, type: 'tool_result', content, ...(isError ? { is_error: true } : {}) };
    return this.message('user', {
      message: { role: 'user', content: [result] },
      toolUseResult: toolUseResult ?? (isError ? `Error: ${content}` : content),
      ...(source ? { sourceToolAssistantUUID: source } : {}),
    });
  }

  /**
   * The last prompt was cancelled before any reply (Esc): as 2.1.332, its line stays where it is and
   * the next record takes the cancelled one's parent, so the cancelled prompt is a dead branch.
   */
  cancelPrompt() {
    this.parent = this.beforePrompt ?? null;
  }

  /** The line Claude Code writes when the person interrupts a turn. */
  interrupted(forToolUse) {
    const text = forToolUse ? '[Request interrupted by user for tool use]' : '[Request interrupted by user]';
    return this.message('user', { message: { role: 'user', content: [{ type: 'text', text }] } });
  }

  /** The end of a turn. */
  turnDuration(durationMs) {
    return this.message('system', { subtype: 'turn_duration', duration_ms: durationMs, isMeta: false });
  }

  /** A prompt queued while busy (`enqueue`), or taken from the queue (`dequeue`). */
  queue(operation, content) {
    this.write({ type: 'queue-operation', operation, timestamp: new Date().toISOString(), sessionId: this.sessionId, ...(content === undefined ? {} : { content }) });
  }

  append(line) {
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, line);
  }
}
