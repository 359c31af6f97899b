/**
 * The command lines of the read commands callers poll: `status [place] [--json] [--repo DIR]` and
 * `kinds [--json] [--repo DIR]`, flags in any order, each at most once. Both the warm answer
 * (warm.ts) and the cold run without the argument parser (index.ts) take exactly these; anything
 * else (another flag, a flag twice, `--repo` without its value, a typo) goes through yargs, which
 * checks it. Imports nothing: the bin loads it before it knows what it must run.
 */

/** A read command as its command line gives it. */
export interface ReadArgs {
  command: 'status' | 'kinds';
  place?: string;
  /** `--repo` as given (relative to the caller's folder when not absolute). */
  repo?: string;
  json: boolean;
}

/** The read command `argv` names, or undefined when it is any other command line. */
export function readArgs(argv: string[]): ReadArgs | undefined {
  const [command, ...rest] = argv;
  if (command !== 'status' && command !== 'kinds') return undefined;
  const read: ReadArgs = { command, json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--json' && !read.json) read.json = true;
    else if (arg === '--repo' && read.repo === undefined && i + 1 < rest.length && rest[i + 1] !== '' && !rest[i + 1].startsWith('-')) read.repo = rest[++i];
    else if (arg.startsWith('--repo=') && read.repo === undefined && arg.length > 7) read.repo = arg.slice(7);
    else if (command === 'status' && read.place === undefined && arg !== '' && !arg.startsWith('-')) read.place = arg;
    else return undefined;
  }
  return read;
}

/** The arguments a command's `run` is handed for a read command line, as yargs would give them. */
export function readCommandArgs(read: ReadArgs): Record<string, unknown> {
  return {
    ...(read.place !== undefined ? { place: read.place } : {}),
    ...(read.repo !== undefined ? { repo: read.repo } : {}),
    ...(read.json ? { json: true } : {}),
  };
}
