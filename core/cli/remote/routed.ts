/**
 * The road to another host, taken in the bin's entry before any other: a command line naming a
 * host (`--host NAME`, `HOST:kind/name`, `FLUME_HOST`) runs on that host's flume with its output and
 * exit code relayed as they are; a merged `status` reads every host asked for; the remote end of a
 * relay (`flume __relay`) runs the request it reads on its standard input. Nothing of a command for
 * another host runs here: a host that cannot be reached is refused, never stood in for.
 */
import type { FlumePlugin } from '../../api/plugin.js';
import { flumeError, type FlumeError } from '../../api/errors.js';
import { answerRelay, relay, relayCall, RELAY_ENTRY } from '../../hosts/relay.js';
import { namedHost, THIS_HOST } from '../../hosts/list.js';
import { route } from '../../hosts/route.js';
import { readAllHosts, type AllHostsReport } from '../../hosts/all-status.js';
import { flumeVersion } from '../../support/version.js';
import { COMMAND_LINES } from '../options.js';
import { asFlumeError, printError, printJson } from '../output.js';
import { ROUTING_VARIABLES } from '../../support/environment.js';
import { callerGone, onStop, processIo, type Io } from '../process-io.js';
import { viewOnHost } from '../../hosts/ssh.js';
import type { CliContext } from '../command.js';
import { ATTACH_ENTRY, hostsActions } from './host-actions.js';
import type { NamedHost } from '../../hosts/list.js';

/** What the entry hands the road: its streams, folder and environment. */
export interface RoutedOptions {
  io: Io;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The built-in plugins, for a command called with its arguments as values. */
  preset: () => Promise<FlumePlugin[]>;
  /** The flume executable. */
  self: string;
}

/**
 * Runs `argv` where it names, or answers with the command line to run here (its host's part taken
 * off). `again` runs a command line here by the entry's other roads.
 */
export async function routed(argv: string[], options: RoutedOptions, again: (argv: string[], io: Io) => Promise<number>): Promise<number | { argv: string[] }> {
  const { io } = options;
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const json = argv.includes('--json') || argv.includes('--json=true');
  try {
    if (argv[0] === RELAY_ENTRY) {
      // The remote end runs the command here, whatever host its own environment names.
      for (const name of ROUTING_VARIABLES) delete env[name];
      const refuse = (failure: FlumeError, asJson: boolean) => (printError(io, failure, asJson), failure.exitCode);
      return await answerRelay(process.stdin, (relayed) => again(relayed, io), (command, args) => calledHere(command, args, { ...options, env, cwd }), callerGone, { version: await flumeVersion(), refuse });
    }
    if (argv[0] === ATTACH_ENTRY) return await attachHere(argv.slice(1), { ...options, env, cwd });
    const where = await route(argv, env, COMMAND_LINES);
    if (where.to === 'here') return { argv: where.argv };
    const version = await flumeVersion();
    if (where.to === 'host' && io === processIo && where.argv[0] === 'status' && where.argv.includes('--watch') && Boolean(process.stdin.isTTY && process.stdout.isTTY)) {
      return await viewOnHost(where.host, env, version, where.argv);
    }
    if (where.to === 'host') return await relayed(where.host, where.argv, { cwd, env, version, output: io });
    const watch = where.argv.includes('--watch');
    const asked = where.argv.filter((arg) => arg !== '--json' && arg !== '--watch');
    const here = where.here ? () => captured(again, [...asked, '--json']) : undefined;
    const read = () => readAllHosts({ here, hosts: where.hosts, argv: asked, cwd, env, version });
    if (watch && io === processIo && Boolean(process.stdin.isTTY && process.stdout.isTTY)) return await viewAllHosts({ io, preset: options.preset, self: options.self, cwd, env }, read, where.hosts, version);
    if (watch) return await watchAllHosts(io, read);
    const report = await read();
    if (json) printJson(io, report);
    else await printAllHosts(io, report);
    return 0;
  } catch (error) {
    const failure = asFlumeError(error);
    printError(io, failure, json);
    return failure.exitCode;
  }
}

/** A command's `run` with its arguments as values and `--json`, as a surface calls it here; a refusal printed as --json prints it. */
async function calledHere(name: string, args: Record<string, unknown>, options: RoutedOptions & { env: NodeJS.ProcessEnv; cwd: string }): Promise<number> {
  const { commands } = await import('../commands.js');
  const command = commands.find((c) => c.command.split(' ')[0] === name);
  try {
    if (!command) throw flumeError('BAD_USAGE', { tool: JSON.stringify(name), tools: commands.map((c) => c.command.split(' ')[0]).join(', ') }, { variant: 'noTool' });
    return (await command.run({ ...args, json: true }, { io: options.io, preset: options.preset, self: options.self, cwd: options.cwd, env: options.env })) ?? 0;
  } catch (error) {
    const failure = asFlumeError(error);
    printError(options.io, failure, true);
    return failure.exitCode;
  }
}

/**
 * A command and its arguments as values, run on the named host's flume with `--json` (what a
 * surface such as the MCP server does for a call naming a host): answers with what the remote
 * printed and its exit code.
 */
export async function callOnHost(host: string, command: string, args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string }> {
  return relayCall(await namedHost(host, env), { command, args }, { env, version: await flumeVersion() });
}

/** The exit code of a relayed command this process ended: by SIGINT, by SIGTERM, or on its caller's pipe closing (as SIGPIPE would). */
const ENDED = { SIGINT: 130, SIGTERM: 143, EPIPE: 141 } as const;

/**
 * A relayed command run with the process's own streams: SIGINT or SIGTERM, or a write to a caller's
 * pipe that closed, kills its ssh (the remote's command ends with ssh's input) and answers at once
 * with the usual exit code. A closed pipe is seen only when the next output is written to it.
 */
