/**
 * The CLI: yargs commands, one file each. The only place that prints or decides an exit code.
 * It names no built-in: the preset of plugins is handed in by bin/flume.ts, loaded only by the
 * commands that need it, so `flume status` with no places starts fast.
 */
import type { FlumePlugin } from '../api/plugin.js';
import { flumeError } from '../api/errors.js';
import { asFlumeError, cliLogger, printError, processIo, type Io } from './output.js';
import type { Logger } from '../api/plugin.js';
import { plainArgs } from './plain-args.js';
import { flumeVersion, type CliContext, type Command } from './command.js';
import { yargsBuilder } from './options.js';
import { environmentLimitProblem } from '../support/duration.js';

/** Runs flume with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], preset: () => Promise<FlumePlugin[]>, options: { io?: Io; self?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  const io = options.io ?? processIo;
  const env = options.env ?? process.env;
  const self = options.self ?? process.argv[1];
  const cwd = options.cwd ?? process.cwd();
  const loaded = once(preset);
  // A warm answer's command runs with the supervisor's own folder and environment (warm.ts checks they match the asker's).
  const context: CliContext = { io, preset: loaded, self, logger: cliLogger(io, env), cwd, env, rerun: (again, io) => runCli(again, loaded, { io, self }) };
  const json = argv.includes('--json') || argv.includes('--json=true');
  const asked = argv.filter((arg) => arg !== '--json');
  if (asked.length === 1 && (asked[0] === '--version' || asked[0] === '-V') && argv.length - asked.length <= 1) {
    const version = await flumeVersion();
    io.stdout(json ? JSON.stringify({ flume: version, node: process.versions.node }, null, 2) + '\n' : `${version}\n`);
    return 0;
  }
  const limit = environmentLimitProblem(env);
  if (limit) {
    printError(io, limit, json);
    return limit.exitCode;
  }
  // The plain forms of the commands run most and of those callers poll (plain-args.ts) run without the
  // argument parser, which costs more than starting node; anything else (another flag, a typo) goes
  // through yargs below.
  const plain = plainArgs(argv);
  if (plain) {
    try {
      const command = await PLAIN_COMMANDS[plain.command]();
      return (await command.run(plain.args, context)) ?? 0;
    } catch (error) {
      const failure = asFlumeError(error);
      printError(io, failure, json);
      return failure.exitCode;
    }
  }
  let usageError: string | undefined;
  let code = 0;
  const parser = await argumentParser(argv, {
    run: async (command, args) => {
      code = (await command.run(args, context)) ?? 0;
    },
    refuse: (message) => {
      usageError = message;
    },
  });
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
 * flume's yargs parser over `argv`, every command registered: `run` is handed the command and its
 * arguments, `refuse` a usage error (after which the parse throws, so no command runs on it).
 * Exported for the test that compares the plain parse (plain-args.ts) with it.
 */
export async function argumentParser(argv: string[], on: { run: (command: Command, args: Record<string, unknown>) => Promise<void>; refuse: (message: string) => void }) {
  const [{ default: yargs }, { commands }] = await Promise.all([import('yargs'), import('./commands.js')]);
  const parser = yargs(argv)
    .scriptName('flume')
    .usage('flume <command> [options]\n\nStarts coding agents on work in places (git worktrees) and keeps them honest.')
    .epilogue(HOSTS_HELP)
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
      on.refuse(message);
      throw flumeError('BAD_USAGE', { message }, { variant: 'parser' });
    });
  skipHelpRendering(parser);
  for (const command of commands) {
    parser.command({
      command: command.command,
      describe: command.describe,
      builder: command.command.startsWith('status') ? (y) => yargsBuilder(command.line)(y).epilogue(STATUS_HOSTS_HELP) : yargsBuilder(command.line),
      handler: (args) => on.run(command, args as Record<string, unknown>),
    });
  }
  return parser;
}

/** What `--help` says of the host options, which are taken off the command line before any parser reads it. */
const HOSTS_HELP = 'Other hosts: --host NAME (or FLUME_HOST=NAME, or a place named NAME:kind/name) runs the command on that host\'s flume over ssh, its output and exit code relayed; `flume status --all-hosts` reads this host and every named one at once; `flume hosts add NAME SSH-TARGET` names a host. See docs/hosts.md.';

/** What `flume status --help` says of them. */
const STATUS_HOSTS_HELP = `Other hosts: --host NAME reads that host's flume (given more than once, each host named, merged); --all-hosts reads this host and every host \`flume hosts\` names in one reading, each place and repository with its host (with --watch, the view of every host's places, named NAME:kind/name, its keys acting on each place's own host).`;

/** The commands a command line may run without yargs, each loaded alone. */
const PLAIN_COMMANDS: Record<string, () => Promise<Command>> = {
  status: async () => (await import('./commands/status.js')).statusCommand,
  kinds: async () => (await import('./commands/kinds.js')).kindsCommand,
  launch: async () => (await import('./commands/launch.js')).launchCommand,
  tell: async () => (await import('./commands/agent-commands.js')).tellCommand,
  stop: async () => (await import('./commands/agent-commands.js')).stopCommand,
  retry: async () => (await import('./commands/agent-commands.js')).retryCommand,
  'go-on': async () => (await import('./commands/agent-commands.js')).goOnCommand,
  stage: async () => (await import('./commands/agent-commands.js')).stageCommand,
  drop: async () => (await import('./commands/drop.js')).dropCommand,
};

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

function usage(io: Io, message: string, json: boolean): number {
  printError(io, flumeError('BAD_USAGE', { message }, { variant: 'parser' }), json);
  return 2;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= load());
}
