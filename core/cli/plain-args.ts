/**
 * The command lines of the commands run most (`launch`, `tell`, `stop`, `drop`, `retry`, `go-on`,
 * `stage`, and the read commands callers poll, `status` and `kinds`) in their plain forms, parsed
 * without yargs: loading yargs and every command's module costs about 200 ms of CPU, more than the
 * rest of a refused launch or a status. The warm answer (warm.ts) takes exactly the plain forms of
 * `status` and `kinds` too. Each command's grammar below is its yargs builder's, restricted to forms
 * whose meaning is beyond doubt: each option at most once, a value option's value given (as
 * `--opt value` or `--opt=value`) and neither empty nor starting with `-`, a boolean bare (`--json`; `--no-start`/`--no-watch` for those that default on), positionals neither
 * empty nor starting with `-`, every required one given. Anything else (a typo, `--help`, `--`, a flag
 * twice, a value that looks like a flag, a missing argument) returns undefined and goes through yargs,
 * which checks and words it. test/unit/cli/plain-args.test.ts parses each form both ways and
 * compares. Imports nothing: index.ts loads it before it knows which command runs.
 */

/** What a command line may hold, as its yargs builder declares it. */
interface Grammar {
  /** The positionals in order; the first `required` of them must be given. */
  positionals: string[];
  required: number;
  /** Options that take a value. */
  values: string[];
  /** Boolean options with no default: given means true. */
  flags: string[];
  /** Boolean options that default to true: `--no-<name>` gives false. */
  on: string[];
  /** Options the command cannot run without (yargs' demandOption). */
  demanded?: string[];
  /** Pairs yargs refuses together. */
  conflicts?: Array<[string, string]>;
}

const PLACE_COMMAND = { positionals: ['place'], required: 1, values: ['repo'], flags: ['json'], on: ['watch'] };

const GRAMMARS: Record<string, Grammar> = {
  launch: {
    positionals: [],
    required: 0,
    values: ['repo', 'kind', 'name', 'brief', 'brief-file', 'from'],
    flags: ['json', 'auto-name', 'dry-run'],
    on: ['start', 'watch'],
    demanded: ['kind'],
    conflicts: [['auto-name', 'name']],
  },
  tell: { ...PLACE_COMMAND, positionals: ['place', 'text'], values: ['repo', 'file'] },
  stop: { ...PLACE_COMMAND, flags: ['json', 'force'] },
  drop: { ...PLACE_COMMAND, values: ['repo', 'reason'] },
  retry: PLACE_COMMAND,
  'go-on': { ...PLACE_COMMAND, values: ['repo', 'note'] },
  stage: { ...PLACE_COMMAND, positionals: ['place', 'stage'], required: 2 },
  // `status --watch` (a view that runs on) goes through yargs.
  status: { positionals: ['place'], required: 0, values: ['repo'], flags: ['json'], on: [] },
  kinds: { positionals: [], required: 0, values: ['repo'], flags: ['json'], on: [] },
};

/** A command line parsed without yargs: the command and the arguments its `run` is handed. */
export interface PlainArgs {
  command: string;
  args: Record<string, unknown>;
}

/** The command and its arguments, as yargs would hand them to `run`; undefined for any other form. */
export function plainArgs(argv: string[]): PlainArgs | undefined {
  const [command, ...rest] = argv;
  const grammar = Object.hasOwn(GRAMMARS, command) ? GRAMMARS[command] : undefined;
  if (!grammar) return undefined;
  const plain = (value: string | undefined): value is string => value !== undefined && value !== '' && !value.startsWith('-');
  const args: Record<string, unknown> = {};
  const seen = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      if (!plain(arg) || positionals.length >= grammar.positionals.length) return undefined;
      positionals.push(arg);
      continue;
    }
    const [flag, inline] = arg.includes('=') ? [arg.slice(2, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg.slice(2), undefined];
    const negated = flag.startsWith('no-') ? flag.slice(3) : undefined;
    const name = negated !== undefined && grammar.on.includes(negated) ? negated : flag;
    if (seen.has(name)) return undefined;
    seen.add(name);
    if (grammar.values.includes(name)) {
      const value = inline ?? rest[++i];
      if (!plain(value)) return undefined;
      args[name] = value;
    } else if (inline === undefined && (grammar.flags.includes(name) || grammar.on.includes(name))) {
      args[name] = negated === undefined;
    } else {
      return undefined;
    }
  }
  if (positionals.length < grammar.required) return undefined;
  if ((grammar.demanded ?? []).some((name) => args[name] === undefined)) return undefined;
  if ((grammar.conflicts ?? []).some(([a, b]) => args[a] !== undefined && args[b] !== undefined)) return undefined;
  for (const name of grammar.on) args[name] ??= true;
  grammar.positionals.forEach((name, i) => {
    if (i < positionals.length) args[name] = positionals[i];
  });
  return { command, args };
}
