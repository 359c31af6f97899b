#!/usr/bin/env node
/**
 * fake-claude: a stand-in for Claude Code where flume relies on it (command line, TUI screen,
 * transcript, state file, hooks), driven by a JSON script (README.md). Plain JS: no build step.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { createAgent } from './agent.mjs';
import { parseArgs, UsageError } from './args.mjs';
import { createKeyReader } from './input.mjs';
import { frame } from './screen.mjs';
import { loadScript } from './script.mjs';
import { createSessionFile, writeJson } from './session-file.mjs';
import { Transcript, VERSION } from './transcript.mjs';

// `claude --version` prints its version and exits, as the real program does (flume asks it at start).
if (process.argv[2] === '--version' || process.argv[2] === '-v') {
  process.stdout.write(`${VERSION} (Claude Code)\n`);
  process.exit(0);
}
// `claude auth status` prints whether it is logged in, as JSON, and exits 1 when it is not (2.1.250,
// 2.1.300, 2.1.332: test/e2e/doctor.test.ts). The fake knows one way in: ANTHROPIC_API_KEY.
if (process.argv[2] === 'auth' && process.argv[3] === 'status') {
  const key = Boolean(process.env.ANTHROPIC_API_KEY);
  const configDirectory = process.env.CLAUDE_CONFIG_DIR ?? `${process.env.HOME}/.claude`;
  process.stdout.write(`${JSON.stringify({ loggedIn: key, authMethod: key ? 'api_key' : 'none', apiProvider: 'firstParty', configDirectory, ...(key ? { apiKeySource: 'ANTHROPIC_API_KEY' } : {}) }, null, 2)}\n`);
  process.exit(key ? 0 : 1);
}
let options;
let script;
try {
  options = parseArgs(process.argv.slice(2));
  script = loadScript(process.env.FAKE_CLAUDE_SCRIPT);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
const configDir = process.env.CLAUDE_CONFIG_DIR || join(homedir(), '.claude');
const cwd = process.cwd();
refuse(sessionInUse(configDir, options.sessionId) && `Error: Session ID ${options.sessionId} is already in use.`);
refuse(options.permissionMode === 'bypassPermissions' && process.getuid?.() === 0 && process.env.IS_SANDBOX !== '1' &&
  '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons');
refuse(!process.stdin.isTTY && 'Error: fake-claude needs a terminal (run it in a tmux pane).');

const statePath = join(configDir, 'sessions', `${process.pid}.json`);
const transcript = new Transcript({ configDir, cwd, sessionId: options.sessionId, model: options.model, permissionMode: options.permissionMode, lagMs: script.transcriptLagMs, usage: script.usage });
const app = {
  version: VERSION,
  model: options.model,
  cwd,
  sessionId: options.sessionId,
  permissionMode: options.permissionMode,
  phase: 'starting',
  history: [],
  draft: '',
  queued: [],
  dialog: null,
  note: '',
  turn: null,
  pastes: [],
  // One id for every paste of a session, as 2.1.332 writes (`<pasted_content id="0e10">`).
  pasteId: randomBytes(2).toString('hex'),
  // False until the footer's second render after the box first shows: an Enter before it is lost.
  footerReady: false,
  crashed: false,
  render: () => app.crashed || process.stdout.write(frame(app, process.stdout.columns || 80, process.stdout.rows || 24)),
  setPhase(phase) {
    app.phase = phase;
    const status = { idle: 'idle', busy: 'busy', dialog: 'waiting' }[phase];
    if (status) sessionFile.update(status, app.dialog?.kind);
    app.render();
  },
  exit(code) {
    process.exit(code);
  },
  crash(code) {
    app.crashed = true;
    process.stdout.write('\x1b[2J\x1b[H\r\nError: fake-claude crashed (scripted)\r\n    at perform (agent.mjs)\r\n');
    // A moment before exiting, so the terminal shows the error, as a real crash's stack trace.
    setTimeout(() => process.exit(code), 100);
    return new Promise(() => undefined);
  },
};
const startedAt = Date.now();
const sessionFile = createSessionFile({ path: statePath, sessionId: options.sessionId, cwd, startedAt, lagMs: script.stateLagMs });
const agent = createAgent(app, { transcript, script, settings: options.settings });

process.on('exit', () => {
  transcript.flush();
  if (!app.crashed) rmSync(statePath, { force: true });
  process.stdout.write('\x1b[?2004l\x1b[?25h');
  if (process.stdin.isTTY) process.stdin.setRawMode(false);
});
for (const [signal, code] of [['SIGHUP', 129], ['SIGTERM', 143], ['SIGINT', 130]]) process.on(signal, () => process.exit(code));
process.stdout.on('resize', () => app.render());
setInterval(() => app.phase === 'busy' && app.render(), 1000);

process.stdin.setRawMode(true);
process.stdin.setEncoding('utf8');
process.stdout.write('\x1b[?2004h');
let lastCtrlC = 0;
/** Typed and pasted text not yet shown in the box. */
const unechoed = [];
let echoTimer;
const feed = createKeyReader(onEvent);
process.stdin.on('data', feed);
app.render();
setTimeout(start, script.startDelayMs);

