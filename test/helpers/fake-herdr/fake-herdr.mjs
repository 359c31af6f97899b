/**
 * fake-herdr: herdr's CLI as its 0.8.0 documentation describes it, for the commands flume uses, with
 * each workspace's pane a real terminal in a tmux server on the test's own socket (never the default
 * server). Every call is appended to $FAKE_HERDR_LOG as one JSON line: argv, cwd, stdin.
 *
 * $FAKE_HERDR_STATE is the server's folder: `running` there means the server runs; `tmux.sock` is
 * where the panes live; `metadata/` holds reported pane tokens; `agents/` the names `agent start`
 * gave. Panes, tabs and workspaces map onto tmux pane ids: a workspace made as tmux `%7` is `w7`,
 * with root tab `w7:t7` and pane `w7:p7`; a tab made in it as `%9` is `w7:t9`, its pane `w7:p9`.
 */
import { appendFileSync, existsSync, fstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How one call ended: its exit code and what it wrote. */
export class Done {
  constructor(code, stdout = '', stderr = '') {
    this.code = code;
    this.stdout = stdout;
    this.stderr = stderr;
  }
}

/** A call that answers later (`agent start`, once its program runs): `check` is asked again until it throws its Done. */
export class Later {
  constructor(check) {
    this.check = check;
  }
}

const done = (code, stdout, stderr) => {
  throw new Done(code, stdout, stderr);
};
let buffers = 0;

/**
 * One herdr call: argv, the caller's folder, what it read on standard input, and the environment
 * (FAKE_HERDR_STATE, FAKE_HERDR_LOG). Throws its Done, or a Later to ask again.
 */
export function call({ argv, cwd, stdin, env }) {

  const state = env.FAKE_HERDR_STATE;
  if (env.FAKE_HERDR_LOG) appendFileSync(env.FAKE_HERDR_LOG, `${JSON.stringify({ argv, cwd, stdin, at: Date.now() })}\n`);
  if (!state) exit(1, 'fake herdr: FAKE_HERDR_STATE is not set (it never uses the default tmux server)');
  const socket = join(state, 'tmux.sock');

  // `--machine NAME`: the command for herdr 0.9's saved SSH machine of that name; its pane tokens are kept apart, in `machines/NAME/`.
  const machine = argv[0] === '--machine' ? argv[1] : undefined;
  const [area, verb, ...rest] = machine === undefined ? argv : argv.slice(2);
  const metadataDir = machine === undefined ? join(state, 'metadata') : join(state, 'machines', machine.replace(/[^A-Za-z0-9._-]/g, '_'), 'metadata');
  if (area === '--version') out('herdr 0.8.0');
  else if (area === 'status') status(verb === 'server' ? rest : [verb, ...rest].filter(Boolean));
  else if (!existsSync(join(state, 'running'))) fail('cli:request', 'server_not_running', `no herdr server is running at ${socket}; run \`herdr\` to start or attach it`);
  else if (area === 'workspace' && verb === 'create') create('workspace', rest);
  else if (area === 'workspace' && verb === 'get') workspaceGet(rest[0]);
  else if (area === 'tab' && verb === 'create') create('tab', rest);
  else if (area === 'tab' && verb === 'focus') ok('cli:tab:focus', rest[0] && paneOf(rest[0]));
  else if (area === 'agent' && verb === 'start') agentStart(rest);
  else if (area === 'pane') pane(verb, rest);
  else if (area === 'notification' && verb === 'show') notification(rest);
  else if (area === 'notification') exit(2, `fake herdr: unsupported command: ${argv.join(' ')}`);
  else if (area === 'plugin' && verb === 'pane' && rest[0] === 'open') reply('cli:plugin:pane:open', { type: 'plugin_pane_opened', plugin_pane: { plugin_id: flag(rest, '--plugin'), entrypoint_id: flag(rest, '--entrypoint') } });
  else exit(2, `fake herdr: unsupported command: ${argv.join(' ')}`);

  function status(args) {
    const running = existsSync(join(state, 'running'));
    const server = { status: running ? 'running' : 'not_running', running, version: running ? '0.8.0' : null, protocol: running ? 1 : null, capabilities: null, compatible: running ? true : null, socket, session: null, restart_needed: false };
    const full = argv[1] !== 'server';
    if (args.includes('--json')) out(JSON.stringify(full ? { client: { version: '0.8.0', channel: 'stable', protocol: 1, binary: 'herdr', session: null }, server, update: { restart_needed: false } } : server));
    out(running ? `status: running\nversion: 0.8.0\nsocket: ${socket}` : `status: not running\nsocket: ${socket}`);
  }

  /** `workspace create` / `tab create`: a tmux window running an interactive sh with herdr's pane variables and `--env`. */
  function create(what, args) {
    const known = ['--cwd', '--label', '--env', '--workspace'];
    for (let i = 0; i < args.length; i += 1) {
      if (['--focus', '--no-focus'].includes(args[i])) continue;
      if (!known.includes(args[i]) || (what === 'workspace' && args[i] === '--workspace')) exit(2, `unknown option: ${args[i]}`);
      if (args[i + 1] === undefined) exit(2, `missing value for ${args[i]}`);
      i += 1;
    }
    const dir = flag(args, '--cwd') ?? cwd;
    const inside = what === 'tab' ? flag(args, '--workspace') : undefined;
    if (inside !== undefined && !paneOf(`${inside}:p${inside.slice(1)}`)) fail(`cli:${what}:create`, 'workspace_not_found', `workspace ${inside} not found`);
    for (const pair of flags(args, '--env')) if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(pair)) exit(2, `invalid --env ${pair}: expected KEY=VALUE`);
    // herdr's own variables stay authoritative over --env.
    // tmux sets a new window's PATH from its client's, after -e: PATH crosses as FAKE_HERDR_PATH.
    const env = flags(args, '--env').filter((pair) => !pair.startsWith('HERDR_')).flatMap((pair) => ['-e', pair.startsWith('PATH=') ? `FAKE_HERDR_${pair}` : pair]);
    const shell = 'n=${TMUX_PANE#%}; ws=${FAKE_HERDR_WS:-w$n}; [ -n "$FAKE_HERDR_PATH" ] && PATH=$FAKE_HERDR_PATH; unset FAKE_HERDR_WS FAKE_HERDR_PATH; export HERDR_ENV=1 HERDR_PANE_ID="$ws:p$n" HERDR_TAB_ID="$ws:t$n" HERDR_WORKSPACE_ID="$ws"; unset TMUX TMUX_PANE; exec sh -i';
    const window = ['-d', '-P', '-F', '#{pane_id}', '-c', dir, ...env, ...(inside ? ['-e', `FAKE_HERDR_WS=${inside}`] : []), '--', 'sh', '-c', shell];
    let made = tmux(['has-session', '-t', '=herdr']).status === 0 ? tmux(['new-window', '-t', '=herdr:', ...window]) : tmux(['new-session', '-s', 'herdr', '-x', '200', '-y', '50', ...window]);
    if (made.status !== 0 && /duplicate session/.test(made.stderr)) made = tmux(['new-window', '-t', '=herdr:', ...window]);
    if (made.status !== 0) fail(`cli:${what}:create`, 'create_failed', made.stderr.trim());
    const target = made.stdout.trim();
    if (inside) writeFileSync(wsFile(target), inside);
    const info = paneInfo(target);
    const tab = { tab_id: info.tab_id, workspace_id: info.workspace_id, number: 1, label: flag(args, '--label') ?? 'tab', focused: args.includes('--focus'), pane_count: 1, agent_status: 'unknown' };
    const workspace = { workspace_id: info.workspace_id, number: 1, label: flag(args, '--label') ?? dir, focused: args.includes('--focus'), pane_count: 1, tab_count: 1, active_tab_id: info.tab_id, agent_status: 'unknown' };
    reply(`cli:${what}:create`, what === 'tab' ? { type: 'tab_created', tab, root_pane: info } : { type: 'workspace_created', workspace, tab, root_pane: info });
  }

  function workspaceGet(id) {
    if (!id) exit(2, 'usage: herdr workspace get <workspace_id>');
    const root = /^w(\d+)$/.exec(id) && paneOf(`${id}:p${id.slice(1)}`);
    if (!root) fail('cli:workspace:get', 'workspace_not_found', `workspace ${id} not found`);
    reply('cli:workspace:get', { type: 'workspace_info', workspace: { workspace_id: id, number: 1, label: id, focused: false, pane_count: 1, tab_count: 1, active_tab_id: `${id}:t${id.slice(1)}`, agent_status: 'unknown' } });
  }

  /** `notification show <title> [--body] [--position] [--sound]`, checked as herdr's CLI checks it. */
  function notification(args) {
    const [title, ...rest] = args;
    if (!title || title.startsWith('--')) exit(2, 'usage: herdr notification show <title> [--body TEXT] [--position …] [--sound none|done|request]');
    for (let i = 0; i < rest.length; i += 2) {
      if (!['--body', '--position', '--sound'].includes(rest[i])) exit(2, `unknown option: ${rest[i]}`);
      if (rest[i + 1] === undefined) exit(2, `missing value for ${rest[i]}`);
    }
    const sound = flag(rest, '--sound');
    if (sound !== undefined && !['none', 'done', 'request'].includes(sound)) exit(2, `invalid --sound ${sound}`);
    reply('cli:notification:show', { type: 'notification_show', shown: true, reason: 'shown' });
  }

  /**
   * `agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]`, as herdr 0.8.0 does
   * it: the pane's shell must hold its foreground; the kind's executable and the arguments are typed
   * into it, each quoted as herdr quotes them, and it answers once a program other than the shell runs.
   */
  function agentStart(args) {
    const [name, ...more] = args;
    if (!name || name.startsWith('--')) exit(2, 'usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]');
    const separator = more.includes('--') ? more.indexOf('--') : more.length;
    const options = more.slice(0, separator);
    for (let i = 0; i < options.length; i += 2) {
      if (!['--kind', '--pane', '--timeout'].includes(options[i])) exit(2, `unknown option: ${options[i]}`);
      if (options[i + 1] === undefined) exit(2, `missing value for ${options[i]}`);
    }
    const kind = flag(options, '--kind');
    const id = flag(options, '--pane');
    if (!kind) exit(2, 'missing required --kind');
    if (!id) exit(2, 'missing required --pane');
    const executables = { claude: 'claude', codex: 'codex', pi: 'pi', gemini: 'gemini', opencode: 'opencode' };
    if (!executables[kind]) exit(2, `unsupported interactive agent kind: ${kind}`);
    const agentArgs = more.slice(separator + 1);
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) fail('cli:agent:start', 'invalid_agent_name', "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)");
    if (agentArgs.some((arg) => /[\u0000-\u001f\u007f]/.test(arg))) fail('cli:agent:start', 'invalid_agent_argument', 'agent arguments cannot be encoded safely for the target shell');
    mkdirSync(join(state, 'agents'), { recursive: true });
    const nameFile = join(state, 'agents', name);
    if (existsSync(nameFile) && readFileSync(nameFile, 'utf8') !== id && liveProgram(paneOf(readFileSync(nameFile, 'utf8')))) fail('cli:agent:start', 'agent_name_taken', `agent name ${name} is already used`);
    const target = paneOf(id);
    if (!target) fail('cli:agent:start', 'agent_pane_not_found', `agent target pane ${id} not found`);
    if (liveProgram(target)) fail('cli:agent:start', 'agent_pane_busy', `agent target pane ${id} is not an available shell`);
    const argvTyped = [executables[kind], ...agentArgs];
    const quote = (v) => (v !== '' && /^[A-Za-z0-9@%_+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, "'\\''")}'`);
    paste(target, argvTyped.map(quote).join(' '), false);
    tmux(['send-keys', '-t', target, 'Enter']);
    writeFileSync(nameFile, id);
    const until = Date.now() + Number(flag(options, '--timeout') ?? 30_000);
    // It answers once the program runs: looked at again every 50 ms (by the server without blocking the others).
    throw new Later(() => {
      if (!liveProgram(target)) {
        if (Date.now() > until) fail('cli:agent:start', 'timeout', 'timed out waiting for agent startup');
        return;
      }
      const info = paneInfo(target);
      reply('cli:agent:start', { type: 'agent_started', agent: { terminal_id: info.terminal_id, name, agent: kind, agent_status: 'idle', workspace_id: info.workspace_id, tab_id: info.tab_id, pane_id: info.pane_id, focused: false, interactive_ready: true, state_change_seq: 0, cwd: info.cwd, revision: 0 }, argv: argvTyped });
    });
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
    done(0, text);
  }

  /** Raw bytes into the pane, as herdr's `pane.send_text` writes them (tmux `paste-buffer -r` keeps LF). */
  function paste(target, text, finish = true) {
    const buffer = `fake-herdr-${process.pid}-${++buffers}`;
    const loaded = spawnSync('tmux', ['-S', socket, '-f', '/dev/null', 'load-buffer', '-b', buffer, '-', ';', 'paste-buffer', '-r', '-d', '-b', buffer, '-t', target], { input: text, encoding: 'utf8' });
    if (loaded.status !== 0) fail('cli:request', 'pane_send_failed', loaded.stderr.trim());
    if (finish) done(0);
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
    done(0);
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
    const ttl = flag(args, '--ttl-ms');
    if (ttl !== undefined && !(/^\d+$/.test(ttl) && Number(ttl) >= 1 && Number(ttl) <= 86_400_000)) fail('cli:request', 'invalid_metadata_ttl', '--ttl-ms must be between 1 and 86400000');
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
    const file = join(metadataDir, `${id.replace(/[^A-Za-z0-9]/g, '_')}.json`);
    const stored = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { tokens: {}, seq: {} };
    const seq = flag(args, '--seq');
    // A stale sequenced report is accepted and ignored.
    if (seq !== undefined && stored.seq[source] !== undefined && Number(seq) <= stored.seq[source]) done(0);
    if (seq !== undefined) stored.seq[source] = Number(seq);
    for (const [name, value] of Object.entries(patch)) {
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(name)) fail('cli:request', 'invalid_metadata_token', `invalid metadata token key: ${name}`);
      const clean = value === null ? '' : [...value.trim()].filter((c) => !/[\u0000-\u001f\u007f-\u009f]/.test(c)).slice(0, 80).join('').trim();
      if (clean === '') delete stored.tokens[name];
      else stored.tokens[name] = clean;
    }
    mkdirSync(metadataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored));
    done(0);
  }

  function paneOf(id) {
    const match = /^w(\d+):[pt](\d+)$/.exec(id ?? '');
    if (!match) return undefined;
    const found = tmux(['display-message', '-p', '-t', `%${match[2]}`, '#{pane_id}']);
    if (found.status !== 0 || found.stdout.trim() !== `%${match[2]}`) return undefined;
    return workspaceOf(`%${match[2]}`) === `w${match[1]}` ? `%${match[2]}` : undefined;
  }

  function wsFile(target) {
    return join(state, `ws-${target.slice(1)}`);
  }

  function workspaceOf(target) {
    return existsSync(wsFile(target)) ? readFileSync(wsFile(target), 'utf8') : `w${target.slice(1)}`;
  }

  function paneInfo(target) {
    const n = target.slice(1);
    const ws = workspaceOf(target);
    const cwd = tmux(['display-message', '-p', '-t', target, '#{pane_current_path}']).stdout.trim();
    const file = join(state, 'metadata', `${ws}_p${n}.json`);
    const tokens = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).tokens : {};
    return { pane_id: `${ws}:p${n}`, terminal_id: `term${n}`, workspace_id: ws, tab_id: `${ws}:t${n}`, focused: false, cwd, agent_status: 'unknown', ...(Object.keys(tokens).length ? { tokens } : {}), revision: 0 };
  }

  /** The pane's shell pid and the processes of its terminal's foreground process group, read from /proc. */
  function foreground(target) {
    const [pid, tty] = tmux(['display-message', '-p', '-t', target, '#{pane_pid} #{pane_tty}']).stdout.trim().split(' ');
    const stat = (p) => { try { const text = readFileSync(`/proc/${p}/stat`, 'utf8'); return { comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), fields: text.slice(text.lastIndexOf(')') + 2).split(' ') }; } catch { return undefined; } };
    const shell = stat(pid);
    const group = shell ? Number(shell.fields[5]) : undefined;
    const processes = [];
    // The shell and its descendants (read from /proc/PID/task/PID/children, not a scan of every process).
    const family = [];
    for (const queue = [pid]; queue.length; ) {
      const next = queue.shift();
      family.push(next);
      try { queue.push(...readFileSync(`/proc/${next}/task/${next}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)); } catch { /* gone */ }
    }
    if (group > 0) {
      for (const entry of family) {
        const s = stat(entry);
        if (!s || Number(s.fields[2]) !== group || s.fields[0] === 'Z') continue;
        const argvOf = (() => { try { return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean); } catch { return []; } })();
        processes.push({ pid: Number(entry), name: s.comm, argv: argvOf });
      }
    }
    return { shellPid: Number(pid), tty, group, processes: processes.sort((a, b) => a.pid - b.pid) };
  }

  /** True when a program other than the pane's shell holds its foreground. */
  function liveProgram(target) {
    return Boolean(target) && foreground(target).processes.some((p) => !['sh', 'bash', 'dash', 'zsh', 'fish'].includes(p.name));
  }

  function processInfo(id, target) {
    const { shellPid, tty, group, processes } = foreground(target);
    return { pane_id: id, shell_pid: shellPid, ...(group > 0 ? { foreground_process_group_id: group } : {}), tty, foreground_processes: processes };
  }

  function tmux(args) {
    return spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...env, TMUX: '', TMUX_PANE: '' } });
  }

  function tmuxOk(args) {
    const result = tmux(args);
    if (result.status !== 0) fail('cli:request', 'pane_send_failed', result.stderr.trim());
    done(0);
  }

  function flag(args, name) {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  }

  function flags(args, name) {
    return args.flatMap((arg, i) => (arg === name && args[i + 1] !== undefined ? [args[i + 1]] : []));
  }

  function reply(id, result) {
    out(JSON.stringify({ id, result }));
  }

  function ok(id, found) {
    if (!found) fail(id, 'not_found', 'not found');
    reply(id, { type: 'ok' });
  }

  function fail(id, code, message) {
    done(1, '', `${JSON.stringify({ id, error: { code, message } })}\n`);
  }

  function out(text) {
    done(0, `${text}\n`);
  }

  function exit(code, message) {
    done(code, '', `${message}\n`);
  }
}

/** Asks a call until it is done: a Done, whatever it threw. */
export function settle(request, wait) {
  const ask = (check) => {
    try {
      check();
    } catch (thrown) {
      if (thrown instanceof Done) return thrown;
      if (thrown instanceof Later) return wait(() => ask(thrown.check));
      return new Done(70, '', `fake herdr: ${thrown?.stack ?? thrown}\n`);
    }
    return new Done(70, '', 'fake herdr: the call ended without an answer\n');
  };
  return ask(() => call(request));
}

function readStdin() {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() ? readFileSync(0, 'utf8') : '';
  } catch {
    return '';
  }
}

// Run as a program (no server running for the state folder): one call, then exit.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const wait = (again) => {
    Atomics.wait(sleeper, 0, 0, 50);
    return again();
  };
  const result = settle({ argv: process.argv.slice(2), cwd: process.cwd(), stdin: readStdin(), env: process.env }, wait);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.code;
}
