/**
 * fake-herdr: herdr's CLI as its 0.8.0 documentation describes it, for the commands flume uses, with
 * each workspace's pane a real terminal in a tmux server on the test's own socket (never the default
 * server). Every call is appended to $FAKE_HERDR_LOG as one JSON line: argv, cwd, stdin.
 *
 * $FAKE_HERDR_STATE is the server's folder: `running` there means the server runs; `tmux.sock` is
 * where the panes live; `metadata/` holds reported pane tokens. Panes, tabs and workspaces map onto
 * tmux pane ids: tmux `%7` is workspace `w7`, its tab `w7:t1` and its root pane `w7:p1`.
 */
import { appendFileSync, existsSync, fstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const argv = process.argv.slice(2);
const state = process.env.FAKE_HERDR_STATE;
const stdin = readStdin();
if (process.env.FAKE_HERDR_LOG) appendFileSync(process.env.FAKE_HERDR_LOG, `${JSON.stringify({ argv, cwd: process.cwd(), stdin })}\n`);
if (!state) exit(1, 'fake herdr: FAKE_HERDR_STATE is not set (it never uses the default tmux server)');
const socket = join(state, 'tmux.sock');

const [area, verb, ...rest] = argv;
if (area === '--version') out('herdr 0.8.0');
else if (area === 'status') status(verb === 'server' ? rest : [verb, ...rest].filter(Boolean));
else if (!existsSync(join(state, 'running'))) fail('cli:request', 'server_not_running', `no herdr server is running at ${socket}; run \`herdr\` to start or attach it`);
else if (area === 'workspace' && verb === 'create') create('workspace', rest);
else if (area === 'tab' && verb === 'create') create('tab', rest);
else if (area === 'tab' && verb === 'focus') ok('cli:tab:focus', rest[0] && paneOf(rest[0].replace(/:t1$/, ':p1')));
else if (area === 'pane') pane(verb, rest);
else if (area === 'notification' && verb === 'show') reply('cli:notification:show', { type: 'notification_show', shown: true, reason: 'shown' });
else if (area === 'plugin' && verb === 'pane' && rest[0] === 'open') reply('cli:plugin:pane:open', { type: 'plugin_pane_opened', plugin_pane: { plugin_id: flag(rest, '--plugin'), entrypoint_id: flag(rest, '--entrypoint') } });
else exit(2, `fake herdr: unsupported command: ${argv.join(' ')}`);

function status(args) {
  const running = existsSync(join(state, 'running'));
  const server = { status: running ? 'running' : 'not_running', running, version: running ? '0.8.0' : null, protocol: running ? 1 : null, capabilities: null, compatible: running ? true : null, socket, session: null, restart_needed: false };
  const full = argv[1] !== 'server';
  if (args.includes('--json')) out(JSON.stringify(full ? { client: { version: '0.8.0', channel: 'stable', protocol: 1, binary: 'herdr', session: null }, server, update: { restart_needed: false } } : server));
  out(running ? `status: running\nversion: 0.8.0\nsocket: ${socket}` : `status: not running\nsocket: ${socket}`);
}

/** `workspace create` / `tab create`: a tmux window running an interactive sh with herdr's pane variables. */
function create(what, args) {
  const cwd = flag(args, '--cwd') ?? process.cwd();
  const env = flags(args, '--env').flatMap((pair) => ['-e', pair]);
  const shell = 'n=${TMUX_PANE#%}; export HERDR_ENV=1 HERDR_PANE_ID="w$n:p1" HERDR_TAB_ID="w$n:t1" HERDR_WORKSPACE_ID="w$n"; unset TMUX TMUX_PANE; exec sh -i';
  const window = ['-d', '-P', '-F', '#{pane_id}', '-c', cwd, ...env, '--', 'sh', '-c', shell];
  let made = tmux(['has-session', '-t', '=herdr']).status === 0 ? tmux(['new-window', '-t', '=herdr:', ...window]) : tmux(['new-session', '-s', 'herdr', '-x', '200', '-y', '50', ...window]);
  if (made.status !== 0 && /duplicate session/.test(made.stderr)) made = tmux(['new-window', '-t', '=herdr:', ...window]);
  if (made.status !== 0) fail(`cli:${what}:create`, 'create_failed', made.stderr.trim());
  const info = paneInfo(made.stdout.trim());
  const tab = { tab_id: info.tab_id, workspace_id: info.workspace_id, number: 1, label: flag(args, '--label') ?? 'tab', focused: args.includes('--focus'), pane_count: 1, agent_status: 'unknown' };
  const workspace = { workspace_id: info.workspace_id, number: 1, label: flag(args, '--label') ?? cwd, focused: args.includes('--focus'), pane_count: 1, tab_count: 1, active_tab_id: info.tab_id, agent_status: 'unknown' };
  reply(`cli:${what}:create`, what === 'tab' ? { type: 'tab_created', tab, root_pane: info } : { type: 'workspace_created', workspace, tab, root_pane: info });
}

function pane(verb, args) {
  const id = verb === 'process-info' ? flag(args, '--pane') : args[0];
  const target = id && paneOf(id);
  if (['get', 'process-info', 'read', 'send-text', 'send-keys', 'run', 'close', 'report-metadata'].includes(verb) && !id) exit(2, `usage: herdr pane ${verb} <pane_id>`);
  if (verb !== 'report-metadata' && target === undefined && id) fail(`cli:pane:${verb}`, 'pane_not_found', `pane ${id} not found`);
  if (verb === 'get') return reply('cli:pane:get', { type: 'pane_info', pane: paneInfo(target) });
  if (verb === 'process-info') return reply('cli:pane:process_info', { type: 'pane_process_info', process_info: processInfo(id, target) });
  if (verb === 'read') return read(target, args);
  if (verb === 'send-text') return paste(target, args.slice(1).join(' '));
  if (verb === 'send-keys') return keys(target, args.slice(1));
  if (verb === 'run') {
    paste(target, args.slice(1).join(' '), false);
    return tmuxOk(['send-keys', '-t', target, 'Enter']);
  }
  if (verb === 'close') {
    tmux(['kill-pane', '-t', target]);
    return reply('cli:pane:close', { type: 'ok' });
  }
  if (verb === 'report-metadata') return metadata(id, target, args.slice(1));
  exit(2, `fake herdr: unsupported command: pane ${verb}`);
}

function read(target, args) {
  const source = flag(args, '--source') ?? 'recent';
  if (!['visible', 'recent', 'recent-unwrapped', 'detection'].includes(source)) exit(1, `invalid read source: ${source}`);
  const lines = Number(flag(args, '--lines') ?? (source === 'visible' || source === 'detection' ? 0 : 80));
  const capture = tmux(['capture-pane', '-p', ...(source === 'visible' || source === 'detection' ? [] : ['-J', '-S', `-${lines}`]), '-t', target]);
  if (capture.status !== 0) fail('cli:pane:read', 'pane_not_found', `pane ${args[0]} not found`);
  let text = capture.stdout;
  if (lines && (source === 'visible' || source === 'detection')) text = text.replace(/\n$/, '').split('\n').slice(-lines).join('\n') + '\n';
  process.stdout.write(text);
  process.exit(0);
}

/** Raw bytes into the pane, as herdr's `pane.send_text` writes them (tmux `paste-buffer -r` keeps LF). */
function paste(target, text, done = true) {
  const buffer = `fake-herdr-${process.pid}`;
  const loaded = spawnSync('tmux', ['-S', socket, '-f', '/dev/null', 'load-buffer', '-b', buffer, '-', ';', 'paste-buffer', '-r', '-d', '-b', buffer, '-t', target], { input: text, encoding: 'utf8' });
  if (loaded.status !== 0) fail('cli:request', 'pane_send_failed', loaded.stderr.trim());
  if (done) process.exit(0);
}

/** herdr key-combo names to tmux keys; every key is checked before any is sent, as herdr does. */
function keys(target, names) {
  const named = { enter: 'Enter', tab: 'Tab', esc: 'Escape', escape: 'Escape', backspace: 'BSpace', space: 'Space', delete: 'DC', up: 'Up', down: 'Down', left: 'Left', right: 'Right', home: 'Home', end: 'End', 'shift+tab': 'BTab', minus: '-', plus: '+', backtick: '`' };
  const mapped = names.map((name) => {
    const lower = name.toLowerCase();
    const chord = /^(?:ctrl|control|c)[+-](.)$/.exec(lower) ?? [];
    const alt = /^alt\+(.)$/.exec(lower) ?? [];
    const key = named[lower] ?? (chord[1] ? `C-${chord[1]}` : alt[1] ? `M-${alt[1]}` : /^f([1-9]|1[0-2])$/.test(lower) ? lower.toUpperCase() : [...name].length === 1 ? name : undefined);
    if (!key) fail('cli:request', 'invalid_key', `unsupported key ${name}`);
    return key;
  });
  for (const key of mapped) tmux(['send-keys', '-t', target, ...(key.length === 1 ? ['-l', key] : [key])]);
  process.exit(0);
}

/** `pane report-metadata`, checked as herdr checks it, tokens kept per pane for `pane get`. */
function metadata(id, target, args) {
  const source = flag(args, '--source');
  const known = ['--source', '--agent', '--applies-to-source', '--title', '--display-agent', '--state-label', '--token', '--clear-token', '--seq', '--ttl-ms'];
  for (let i = 0; i < args.length; i += 1) {
    if (['--clear-title', '--clear-display-agent', '--clear-state-labels'].includes(args[i])) continue;
    if (!known.includes(args[i])) exit(2, `unknown option: ${args[i]}`);
    if (args[i + 1] === undefined) exit(2, `missing value for ${args[i]}`);
    i += 1;
  }
  if (!source?.trim()) exit(2, 'missing required --source');
  const patch = {};
  for (const token of flags(args, '--token')) {
    const at = token.indexOf('=');
    if (at <= 0) exit(2, at === 0 ? 'token name must not be empty' : 'token must use NAME=VALUE');
    patch[token.slice(0, at)] = token.slice(at + 1);
  }
  for (const name of flags(args, '--clear-token')) patch[name] = null;
  if (Object.keys(patch).length === 0 && !args.some((a) => a.startsWith('--title') || a.startsWith('--clear') || a.startsWith('--display') || a.startsWith('--state'))) exit(2, 'missing metadata field to set or clear');
  if (target === undefined) fail('cli:request', 'pane_not_found', `pane ${id} not found`);
  if (!/^[A-Za-z0-9:._-]{1,80}$/.test(source.trim())) fail('cli:request', 'invalid_metadata_source', 'metadata source may contain only ASCII letters, digits, colon, dot, underscore, and hyphen');
  if (Object.keys(patch).length > 16) fail('cli:request', 'invalid_metadata_token', 'a metadata report may update at most 16 tokens');
  const file = join(state, 'metadata', `${id.replace(/[^A-Za-z0-9]/g, '_')}.json`);
  const stored = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { tokens: {}, seq: {} };
  const seq = flag(args, '--seq');
  // A stale sequenced report is accepted and ignored.
  if (seq !== undefined && stored.seq[source] !== undefined && Number(seq) <= stored.seq[source]) process.exit(0);
  if (seq !== undefined) stored.seq[source] = Number(seq);
  for (const [name, value] of Object.entries(patch)) {
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(name)) fail('cli:request', 'invalid_metadata_token', `invalid metadata token key: ${name}`);
    const clean = value === null ? '' : [...value.trim()].filter((c) => !/[\u0000-\u001f\u007f-\u009f]/.test(c)).slice(0, 80).join('').trim();
    if (clean === '') delete stored.tokens[name];
    else stored.tokens[name] = clean;
  }
  mkdirSync(join(state, 'metadata'), { recursive: true });
  writeFileSync(file, JSON.stringify(stored));
  process.exit(0);
}

