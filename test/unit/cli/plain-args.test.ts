/**
 * The plain forms of launch, tell, stop, drop, retry, go-on, stage, status and kinds are parsed without yargs
 * (core/cli/plain-args.ts): each form taken must give `run` exactly what yargs gives it, and every
 * other form must be left to yargs. Both parsers are derived from each command's line
 * (core/cli/options.ts): the command lines below are written by hand, and then derived from those
 * lines, each option alone and all together, beside the command's positionals.
 */
import { describe, expect, it } from 'vitest';
import { PLAIN_FORMS, plainArgs } from '../../../core/cli/plain-args.js';
import { argumentParser } from '../../../core/cli/index.js';
import { commands } from '../../../core/cli/commands.js';
import type { CommandLine, OptionSpec } from '../../../core/cli/options.js';

/** What yargs hands the command's `run` for `argv` (the keys a command reads), or its refusal. */
async function viaYargs(argv: string[]): Promise<{ command?: string; args?: Record<string, unknown>; refused?: string }> {
  let seen: { command?: string; args?: Record<string, unknown>; refused?: string } = {};
  const parser = await argumentParser(argv, {
    run: async (command, args) => {
      seen = { command: command.command.split(' ')[0], args };
    },
    refuse: (message) => {
      seen = { refused: message };
    },
  });
  // yargs throws a refusal found before the command runs, and rejects with one found after.
  await Promise.resolve()
    .then(() => parser.parseAsync(argv, {}, () => undefined))
    .catch(() => undefined);
  return seen;
}

/** The arguments as a command reads them: yargs' own keys and its camelCase copies left out, unset ones dropped. */
function asRead(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([key, value]) => key !== '_' && key !== '$0' && !/[A-Z]/.test(key) && value !== undefined));
}

/** Every order of a list (small lists only). */
function orders<T>(items: T[][]): T[][] {
  if (items.length <= 1) return items.length ? [items[0]] : [[]];
  return items.flatMap((first, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [...first, ...rest]));
}

const TAKEN: string[][] = [
  ...orders([['--kind', 'fix'], ['--name', 'n1'], ['--brief', 'do it'], ['--repo', '/r']]).map((rest) => ['launch', ...rest]),
  ['launch', '--kind=fix', '--name=n', '--brief=a=b', '--repo=/r'],
  ['launch', '--kind', 'fix', '--auto-name', '--brief', 'b', '--json'],
  ['launch', '--kind', 'fix', '--name', '123', '--brief-file', 'brief.md', '--from', 'main', '--no-start', '--no-watch', '--dry-run', '--json'],
  ['launch', '--no-watch', '--kind', 'question', '--name', 'q', '--brief', 'what?\nand why', '--start'],
  ['launch', '--kind', 'fix', '--name', 'n'],
  ['tell', 'fix/a', 'hello there'],
  ['tell', 'fix/a', '--file', 'answer.md', '--json', '--no-watch'],
  ['tell', '--repo', '/r', 'fix/a', 'say "x" $(y)'],
  ['tell', 'fix/a'],
  ['stop', 'fix/a', '--force', '--json'],
  ['stop', '--force', 'fix--a', '--repo', '/r', '--watch'],
  ['stop', '/r/places/fix--a'],
  ['drop', 'fix/a', '--reason', 'not needed', '--no-watch'],
  ['drop', 'fix/a', '--json'],
  ['retry', 'fix/a', '--json', '--repo=/r'],
  ['go-on', 'question/q', '--note', 'look at x'],
  ['stage', 'unit/a', 'review', '--no-watch', '--json'],
  // The read commands callers poll: status with at most one place, kinds, each with --json and --repo
  // at most once, in any order (the warm answer takes exactly these too).
  ['status'],
  ['status', '--json'],
  ['status', 'fix/a', '--json'],
  ['status', '--json', 'fix/a'],
  ['status', '--repo', 'x', '--json'],
  ['status', '--repo=x', 'fix/a'],
  ['kinds'],
  ['kinds', '--json', '--repo', '/r'],
];