async function start() {
  if (script.trust && !trusted()) {
    app.phase = 'trust';
    if (!(await agent.trust())) {
      process.stdout.write("\x1b[J\r\nClaude Code didn't start because this folder isn't trusted.\r\nRun claude again and choose Yes, or run it in another folder.\r\n");
      return app.exit(1);
    }
    trustFolder();
  }
  app.draft = script.draft;
  app.setPhase('idle');
  // 2.1.332 draws the box, then 70–200 ms later renders the footer again (`← for agents`); only
  // then does Enter submit. Until then an Enter is lost and the text stays in the box.
  setTimeout(() => {
    app.footerReady = true;
    app.render();
  }, script.footerReadyMs);
  if (options.prompt) agent.submit(options.prompt, { typed: false });
}

/** Input while starting is lost, as keys typed into a program not yet reading them. */
function onEvent(event) {
  if (app.phase === 'starting') return;
  const key = event.type === 'key' ? event.name : undefined;
  if (key === 'ctrl-c') {
    if (Date.now() - lastCtrlC < 2000) return app.exit(0);
    if (unechoed.length) echo();
    lastCtrlC = Date.now();
    app.draft = '';
    app.note = 'Press Ctrl-C again to exit';
    setTimeout(() => Date.now() - lastCtrlC >= 1900 && ((app.note = ''), app.render()), 2000);
    return app.render();
  }
  lastCtrlC = 0;
  app.note = '';
  if (app.dialog) return agent.dialogKey(event);
  // Typed and pasted text shows `echoMs` after it came; an Enter before that is lost, and the text
  // then shows in the box, unsent (as 2.1.332 lost an Enter sent ahead of the echo).
  if (event.type !== 'key') {
    unechoed.push(event);
    echoTimer ??= setTimeout(echo, script.echoMs);
    return;
  }
  if (key === 'enter' && unechoed.length) return;
  if (unechoed.length) echo();
  if (key === 'enter') {
    if (!app.footerReady) return;
    const text = expandPastes(app.draft);
    app.draft = '';
    if (text.trim()) agent.submit(text);
  } else if (key === 'backspace') app.draft = Array.from(app.draft).slice(0, -1).join('');
  else if (key === 'ctrl-u') app.draft = app.draft.slice(0, app.draft.lastIndexOf('\n') + 1);
  else if (key === 'esc') agent.interrupt();
  app.render();
}

/** Puts the text that came since the last echo into the box and shows it. */
function echo() {
  clearTimeout(echoTimer);
  echoTimer = undefined;
  for (const event of unechoed.splice(0)) {
    if (app.dialog) continue;
    // As 2.1.332: a pasted TAB becomes four spaces wherever it stands (a typed one is the Tab key),
    // and a trailing newline is dropped.
    if (event.type === 'paste') addPaste(event.text.replace(/\t/g, '    ').replace(/\n$/, ''), { bracketed: true });
    else addPaste(event.text, { bracketed: false });
  }
  app.render();
}

/**
 * Text that arrived in one read. As 2.1.332: more than `pasteThreshold` (800) characters, typed or
 * pasted, or a bracketed paste of 4 or more lines, shows as `[Pasted text #N +M lines]` (M the
 * newlines, no `+M lines` for one line) and reaches the transcript wrapped in pasted_content tags;
 * anything else is typed into the box.
 */
function addPaste(text, { bracketed }) {
  const newlines = (text.match(/\n/g) || []).length;
  if (text.length <= script.pasteThreshold && !(bracketed && newlines >= 3)) return void (app.draft += text);
  app.pastes.push(text);
  app.draft += `[Pasted text #${app.pastes.length}${newlines ? ` +${newlines} lines` : ''}]`;
}

/** The draft with each placeholder replaced by its paste, as 2.1.332 records it. */
function expandPastes(draft) {
  return draft.replace(/\[Pasted text #(\d+)(?: \+\d+ lines)?\]/g, (match, n) => {
    const text = app.pastes[Number(n) - 1];
    if (text === undefined) return match;
    return `\n\n<pasted_content id="${app.pasteId}">\n${text}\n</pasted_content id="${app.pasteId}">\n`;
  });
}

function sessionInUse(dir, sessionId) {
  const projects = join(dir, 'projects');
  if (existsSync(projects) && readdirSync(projects).some((name) => existsSync(join(projects, name, `${sessionId}.jsonl`)))) return true;
  const sessions = join(dir, 'sessions');
  if (!existsSync(sessions)) return false;
  return readdirSync(sessions).some((name) => {
    const state = readJson(join(sessions, name));
    return state?.sessionId === sessionId && processAlive(state.pid);
  });
}

function trusted() {
  const projects = readJson(join(configDir, '.claude.json'))?.projects ?? {};
  return Object.entries(projects).some(([root, project]) => project?.hasTrustDialogAccepted === true && (cwd === root || cwd.startsWith(root.endsWith(sep) ? root : root + sep)));
}

function trustFolder() {
  const path = join(configDir, '.claude.json');
  const config = readJson(path) ?? {};
  config.projects = { ...config.projects, [cwd]: { ...config.projects?.[cwd], hasTrustDialogAccepted: true } };
  writeJson(path, config);
}

function refuse(message) {
  if (!message) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