function paneOf(id) {
  const match = /^w(\d+):[pt]1$/.exec(id);
  if (!match) return undefined;
  const found = tmux(['display-message', '-p', '-t', `%${match[1]}`, '#{pane_id}']);
  return found.status === 0 && found.stdout.trim() === `%${match[1]}` ? `%${match[1]}` : undefined;
}

function paneInfo(target) {
  const n = target.slice(1);
  const cwd = tmux(['display-message', '-p', '-t', target, '#{pane_current_path}']).stdout.trim();
  const file = join(state, 'metadata', `w${n}_p1.json`);
  const tokens = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).tokens : {};
  return { pane_id: `w${n}:p1`, terminal_id: `term${n}`, workspace_id: `w${n}`, tab_id: `w${n}:t1`, focused: false, cwd, agent_status: 'unknown', ...(Object.keys(tokens).length ? { tokens } : {}), revision: 0 };
}

function processInfo(id, target) {
  const [pid, tty] = tmux(['display-message', '-p', '-t', target, '#{pane_pid} #{pane_tty}']).stdout.trim().split(' ');
  const cmdline = (() => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean); } catch { return []; } })();
  return { pane_id: id, shell_pid: Number(pid), tty, foreground_processes: [{ pid: Number(pid), name: cmdline[0]?.split('/').pop() ?? 'sh', argv: cmdline }] };
}

function tmux(args) {
  return spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, TMUX: '', TMUX_PANE: '' } });
}

function tmuxOk(args) {
  const result = tmux(args);
  if (result.status !== 0) fail('cli:request', 'pane_send_failed', result.stderr.trim());
  process.exit(0);
}

function flag(args, name) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

function flags(args, name) {
  return args.flatMap((arg, i) => (arg === name && args[i + 1] !== undefined ? [args[i + 1]] : []));
}

function readStdin() {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() ? readFileSync(0, 'utf8') : '';
  } catch {
    return '';
  }
}

function reply(id, result) {
  out(JSON.stringify({ id, result }));
}

function ok(id, found) {
  if (!found) fail(id, 'not_found', 'not found');
  reply(id, { type: 'ok' });
}

function fail(id, code, message) {
  process.stderr.write(`${JSON.stringify({ id, error: { code, message } })}\n`);
  process.exit(1);
}

function out(text) {
  process.stdout.write(`${text}\n`);
  process.exit(0);
}

function exit(code, message) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
