/**
 * The command lines of the commands run most (`launch`, `tell`, `stop`, `drop`, `retry`, `go-on`,
 * `stage`, and the read commands callers poll, `status` and `kinds`) in their plain forms, parsed
 * without yargs: loading yargs and every command's module costs about 200 ms of CPU, more than the
 * rest of a refused launch or a status. The warm answer (warm.ts) takes exactly the plain forms of
 * `status` and `kinds` too. Each command's grammar is its line as options.ts declares it, the same
 * data its yargs builder is derived from, restricted by one rule (at `PLAIN_FORMS`) to the forms
 * whose meaning is beyond doubt. Anything else (a typo, `--help`, `--`, a flag twice, a value
 * that looks like a flag, a missing argument) returns undefined and goes through yargs, which checks
 * and words it. test/unit/cli/plain-args.test.ts parses each form both ways and compares. Imports
 * only options.ts, data: index.ts loads it before it knows which command runs.
 */
import { COMMAND_LINES, type CommandLine, type CommandName, type OptionSpec } from './options.js';

/**
 * The commands with plain forms, each with the options its plain forms leave to yargs: `status
 * --watch` is a view that runs on, which the warm answer must not take.
 *
 * The rule of the plain forms, over a command's line (the one place it is stated):
 * - each option at most once, by its own name (`--name`; never an alias or a short flag);
 * - a `string` option's value given, as `--opt value` or `--opt=value`, neither empty nor starting
 *   with `-`, and one of its choices when it has them;
 * - a `boolean` bare (`--json`), or `--no-<name>` for one that defaults to true;
 * - positionals neither empty nor starting with `-`, no more than declared, every required one
 *   given; `number` and `array` options and `number` positionals are never plain;
 * - every demanded option given, no two that conflict, none of the options left out below.
 * Options not given take their defaults, as yargs gives them.
 */
export const PLAIN_FORMS: Record<string, readonly string[]> = {
  launch: [],
  tell: [],
  stop: [],
  drop: [],
  retry: [],
  'go-on': [],
  stage: [],
  status: ['watch'],
  kinds: [],
};

/** A command line parsed without yargs: the command and the arguments its `run` is handed. */
export interface PlainArgs {
  command: string;
  args: Record<string, unknown>;
}

/** The command and its arguments, as yargs would hand them to `run`; undefined for any other form. */
export function plainArgs(argv: string[]): PlainArgs | undefined {
  const [command, ...rest] = argv;
  if (!Object.hasOwn(PLAIN_FORMS, command)) return undefined;
  const line: CommandLine = COMMAND_LINES[command as CommandName];
  const options = new Map(Object.entries(line.options).filter(([name, option]) => !PLAIN_FORMS[command].includes(name) && (option.type === 'string' || option.type === 'boolean')));
  const defaultsOn = (option: OptionSpec | undefined) => option?.type === 'boolean' && option.default === true;
  const plain = (value: string | undefined): value is string => value !== undefined && value !== '' && !value.startsWith('-');
  const args: Record<string, unknown> = {};
  const seen = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      if (!plain(arg) || line.positionals[positionals.length]?.type !== 'string') return undefined;
      positionals.push(arg);
      continue;
    }
    const [flag, inline] = arg.includes('=') ? [arg.slice(2, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg.slice(2), undefined];
    const negated = flag.startsWith('no-') && defaultsOn(options.get(flag.slice(3))) ? flag.slice(3) : undefined;
    const name = negated ?? flag;
    const option = options.get(name);
    if (!option || seen.has(name)) return undefined;
    seen.add(name);
    if (option.type === 'string') {
      const value = inline ?? rest[++i];
      if (!plain(value) || (option.choices && !option.choices.includes(value))) return undefined;
      args[name] = value;
    } else if (inline === undefined) {
      args[name] = negated === undefined;
    } else {
      return undefined;
    }
  }
  if (positionals.length < line.positionals.filter((p) => p.demand).length) return undefined;
  for (const [name, option] of options) {
    if (option.demand && args[name] === undefined) return undefined;
    if (option.conflicts !== undefined && args[name] !== undefined && args[option.conflicts] !== undefined) return undefined;
  }
  for (const [name, option] of options) if (option.default !== undefined) args[name] ??= option.default;
  line.positionals.forEach(({ name }, i) => {
    if (i < positionals.length) args[name] = positionals[i];
  });
  for (const [name, option] of options) {
    for (const alias of [option.alias ?? []].flat()) if (args[name] !== undefined) args[alias] = args[name];
  }
  return { command, args };
}
