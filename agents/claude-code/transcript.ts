/**
 * Reads Claude Code's own records of a session: whether a prompt arrived (findPrompt), what the agent
 * is doing (readState), and Claude Code's state file (sessionState). Every answer comes from what
 * Claude Code wrote; what the screen shows is screen.ts's business. Only the main chain counts:
 * subagent lines (`isSidechain: true`) are another conversation.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readPlainFileSync, type AgentReading, type PromptState } from '../../core/index.js';
import { claudeCodePatterns, type ClaudeCodePatterns } from './patterns.js';
import { asRecorded, blocks, kindOf, linesFromEnd, normalize, offered, parse, sameText, texts, type Block, type Kind, type Rec } from './records.js';

/** A reading of the transcript, with what the driver needs to settle it against the screen. */
export interface TranscriptReading extends AgentReading {
  /** An unanswered tool call: still running, or waiting on a permission prompt (only the screen tells). */
  pendingTool?: { id: string; name: string };
  /** The latest assistant text. Builds that write no turn end leave the screen to say it stopped there. */
  lastText?: string;
  /**
   * The last prompt, when nothing but bookkeeping came after it: taken and not yet answered, or
   * cancelled with Esc before any reply (then Claude Code put it back in the input box; only the
   * screen tells the two apart).
   */
  openPrompt?: string;
}

/** Claude Code's own state file for a session (`<configDir>/sessions/<pid>.json`). Undocumented. */
export interface SessionFile {
  pid: number;
  /** When that process started (`procStart`, clock ticks since boot): the file outlives a program killed outright, and its pid may be another's since. */
  procStart?: string;
  sessionId: string;
  cwd?: string;
  /** `waiting` is an open permission prompt or question. */
  status: 'idle' | 'busy' | 'waiting' | 'unknown';
  waitingFor?: string;
}

/** Options of readState; the defaults suit Claude Code 2.1.x. */
export interface ReadStateOptions {
  /** How far back to read at most: a bound on the cost whatever the transcript's length. */
  maxBytes?: number;
  patterns?: ClaudeCodePatterns;
}

/** Records are nearly, not strictly, in time order (hook lines); read this far past `since`. */
const SINCE_SLACK_MS = 60_000;

/**
 * Was `text` taken as a prompt? `taken` once a main-chain user record holds it (typed, pasted, or
 * queued while the agent was busy; its TABs as the agent records them), at or after `since`; `not-yet` while the transcript lacks it;
 * `unknown` while there is no transcript (Claude Code writes it at the first prompt).
 *
 * A prompt cancelled with Esc before any reply stays in the file as a dead branch (2.1.250–2.1.332):
 * the next prompt names the cancelled one's parent as its own. It was not taken. While the
 * cancelled prompt is still the last record nothing in the file tells it from a live one; the
 * driver then looks at the input box, where Claude Code put it back.
 */
export async function findPrompt(
  path: string,
  text: string,
  since?: string,
  patterns: ClaudeCodePatterns = claudeCodePatterns,
): Promise<PromptState> {
  const want = normalize(asRecorded(text, patterns));
  const from = since === undefined ? NaN : Date.parse(since);
  let revoked = 0;
  // The parents of the prompts read so far, that is of the prompts written after this record.
  const promptParents = new Set<string>();
  try {
    for await (const line of linesFromEnd(path)) {
      const rec = parse(line);
      if (!rec || rec.isSidechain === true) continue;
      // A session's first prompt has a null parent: a second root is the same fork.
      const parent = rec.parentUuid === null ? '' : rec.parentUuid;
      const prompt = isPrompt(rec) && typeof parent === 'string';
      const dead = prompt && promptParents.has(parent);
      if (prompt) promptParents.add(parent);
      const at = typeof rec.timestamp === 'string' ? Date.parse(rec.timestamp) : NaN;
      if (at < from) {
        if (at < from - SINCE_SLACK_MS) break;
        continue;
      }
      const offer = offered(rec, patterns);
      if (!offer?.texts.some((t) => sameText(t, want, patterns))) continue;
      // Read backwards, a queued prompt's withdrawal comes before its enqueue.
      if (offer.kind === 'revoke') revoked++;
      else if (offer.kind === 'enqueue' && revoked > 0) revoked--;
      else if (!dead) return 'taken';
    }
  } catch (error) {
    if (isMissing(error)) return 'unknown';
    throw error;
  }
  return 'not-yet';
}

/**
 * A person's prompt (a user record of text, not a tool result or a meta line). Two prompts with the
 * same parent are a fork: the conversation went on from the later one, the earlier is a dead branch
 * (Claude Code does not reply to it; any records hanging from it are dead too). Two parentless
 * (null) prompts are the same fork at the session's start; a record without the field is never dead.
 */
