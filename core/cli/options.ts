/**
 * What each command's line may hold, declared once as data: its positionals and options, each with
 * its type, description and default. Every command's yargs builder and usage line (`yargsBuilder`,
 * `commandLine`) and the plain parser (plain-args.ts) are derived from it, so the two parsers cannot
 * drift apart. Imports nothing at run time: the plain parser and the warm answer read it before any
 * command's module is loaded.
 */
import type { Argv, Options } from 'yargs';

/** One option: what yargs is told of it, and what the plain parser reads of it. */
export interface OptionSpec {
  /** A value option (`string`, `number`, `array`) must be given its value: `--opt` alone is bad usage. */
  type: 'boolean' | 'string' | 'number' | 'array';
  describe: string;
  alias?: string | readonly string[];
  default?: string | number | boolean;
  choices?: ReadonlyArray<string | number>;
  /** The command cannot run without it. */
  demand?: boolean;
  /** An option that may not be given beside this one. */
  conflicts?: string;
}

/** One positional, in the order the command line takes them. */
export interface PositionalSpec {
  name: string;
  type: 'string' | 'number';
  describe: string;
  /** Required; the required positionals come before the optional ones. */
  demand?: boolean;
}

/** A command's line: its positionals and its options, in the order `--help` lists them. */
export interface CommandLine {
  positionals: readonly PositionalSpec[];
  options: Readonly<Record<string, OptionSpec>>;
}

/** `--repo`, with the description the command gives it. */
export function repoOption(describe = 'The repository (default: the current folder).'): OptionSpec {
  return { type: 'string', describe };
}

/** `--json`. */
export const JSON_OPTION: OptionSpec = { type: 'boolean', describe: 'Print JSON (its schema is published with flume).' };

/** The `--watch` of a command that changes a place. */
export const WATCH_AFTER: OptionSpec = {
  type: 'boolean',
  default: true,
  describe: 'Start the supervisor in the background when none runs (--no-watch: not now; a place launched with --no-watch never asks).',
};

/** `--wait` and what it waits for, on the commands that act on a place. */
const WAIT_OPTIONS = {
  wait: { type: 'boolean', describe: 'After acting, wait as `flume wait` does for the stage to end, then print the place as status does.' },
  for: { type: 'string', describe: 'With --wait (or wait): the outcomes to wait for, comma-separated (delivered, waiting, stuck, never-started, over-budget, awaits-caller, not-ready, dropped, kept, gone); default any.' },
  timeout: { type: 'string', describe: 'With --wait (or wait): give up after this long (e.g. 90s, 20m): WAIT_TIMEOUT, exit 4.' },
} satisfies Record<string, OptionSpec>;

/** The place a command acts on. */
const PLACE: PositionalSpec = { name: 'place', type: 'string', demand: true, describe: 'The place: kind/name, kind--name, or its folder.' };

/** The options of every command that changes a place. */
const PLACE_OPTIONS = { repo: repoOption(), json: JSON_OPTION, watch: WATCH_AFTER };

