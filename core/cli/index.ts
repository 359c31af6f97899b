/**
 * The CLI: yargs commands, one file each. The only place that prints or decides an exit code.
 * It names no built-in: the preset of plugins is handed in by bin/flume.ts, loaded only by the
 * commands that need it, so `flume status` with no places starts fast.
 */
import type { FlumePlugin } from '../plugin.js';
import { FlumeError } from '../errors.js';
import { asFlumeError, cliLogger, printError, processIo, type Io } from './output.js';
import type { Logger } from '../types.js';
import { readArgs, readCommandArgs } from './read-args.js';

/** What every command handler is handed. */
export interface CliContext {
  io: Io;
  /** The built-in plugins; loaded on first use. */
  preset(): Promise<FlumePlugin[]>;
  /** The path of the flume executable, for commands that start flume in the background. */
  self: string;
  /** What plugins log through (`flume.logger`): stderr, by `FLUME_LOG`. */
  logger?: Logger;
}

/** Runs flume with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], preset: () => Promise<FlumePlugin[]>, options: { io?: Io; self?: string } = {}): Promise<number> {
  const io = options.io ?? processIo;
  const context: CliContext = { io, preset: once(preset), self: options.self ?? process.argv[1], logger: cliLogger(io) };
  const json = argv.includes('--json') || argv.includes('--json=true');
  const asked = argv.filter((arg) => arg !== '--json');
  if (asked.length === 1 && (asked[0] === '--version' || asked[0] === '-V') && argv.length - asked.length <= 1) {
    const version = await flumeVersion();
    io.stdout(json ? JSON.stringify({ flume: version, node: process.versions.node }, null, 2) + '\n' : `${version}\n`);
    return 0;
  }
  const read = readArgs(argv);
  if (read) {
    // The forms callers poll (`status [place] [--json] [--repo DIR]`, `kinds [--json] [--repo DIR]`)
    // run without the argument parser, which costs about as much as starting node (and renders the
    // command's help for every run); anything else (another flag, a typo) goes through yargs below.
    try {
      const { command } = read.command === 'status' ? { command: (await import('./status.js')).statusCommand } : { command: (await import('./kinds.js')).kindsCommand };
      return (await command.run(readCommandArgs(read), context)) ?? 0;
    } catch (error) {
      const failure = asFlumeError(error);
      printError(io, failure, json);
      return failure.exitCode;
    }
  }
  const [{ default: yargs }, { commands }] = await Promise.all([import('yargs'), import('./commands.js')]);
  let usageError: string | undefined;
  let code = 0;
  const parser = yargs(argv)
    .scriptName('flume')
    .usage('flume <command> [options]\n\nStarts coding agents on work in places (git worktrees) and keeps them honest.')
    .strict()
    .demandCommand(1, 'Name a command.')
    .recommendCommands()
    .help()
    .version(false)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .check((args, options: { string?: string[] }) => {
      // A value flag given twice would reach a command as "a,b": refuse it rather than guess.
      const twice = (options.string ?? []).find((key) => Array.isArray(args[key]));
      return twice ? `Give --${twice} once.` : true;
    }, true)
    .fail((message, error) => {
      // yargs reports its own parse errors (a flag missing its value) as a YError: bad usage too.
      if (error instanceof Error && error.name !== 'YError') throw error;
      // Throwing stops yargs here: a command must never run on arguments it refused.
      usageError = message;
      throw new FlumeError('BAD_USAGE', message);
    });
  skipHelpRendering(parser);
  for (const command of commands) {
    parser.command({
      command: command.command,
      describe: command.describe,
      builder: command.builder,
      handler: async (args) => {
        code = (await command.run(args as Record<string, unknown>, context)) ?? 0;
      },
    });
  }
  let helpShown = false;
  try {
    await parser.parseAsync(argv, {}, (_error, _argv, output) => {
      if (output && !usageError) {
        helpShown = true;
        io.stdout(output + '\n');
      }
    });
  } catch (error) {
    if (usageError) return usage(io, usageError, json);
    const failure = asFlumeError(error);
    printError(io, failure, json);
    return failure.exitCode;
  }
  if (usageError) return usage(io, usageError, json);
  return helpShown ? 0 : code;
}


/**
 * yargs renders a command's whole help before running its handler, kept for a handler that shows help
 * later; flume's handlers never do (help is shown by `--help`, which yargs renders afresh), and the
 * rendering measures every line's width: about 30 ms of every command. It is skipped. The hook is
 * yargs' own usage object; should a later yargs move it, nothing is skipped and nothing breaks.
 */
function skipHelpRendering(parser: object): void {
  type Usage = { cacheHelpMessage?: () => void };
  const internal = (parser as { getInternalMethods?: () => { getUsageInstance?: () => Usage } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

/** flume's own version, from its package.json. */
export async function flumeVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function usage(io: Io, message: string, json: boolean): number {
  printError(io, new FlumeError('BAD_USAGE', message, { fix: 'Run `flume --help` or `flume <command> --help` for the usage.' }), json);
  return 2;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= load());
}