function isPrompt(rec: Rec): boolean {
  if (rec.type !== 'user' || rec.isMeta === true || rec.isCompactSummary === true) return false;
  return !blocks(rec.message?.content).some((block) => block.type === 'tool_result') && texts(rec.message?.content).length > 0;
}

/**
 * The agent's state from the tail of its transcript. Reads backwards from the end only until the
 * latest assistant reply is whole, so the cost follows the size of that reply, not of the file.
 * `asking` while an AskUserQuestion has no result with its id; `idle` (turnEnded) after a turn end or
 * an interrupt, with what it last said as `needs`; `working` otherwise. No transcript: `starting`.
 */
export async function readState(path: string, options: ReadStateOptions = {}): Promise<TranscriptReading> {
  const t = (options.patterns ?? claudeCodePatterns).transcript;
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  const scan: Scan = { ended: false, afterResult: false, resolved: new Set(), tools: [], texts: [] };
  let bytes = 0;
  let localOutput = false;
  try {
    for await (const line of linesFromEnd(path)) {
      if ((bytes += line.length + 1) > maxBytes) {
        scan.cut = true;
        break;
      }
      const rec = parse(line);
      if (!rec) continue;
      scan.lastActivity ??= typeof rec.timestamp === 'string' ? rec.timestamp : undefined;
      if (rec.isSidechain === true) continue;
      let kind = kindOf(rec, t);
      if (kind === 'local-output') localOutput = true;
      // Read backwards, a local command's output comes first: its echo is then no prompt.
      if (kind === 'command') [kind, localOutput] = [localOutput ? 'skip' : 'prompt', false];
      if (step(scan, rec, kind, t) === 'stop') break;
    }
  } catch (error) {
    if (isMissing(error)) return { state: 'starting' };
    throw error;
  }
  if (scan.heldPrompt !== undefined) newTurn(scan, scan.heldOpen);
  return settle(scan, t.askTool);
}

/**
 * Claude Code's state file for a session, feature-detected: undefined when the folder or a record
 * for the session is absent. A crashed claude leaves its file behind, so check the pid is alive.
 */
export async function sessionState(configDirectory: string, sessionId: string): Promise<SessionFile | undefined> {
  return (await sessionStates(configDirectory)).get(sessionId);
}

/**
 * Every session's state file in a config folder, by session id (the newest file where a session has
 * several): one read of the folder for many agents, where sessionState per agent would read it whole
 * each time. The files are a few hundred bytes each, read without the thread pool: one sync read of
 * each costs less than the four round trips an async read makes (status reads a folder of dozens).
 */
export async function sessionStates(configDirectory: string): Promise<Map<string, SessionFile>> {
  const dir = join(configDirectory, 'sessions');
  const states = new Map<string, SessionFile>();
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return states;
  }
  const found: Array<SessionFile & { mtime: number }> = [];
  for (const name of names) {
    try {
      const path = join(dir, name);
      const text = readPlainFileSync(path);
      if (text === undefined) continue;
      const data = JSON.parse(text) as Record<string, unknown>;
      if (typeof data.sessionId !== 'string') continue;
      const status = ['idle', 'busy', 'waiting'].includes(data.status as string) ? data.status : 'unknown';
      found.push({
        pid: Number.parseInt(name, 10),
        ...(typeof data.procStart === 'string' ? { procStart: data.procStart } : {}),
        sessionId: data.sessionId,
        cwd: typeof data.cwd === 'string' ? data.cwd : undefined,
        status: status as SessionFile['status'],
        waitingFor: typeof data.waitingFor === 'string' ? data.waitingFor : undefined,
        mtime: statSync(path).mtimeMs,
      });
    } catch {
      // Torn or vanished while read (claude rewrites and deletes it): not a reading.
    }
  }
  // Newest first, so each session keeps its newest file; a stable sort keeps ties in folder order.
  for (const { mtime: _mtime, ...file } of found.sort((a, b) => b.mtime - a.mtime)) {
    if (!states.has(file.sessionId)) states.set(file.sessionId, file);
  }
  return states;
}

type Patterns = ClaudeCodePatterns['transcript'];

/** What a backward walk has gathered about the latest assistant reply and what followed it. */
interface Scan {
  lastActivity?: string;
  /** A turn end (or interrupt) written after the latest reply. */
  ended: boolean;
  /**
   * A prompt met before any reply, held while t.latePrompt: its line may have come late, after the
   * records of its own turn. The next record of the turn decides (see step).
   */
  heldPrompt?: number;
  /** The held prompt's text, when nothing but bookkeeping came after it. */
  heldOpen?: string;
  /** The last prompt, when nothing but bookkeeping came after it (see TranscriptReading.openPrompt). */
  openPrompt?: string;
  /** Tool results written after the latest reply: the model is answering them. */
  afterResult: boolean;
  /** A manual /compact after the latest reply (idle) or an automatic one (working). */
  compacted?: 'idle' | 'working';
  replyId?: string;
  /** The read stopped at maxBytes before the reply was whole. */
  cut?: boolean;
  resolved: Set<string>;
  tools: Block[];
  texts: string[];
}