/** Every command's line, by the command's name. */
export const COMMAND_LINES = {
  launch: {
    positionals: [],
    options: {
      repo: repoOption('The repository to launch in (default: the current folder).'),
      json: JSON_OPTION,
      kind: { type: 'string', demand: true, describe: 'The kind: fix, change, question, or one the repository declares.' },
      name: { type: 'string', describe: 'The launch name: the place is places/<kind>--<name> on <kind>/<name>.' },
      'auto-name': { type: 'boolean', conflicts: 'name', describe: 'Make the name from the brief (a suffix when taken), for callers that give none.' },
      brief: { type: 'string', describe: 'The brief: what the work is.' },
      'brief-file': { type: 'string', describe: 'A file holding the brief.' },
      from: { type: 'string', describe: 'Where the branch starts (default: the branch the main checkout is on).' },
      start: { type: 'boolean', default: true, describe: 'Start the first stage\'s agent (--no-start only makes and readies the place).' },
      watch: { type: 'boolean', default: true, describe: 'Start the supervisor in the background when none runs (--no-watch for scripts that step places themselves).' },
      container: { type: 'string', describe: 'Run the place\'s agents in a container of this image, already on this machine (docs/containers.md); the engine and mounts are the config\'s agent.container.' },
      'dry-run': { type: 'boolean', describe: 'Make every check of the launch and print what it would do (place, branch, readying, the agent\'s command and its whole prompt), changing nothing.' },
      ...WAIT_OPTIONS,
    },
  },
  status: {
    positionals: [{ name: 'place', type: 'string', describe: 'Only this place (kind/name, kind--name, or its folder).' }],
    options: {
      repo: repoOption('Only the places of this repository.'),
      json: JSON_OPTION,
      watch: {
        type: 'boolean',
        conflicts: 'json',
        describe: 'A live view, redrawn when a place changes: on a terminal, interactive (↑↓/j k move; a attach, t tell, s stop, S stop even while it works, r retry, g go on, n next where a place waits at a gate, d drop, q quit; the bell rings once when a place comes to wait); plain blocks when not a terminal. With a place, it ends (exit 0) once the place is tidied.',
      },
    },
  },
  kinds: { positionals: [], options: { repo: repoOption(), json: JSON_OPTION } },
  plugins: { positionals: [], options: { repo: repoOption(), json: JSON_OPTION } },
  tell: {
    positionals: [PLACE, { name: 'text', type: 'string', describe: 'What to tell it.' }],
    options: { ...PLACE_OPTIONS, file: { type: 'string', describe: 'A file holding what to tell it.' }, ...WAIT_OPTIONS },
  },
  stop: {
    positionals: [PLACE],
    options: { ...PLACE_OPTIONS, force: { type: 'boolean', describe: 'End it even while it works (what it is doing is lost).' } },
  },
  retry: { positionals: [PLACE], options: { ...PLACE_OPTIONS, ...WAIT_OPTIONS } },
  'go-on': {
    positionals: [PLACE],
    options: { ...PLACE_OPTIONS, note: { type: 'string', describe: 'The operator\'s notes for the next round.' } },
  },
  stage: {
    positionals: [PLACE, { name: 'stage', type: 'string', demand: true, describe: 'The stage name.' }],
    options: { ...PLACE_OPTIONS, ...WAIT_OPTIONS },
  },
  next: {
    positionals: [PLACE],
    options: { ...PLACE_OPTIONS, note: { type: 'string', describe: 'Notes for the stage that starts: they join its brief.' }, ...WAIT_OPTIONS },
  },
  wait: {
    positionals: [PLACE],
    options: { repo: repoOption(), json: JSON_OPTION, watch: WATCH_AFTER, for: WAIT_OPTIONS.for, timeout: WAIT_OPTIONS.timeout },
  },
  events: {
    positionals: [{ name: 'place', type: 'string', describe: 'Only this place\'s events (kind/name), tidied or not.' }],
    options: {
      repo: repoOption('The repository whose events to print (default: the current folder\'s).'),
      json: { type: 'boolean', describe: 'One JSON line per event (events.schema.json).' },
      since: { type: 'string', describe: 'Only the events after this id.' },
      follow: { type: 'boolean', describe: 'Keep printing events as they happen, until interrupted.' },
    },
  },
  drop: {
    positionals: [PLACE],
    options: { ...PLACE_OPTIONS, reason: { type: 'string', describe: 'Why it was dropped (shown in status).' } },
  },
  tidy: {
    positionals: [{ name: 'place', type: 'string', describe: 'Only this place (kind/name); default every place of the repository.' }],
    options: { repo: repoOption(), json: JSON_OPTION, 'dry-run': { type: 'boolean', describe: 'Say what would be removed and kept; change nothing.' } },
  },
  watch: {
    positionals: [],
    options: {
      poll: { type: 'string', default: '30s', describe: 'The slow poll behind the file-system events (e.g. 30s).' },
      linger: { type: 'string', default: '10m', describe: 'Exit after this long with no place on the host (0: never).' },
      quiet: { type: 'boolean', describe: 'Print nothing.' },
    },
  },
  trust: {
    positionals: [],
    options: {
      repo: repoOption('The repository to trust (default: the current folder).'),
      json: JSON_OPTION,
      revoke: { type: 'boolean', describe: 'Take the trust back: flume then refuses to run the config.' },
    },
  },
  doctor: { positionals: [], options: { repo: repoOption('The repository to check (default: the current folder, if it is one).'), json: JSON_OPTION } },
  version: { positionals: [], options: { repo: repoOption('The repository whose agents to ask (default: the current folder, if it is one).'), json: JSON_OPTION } },
  hosts: {
    positionals: [
      { name: 'action', type: 'string', describe: 'add or remove; none lists the hosts.' },
      { name: 'name', type: 'string', describe: 'The host\'s name, as --host NAME and HOST:kind/name take it.' },
      { name: 'target', type: 'string', describe: 'Where ssh reaches it (add): user@host or a ~/.ssh/config alias.' },
    ],
    options: {
      json: JSON_OPTION,
      flume: { type: 'string', describe: 'The command that runs flume on the host (add; default: flume on its login PATH).' },
    },
  },
} satisfies Record<string, CommandLine>;

/** The name of a command. */
export type CommandName = keyof typeof COMMAND_LINES;

/** A command's line and its usage as yargs reads it (`tell <place> [text]`). */
export function commandLine(name: CommandName): { command: string; line: CommandLine } {
  const line: CommandLine = COMMAND_LINES[name];
  return { command: [name, ...line.positionals.map((p) => (p.demand ? `<${p.name}>` : `[${p.name}]`))].join(' '), line };
}

/** The yargs builder of a command's line: each option, then each positional, as the data declares it. */
export function yargsBuilder(line: CommandLine): (yargs: Argv) => Argv {
  return (yargs) => {
    let built = yargs;
    for (const [name, option] of Object.entries(line.options)) built = built.option(name, yargsOption(option));
    for (const { name, type, describe } of line.positionals) built = built.positional(name, { type, describe });
    return built;
  };
}

/** An option as yargs takes it, with only the keys the data gives (yargs reads `'default' in`). */
function yargsOption(option: OptionSpec): Options {
  const { type, describe, alias, default: byDefault, choices, demand, conflicts } = option;
  return {
    type,
    describe,
    ...(type !== 'boolean' ? { requiresArg: true } : {}),
    ...(alias !== undefined ? { alias: alias as string | string[] } : {}),
    ...(byDefault !== undefined ? { default: byDefault } : {}),
    ...(choices !== undefined ? { choices: [...choices] } : {}),
    ...(demand ? { demandOption: true } : {}),
    ...(conflicts !== undefined ? { conflicts } : {}),
  };
}