async function relayed(host: NamedHost, argv: string[], options: Parameters<typeof relay>[2]): Promise<number> {
  if (options.output !== processIo) return relay(host, argv, options);
  const controller = new AbortController();
  const onInt = () => controller.abort(ENDED.SIGINT);
  const onTerm = () => controller.abort(ENDED.SIGTERM);
  const onClosed = (error: NodeJS.ErrnoException) => void (error.code === 'EPIPE' && controller.abort(ENDED.EPIPE));
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.stdout.on('error', onClosed);
  try {
    return await relay(host, argv, { ...options, signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) return controller.signal.reason as number;
    throw error;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.stdout.off('error', onClosed);
  }
}

async function captured(again: (argv: string[], io: Io) => Promise<number>, argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await again(argv, { stdout: (text) => void (stdout += text), stderr: () => undefined, isTTY: false });
  return { code, stdout };
}

/** How often `status --watch` over several hosts reads them again: another host's changes raise no event here. */
const ALL_HOSTS_POLL_MS = 5000;

/**
 * `status --watch` over several hosts: plain blocks, one each time the view changes, every place
 * named as commands take it (`HOST:kind/name` for another host's), each host that did not answer
 * listed under the table; until interrupted.
 */
async function watchAllHosts(io: Io, read: () => Promise<AllHostsReport>): Promise<number> {
  const [{ followStatus }, { render }] = await Promise.all([import('../view/status-follow.js'), import('../view/status-watch.js')]);
  const controller = new AbortController();
  onStop(() => controller.abort());
  let hosts: AllHostsReport['hosts'] = [];
  const named = async () => {
    const report = await read();
    hosts = report.hosts;
    return { ...report, places: report.places.map((p) => (p.host === THIS_HOST ? p : { ...p, id: `${p.host}:${p.id}` })) };
  };
  let shown = '';
  await followStatus(named, { signal: controller.signal, pollMs: ALL_HOSTS_POLL_MS }, ({ report, gone }) => {
    const view = render(report, { gone }) + hosts.filter((h) => h.state !== 'answered').map(hostLine).join('');
    if (view === shown) return;
    io.stdout(`${view}\n`);
    shown = view;
  });
  return 0;
}

function hostLine(host: AllHostsReport['hosts'][number]): string {
  const last = host.lastReadingAt ? `; last good reading ${host.lastReadingAt}` : '; never read';
  return `host ${host.name}${host.target ? ` (${host.target})` : ''}: ${host.state}: ${host.error?.code} ${host.error?.message}${last}\n`;
}

/**
 * `status --watch` over several hosts on a terminal: the interactive view of every host's places
 * (another host's named `HOST:kind/name`), read again every ALL_HOSTS_POLL_MS; its keys act on each
 * place's own host (host-actions.ts).
 */
async function viewAllHosts(context: CliContext, read: () => Promise<AllHostsReport>, hosts: NamedHost[], version: string): Promise<number> {
  const [{ interactiveStatus }, { processTerminal }, { hereActions }] = await Promise.all([import('../view/status-view.js'), import('../view/terminal.js'), import('../view/view-actions.js')]);
  const controller = new AbortController();
  onStop(() => controller.abort());
  const named = async () => {
    const report = await read();
    return { ...report, places: report.places.map((p) => (p.host === THIS_HOST ? p : { ...p, id: `${p.host}:${p.id}` })) };
  };
  await interactiveStatus(context, processTerminal(), named, { signal: controller.signal, pollMs: ALL_HOSTS_POLL_MS, actions: (view) => hostsActions(hereActions(view), hosts, context.env ?? process.env, version) });
  return 0;
}

/**
 * The remote end of attaching from another host's view (`flume __attach PLACE --repo REPO`, run
 * under `ssh -t`): this host's own attach command for the place, run on the terminal ssh gives it.
 */
async function attachHere(argv: string[], options: RoutedOptions & { env: NodeJS.ProcessEnv; cwd: string }): Promise<number> {
  const [{ attachCommand }, { runAttached }] = await Promise.all([import('../view/view-actions.js'), import('../../support/exec.js')]);
  const at = argv.indexOf('--repo');
  const id = argv[0];
  const repo = at >= 0 ? argv[at + 1] : undefined;
  if (!id || (at >= 0 && !repo)) throw flumeError('BAD_USAGE', { message: `${ATTACH_ENTRY} PLACE [--repo REPO] attaches this host's pane of a place for a view on another host; it is not a command.` }, { variant: 'parser' });
  const command = await attachCommand({ io: options.io, preset: options.preset, self: options.self, cwd: options.cwd, env: options.env }, { id, repo: repo ?? options.cwd });
  return (await runAttached(command.file, command.args, { env: command.env })) ?? 1;
}

/** A merged reading as plain lines: each host, then its places. */
async function printAllHosts(io: Io, report: AllHostsReport): Promise<void> {
  const { describePlace } = await import('../view/place-words.js');
  for (const host of report.hosts) {
    io.stdout(host.state === 'answered' ? `host ${host.name}${host.target ? ` (${host.target})` : ''}\n` : hostLine(host));
    for (const repository of report.repositories.filter((r) => r.host === host.name && r.error)) io.stdout(`  ${repository.root}: ${repository.error!.code} ${repository.error!.message}\n`);
    const places = report.places.filter((p) => p.host === host.name);
    if (host.state === 'answered' && places.length === 0) io.stdout('  no places\n');
    for (const place of places) io.stdout(describePlace(place).replace(/^/gm, '  ').replace(/ +$/gm, ''));
  }
}