/** One record of the backward walk; `stop` once the latest reply is complete. */
function step(scan: Scan, rec: Rec, kind: Kind, t: Patterns): 'go' | 'stop' {
  if (scan.heldPrompt !== undefined && kind !== 'skip' && kind !== 'local-output') {
    // A held prompt older than the turn record written before it was written late: it belongs to
    // that turn, read on. Otherwise it is what it looked like, a new turn.
    const late = kind !== 'prompt' && kind !== 'command' && timeOf(rec) > scan.heldPrompt;
    const open = scan.heldOpen;
    scan.heldPrompt = scan.heldOpen = undefined;
    if (!late) return newTurn(scan, open);
  }
  const before = scan.replyId === undefined;
  switch (kind) {
    case 'assistant': {
      const id = rec.message?.id ?? rec.uuid ?? '';
      if (before) scan.replyId = id;
      else if (id !== scan.replyId) return 'stop';
      for (const block of blocks(rec.message?.content).reverse()) {
        if (block.type === 'tool_use' && block.id) scan.tools.push(block);
        if (block.type === 'text' && block.text?.trim()) scan.texts.push(block.text.trim());
      }
      if (rec.message?.stop_reason === t.endStop || rec.isApiErrorMessage === true) scan.ended = true;
      return 'go';
    }
    case 'results':
      for (const block of blocks(rec.message?.content)) if (block.tool_use_id) scan.resolved.add(block.tool_use_id);
      if (before) scan.afterResult = true;
      return 'go';
    case 'end':
    case 'interrupt':
      if (!before) return 'stop';
      scan.ended = true;
      return 'go';
    case 'compact':
      if (before && !scan.ended) scan.compacted = rec.compactMetadata?.trigger === 'manual' ? 'idle' : 'working';
      return 'stop';
    case 'prompt': {
      const open = before && !scan.ended && !scan.afterResult && !scan.compacted ? texts(rec.message?.content).join('\n') : undefined;
      if (t.latePrompt && before && !Number.isNaN(timeOf(rec))) {
        scan.heldPrompt = timeOf(rec);
        scan.heldOpen = open;
        return 'go';
      }
      return newTurn(scan, open);
    }
    default:
      return 'go';
  }
}

/** A prompt read before any reply: a new turn (or, after an interrupt, one cut short). `open`: its text, if nothing followed it. */
function newTurn(scan: Scan, open?: string): 'stop' {
  if (scan.replyId === undefined && !scan.ended) scan.afterResult = true;
  scan.openPrompt = open;
  return 'stop';
}

/** A record's timestamp in ms; NaN when it has none (NaN compares false, so such a record is never late). */
function timeOf(rec: Rec): number {
  return typeof rec.timestamp === 'string' ? Date.parse(rec.timestamp) : NaN;
}

/** Turns what the walk gathered into a reading. */
function settle(scan: Scan, askTool: string): TranscriptReading {
  const reading = settled(scan, askTool);
  // Absent, not undefined: a reading is spread over others and printed as JSON.
  for (const key of Object.keys(reading) as Array<keyof TranscriptReading>) if (reading[key] === undefined) delete reading[key];
  return reading;
}

function settled(scan: Scan, askTool: string): TranscriptReading {
  const base = { lastActivity: scan.lastActivity };
  const said = scan.texts.slice().reverse().join('\n\n') || undefined;
  if (scan.ended) return { ...base, state: 'idle', turnEnded: true, needs: said };
  if (scan.compacted === 'idle') return { ...base, state: 'idle', turnEnded: true };
  const pending = scan.tools.filter((tool) => !scan.resolved.has(tool.id ?? ''));
  const ask = pending.find((tool) => tool.name === askTool);
  if (ask) {
    const questions = (ask.input?.questions ?? []).map((q) => q.question).filter((q): q is string => !!q);
    return { ...base, state: 'asking', dialog: 'question', needs: questions.join('\n') || undefined };
  }
  const tool = pending[0];
  if (tool) return { ...base, state: 'working', pendingTool: { id: tool.id ?? '', name: tool.name ?? '' }, lastText: said };
  if (scan.afterResult || scan.compacted) return { ...base, state: 'working', openPrompt: scan.openPrompt };
  // A reply of text alone with no turn end written: it may end there or go on; the screen decides.
  if (said !== undefined) return { ...base, state: 'working', lastText: said };
  // Nothing was ever asked of it: it waits for input. A window too small to tell is read as busy.
  return { ...base, state: scan.replyId === undefined && !scan.cut ? 'idle' : 'working' };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}

