/**
 * The plain forms of launch, tell, stop, drop, retry, go-on, stage, status and kinds are parsed without yargs
 * (core/cli/plain-args.ts): each form taken must give `run` exactly what yargs gives it, and every
 * other form must be left to yargs.
 */
import { describe, expect, it } from 'vitest';
import { plainArgs } from '../../../core/cli/plain-args.js';
import { argumentParser } from '../../../core/cli/index.js';

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
  await parser.parseAsync(argv, {}, () => undefined).catch(() => undefined);
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

describe('the plain command lines', () => {
  it('give each command exactly what yargs gives it', async () => {
    for (const argv of TAKEN) {
      const plain = plainArgs(argv);
      const parsed = await viaYargs(argv);
      expect(parsed.refused, argv.join(' ')).toBeUndefined();
      expect(plain, argv.join(' ')).toBeDefined();
      expect(plain!.command, argv.join(' ')).toBe(parsed.command);
      expect(asRead(plain!.args), argv.join(' ')).toEqual(asRead(parsed.args!));
    }
  });

  it('leave every other form to yargs', () => {
    for (const argv of LEFT) expect(plainArgs(argv), argv.join(' ')).toBeUndefined();
  });
});
