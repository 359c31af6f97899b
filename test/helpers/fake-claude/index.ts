/**
 * Test helpers around fake-claude: the pane spec that starts it (as flume's driver would start the
 * real program), where its transcript and state file are, and a typed form of its script.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PaneSpec } from '../../../core/api/pane-host.js';

/** The fake's executable script. */
export const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

/** One step of a scripted turn (README.md has the meaning of each). */
export type FakeAction =
  | { say: string }
  | { run: string[]; description?: string }
  | { sleepMs: number }
  | { waitFile: string }
  | { ask: { question: string; header?: string; options: Array<string | { label: string; description?: string }> }; transcriptLagMs?: number }
  | { permission: { tool?: string; command?: string; file?: string; content?: string; run?: string[] } }
  | { hang: true }
  | { crash: number }
  | { exit: number }
  | { draft: string };

/** The fake's script, the JSON named by FAKE_CLAUDE_SCRIPT. */
export interface FakeScript {
  startDelayMs?: number;
  /** How long after the input box shows an Enter is still lost (the footer's second render); default 150. */
  footerReadyMs?: number;
  /** How long typed or pasted text takes to show in the box; an Enter before it shows is lost (default 100). */
  echoMs?: number;
  dropInputs?: number;
  transcriptLagMs?: number;
  /** The `message.usage` of every reply (default 10 in, 5 out, no cache), on each of its block lines. */
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };
  /** Every state-file change lands this late (default 250, as 2.1.332); the first write is at once. */
  stateLagMs?: number;
  pasteThreshold?: number;
  notifyAfterMs?: number;
  idleNotifyAfterMs?: number;
  trust?: boolean;
  draft?: string;
  onPrompt?: Array<{ match?: string; flags?: string; once?: boolean; actions: FakeAction[] }>;
}

/** How to start one fake session. */
export interface FakeClaudeOptions {
  /** `CLAUDE_CONFIG_DIR` for the fake. */
  configDir: string;
  cwd: string;
  sessionId?: string;
  script?: FakeScript;
  /** More arguments after `--session-id` (`--model`, `--settings`, a prompt, …). */
  args?: string[];
  /** More environment variables. */
  env?: Record<string, string>;
}

/** A started-to-be fake session: the spec to open and where its records will be. */
export interface FakeClaudeSession {
  spec: PaneSpec;
  sessionId: string;
  transcriptPath: string;
  /** The fake's state file, once its pid is known. */
  statePath(pid: number): string;
}

/** The pane spec that runs fake-claude with a script, and where its transcript will appear. */
export function fakeClaude(options: FakeClaudeOptions): FakeClaudeSession {
  const sessionId = options.sessionId ?? randomUUID();
  const cwd = realpathSync(options.cwd);
  mkdirSync(options.configDir, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    CLAUDE_CONFIG_DIR: options.configDir,
    ...options.env,
  };
  if (options.script) {
    const scriptPath = join(options.configDir, `fake-script-${sessionId}.json`);
    writeFileSync(scriptPath, JSON.stringify(options.script));
    env.FAKE_CLAUDE_SCRIPT = scriptPath;
  }
  return {
    spec: { title: `fake-claude ${sessionId.slice(0, 8)}`, cwd, argv: [process.execPath, FAKE_CLAUDE, '--session-id', sessionId, ...(options.args ?? [])], env },
    sessionId,
    transcriptPath: transcriptPathFor(options.configDir, cwd, sessionId),
    statePath: (pid) => join(options.configDir, 'sessions', `${pid}.json`),
  };
}

/** `<config dir>/projects/<cwd, every non-alphanumeric character as '-'>/<session id>.jsonl`. */
export function transcriptPathFor(configDir: string, cwd: string, sessionId: string): string {
  return join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), `${sessionId}.jsonl`);
}

/**
 * The transcript's whole records, or [] before it exists. A last line without its newline is still
 * being written (the fake appends a record in more than one write at times): it is left out, as
 * flume's own reading leaves it out.
 */
export function readRecords(path: string): Array<Record<string, any>> {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.pop();
  return lines.filter(Boolean).map((line) => JSON.parse(line));
}

/** The suite's one wait (test/helpers/wait.ts): its time limit is a hang guard, never the assertion. */
export { waitFor } from '../wait.js';