const LEFT: string[][] = [
  ['launch'],
  ['launch', '--name', 'n', '--brief', 'b'],
  ['launch', '--kind', 'fix', '--name', 'n', '--auto-name'],
  ['launch', '--kind', 'fix', '--name', 'a', '--name', 'b'],
  ['launch', '--kind', 'fix', '--name', '-x'],
  ['launch', '--kind', 'fix', '--name', ''],
  ['launch', '--kind', 'fix', '--name'],
  ['launch', '--kind', 'fix', '--name=', '--brief', 'b'],
  ['launch', '--kind', 'fix', '--bogus'],
  ['launch', '--kind', 'fix', '--json=true'],
  ['launch', '--kind', 'fix', '--no-json'],
  ['launch', '--kind', 'fix', '--no-start', '--start'],
  ['launch', '--kind', 'fix', '--no-watch', '--watch'],
  ['launch', '--kind', 'fix', 'extra'],
  ['launch', '--kind', 'fix', '--help'],
  ['launch', '-h'],
  ['launch', '--kind', 'fix', '--', '--name'],
  ['launch', '--kind', 'fix', '-j'],
  ['tell'],
  ['tell', 'fix/a', 'one', 'two'],
  ['tell', 'fix/a', '-n'],
  ['tell', 'fix/a', ''],
  ['tell', 'fix/a', '--force'],
  ['stop'],
  ['stop', 'fix/a', '--force=false'],
  ['stop', 'fix/a', '--no-force'],
  ['drop', 'fix/a', '--reason'],
  ['stage', 'unit/a'],
  ['status', 'a', 'b'],
  ['status', '--json', '--json'],
  ['status', '--repo', 'x', '--repo', 'y'],
  ['status', '--repo'],
  ['status', '--repo', '--json'],
  ['status', '--repo='],
  ['status', '--watch'],
  ['status', '--no-json'],
  ['status', '-j'],
  ['status', ''],
  ['status', '--', '--help'],
  ['kinds', 'fix'],
  ['kinds', '--watch'],
  ['tidy'],
  ['constructor'],
  ['__proto__', 'x'],
  [],
];

/** The plain parser takes `argv` and gives the command and arguments yargs gives it. */
async function expectSameAsYargs(argv: string[]): Promise<void> {
  const plain = plainArgs(argv);
  const parsed = await viaYargs(argv);
  expect(parsed.refused, argv.join(' ')).toBeUndefined();
  expect(plain, argv.join(' ')).toBeDefined();
  expect(plain!.command, argv.join(' ')).toBe(parsed.command);
  expect(asRead(plain!.args), argv.join(' ')).toEqual(asRead(parsed.args!));
}

describe('the plain command lines', () => {
  it('give each command exactly what yargs gives it', async () => {
    for (const argv of TAKEN) await expectSameAsYargs(argv);
  });

  it('leave every other form to yargs', () => {
    for (const argv of LEFT) expect(plainArgs(argv), argv.join(' ')).toBeUndefined();
  });
});

/** A value the plain parser takes for an option: a choice when it has them, else a plain word. */
function sample(name: string, option: OptionSpec): string {
  return String(option.choices?.[0] ?? `${name}-value`);
}

/** The words that give an option in a plain form, both spellings of a value option. */
function given(name: string, option: OptionSpec): string[][] {
  if (option.type !== 'boolean') return [['--' + name, sample(name, option)], [`--${name}=${sample(name, option)}`]];
  return option.default === true ? [['--' + name], ['--no-' + name]] : [['--' + name]];
}

/**
 * The plain forms a command's line allows, derived from it: its required positionals, then with each
 * optional one added; each with the demanded options, then each other option alone, then every
 * option that conflicts with none given so far, before and after the positionals.
 */
function plainForms(line: CommandLine, leftOut: readonly string[]): string[][] {
  const options = Object.entries(line.options).filter(([name, option]) => !leftOut.includes(name) && (option.type === 'string' || option.type === 'boolean'));
  const demanded = options.filter(([, option]) => option.demand).flatMap(([name, option]) => given(name, option)[0]);
  const positionals = line.positionals.map((p, i) => `${p.name}-${i}`);
  const required = line.positionals.filter((p) => p.demand).length;
  const heads = Array.from({ length: positionals.length - required + 1 }, (_, extra) => positionals.slice(0, required + extra));
  const all: string[] = [];
  const chosen = new Set<string>();
  for (const [name, option] of options) {
    if (option.demand || [...chosen].some((other) => line.options[other].conflicts === name || option.conflicts === other)) continue;
    chosen.add(name);
    all.push(...given(name, option)[0]);
  }
  const tails = [demanded, ...options.filter(([, option]) => !option.demand).flatMap(([name, option]) => given(name, option).map((words) => [...demanded, ...words])), [...demanded, ...all]];
  return heads.flatMap((head) => tails.flatMap((tail) => [[...head, ...tail], [...tail, ...head]]));
}

