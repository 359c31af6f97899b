/**
 * The road to another host, taken in the bin's entry before any other: a command line naming a
 * host (`--host NAME`, `HOST:kind/name`, `FLUME_HOST`) runs on that host's flume with its output and
 * exit code relayed as they are; a merged `status` reads every host asked for; the remote end of a
 * relay (`flume __relay`) runs the request it reads on its standard input. Nothing of a command for
 * another host runs here: a host that cannot be reached is refused, never stood in for.
 */
import type { FlumePlugin } from '../../api/plugin.js';
import { flumeError } from '../../api/errors.js';
import { answerRelay, relay, relayCall, RELAY_ENTRY } from '../../hosts/relay.js';
import { namedHost } from '../../hosts/list.js';
import { route } from '../../hosts/route.js';
import { readAllHosts, type AllHostsReport } from '../../hosts/all-status.js';
import { flumeVersion } from '../command.js';
import { COMMAND_LINES } from '../options.js';
import { asFlumeError, printError, printJson } from '../output.js';
import type { Io } from '../process-io.js';
import { describePlace } from '../view/place-words.js';

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
      delete env.FLUME_HOST;
      return await answerRelay(process.stdin, (relayed) => again(relayed, io), (command, args) => calledHere(command, args, { ...options, env, cwd }));
    }
    const where = await route(argv, env, COMMAND_LINES);
    if (where.to === 'here') return { argv: where.argv };
    const version = await flumeVersion();
    if (where.to === 'host') return await relay(where.host, where.argv, { cwd, env, version, output: io });
    const here = where.here ? () => captured(again, [...where.argv.filter((arg) => arg !== '--json'), '--json']) : undefined;
    const report = await readAllHosts({ here, hosts: where.hosts, argv: where.argv, cwd, env, version });
    if (json) printJson(io, report);
    else printAllHosts(io, report);
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

async function captured(again: (argv: string[], io: Io) => Promise<number>, argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await again(argv, { stdout: (text) => void (stdout += text), stderr: () => undefined, isTTY: false });
  return { code, stdout };
}

/** A merged reading as plain lines: each host, then its places. */
function printAllHosts(io: Io, report: AllHostsReport): void {
  for (const host of report.hosts) {
    const where = host.target ? ` (${host.target})` : '';
    const last = host.lastReadingAt ? `; last good reading ${host.lastReadingAt}` : '; never read';
    io.stdout(host.state === 'answered' ? `host ${host.name}${where}\n` : `host ${host.name}${where}: ${host.state}: ${host.error?.code} ${host.error?.message}${last}\n`);
    for (const repository of report.repositories.filter((r) => r.host === host.name && r.error)) io.stdout(`  ${repository.root}: ${repository.error!.code} ${repository.error!.message}\n`);
    const places = report.places.filter((p) => p.host === host.name);
    if (host.state === 'answered' && places.length === 0) io.stdout('  no places\n');
    for (const place of places) io.stdout(describePlace(place).replace(/^/gm, '  ').replace(/ +$/gm, ''));
  }
}