/**
 * Forms of bad usage, derived from a line, which yargs refuses (`BAD_USAGE`) and the plain parser
 * must leave to it: a positional too many or a required one missing; a demanded option missing; two
 * that conflict; a value option without its value, or twice.
 */
function badForms(line: CommandLine): string[][] {
  const demanded = Object.entries(line.options).filter(([, option]) => option.demand).flatMap(([name, option]) => given(name, option)[0]);
  const head = line.positionals.filter((p) => p.demand).map((p) => `${p.name}-0`);
  const base = [...head, ...demanded];
  const forms: string[][] = [[...line.positionals.map((p, i) => `${p.name}-${i}`), 'extra', ...demanded]];
  if (head.length) forms.push(head.slice(1).concat(demanded));
  for (const [name, option] of Object.entries(line.options)) {
    if (option.demand) forms.push(head);
    if (option.conflicts !== undefined) forms.push([...base, ...given(name, option)[0], ...given(option.conflicts, line.options[option.conflicts])[0]]);
    if (option.type !== 'boolean') forms.push([...base, `--${name}`], [...base, ...given(name, option)[0], ...given(name, option)[1]]);
  }
  return forms;
}

/**
 * Forms yargs may take but whose meaning the plain rule leaves to it, derived from a line: each
 * boolean given a value or twice; a value option's value empty or flag-like; each option the
 * command's plain forms leave out.
 */
function leftForms(line: CommandLine, leftOut: readonly string[]): string[][] {
  const demanded = Object.entries(line.options).filter(([, option]) => option.demand).flatMap(([name, option]) => given(name, option)[0]);
  const base = [...line.positionals.filter((p) => p.demand).map((p) => `${p.name}-0`), ...demanded];
  const forms: string[][] = [];
  for (const [name, option] of Object.entries(line.options)) {
    if (leftOut.includes(name)) forms.push([...base, ...given(name, option)[0]]);
    else if (option.type === 'boolean') forms.push([...base, `--${name}=true`], [...base, `--${name}`, `--${name}`]);
    else forms.push([...base, `--${name}`, '-x'], [...base, `--${name}=`]);
  }
  return forms;
}

describe('the plain parser and the yargs builder, both derived from each command\'s line', () => {
  const plainCommands = commands.filter((command) => Object.hasOwn(PLAIN_FORMS, command.command.split(' ')[0]));

  it('covers the commands the plain parser takes, and no other', () => {
    expect(plainCommands.map((command) => command.command.split(' ')[0]).sort()).toEqual(Object.keys(PLAIN_FORMS).sort());
    for (const command of commands.filter((c) => !plainCommands.includes(c))) expect(plainArgs([command.command.split(' ')[0]])).toBeUndefined();
  });

  it('agree on every plain form each line allows', async () => {
    let checked = 0;
    for (const command of plainCommands) {
      const name = command.command.split(' ')[0];
      for (const rest of plainForms(command.line, PLAIN_FORMS[name])) {
        await expectSameAsYargs([name, ...rest]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('leave bad usage to yargs, which refuses it', async () => {
    for (const command of plainCommands) {
      const name = command.command.split(' ')[0];
      for (const rest of badForms(command.line)) {
        const argv = [name, ...rest];
        expect(plainArgs(argv), argv.join(' ')).toBeUndefined();
        expect((await viaYargs(argv)).refused, argv.join(' ')).toBeDefined();
      }
    }
  });

  it('leave to yargs every other form the plain rule does not take', () => {
    for (const command of plainCommands) {
      const name = command.command.split(' ')[0];
      for (const rest of leftForms(command.line, PLAIN_FORMS[name])) expect(plainArgs([name, ...rest]), [name, ...rest].join(' ')).toBeUndefined();
    }
  });
});
