/**
 * Which host a command line is for: `--host NAME` (given anywhere, as a global option), a place
 * named `HOST:kind/name`, else `FLUME_HOST`; `--all-hosts` and several hosts are a merged
 * `status`. The host's part is taken off the command line here, before any parser sees it.
 */
import { flumeError } from '../api/errors.js';
import { namedHost, namedHosts, THIS_HOST, type NamedHost } from './list.js';
import { RELAY_ENTRY } from './relay.js';

/** What the parser needs of a command's line: which positional takes a place, and which options take a value. */
export interface LineShape {
  positionals: ReadonlyArray<{ name: string }>;
  options: Readonly<Record<string, { type: string }>>;
}

/** Where a command line goes. */
export type Route =
  | { to: 'here'; argv: string[] }
  | { to: 'host'; host: NamedHost; argv: string[] }
  | { to: 'hosts'; here: boolean; hosts: NamedHost[]; argv: string[] };

/** The commands whose host is always this one: the host list, and the relay's own entry. */
const HERE_ALWAYS = new Set(['hosts', RELAY_ENTRY]);

const PREFIXED = /^([a-z0-9][a-z0-9._-]{0,63}):(.+)$/;

/** The route of `argv`, the host's part taken off it. */
export async function route(given: string[], env: NodeJS.ProcessEnv, lines: Readonly<Record<string, LineShape>>): Promise<Route> {
  const argv = commandFirst(given);
  if (HERE_ALWAYS.has(argv[0])) return { to: 'here', argv: given };
  const command = argv[0];
  const line = Object.hasOwn(lines, command) ? lines[command] : undefined;
  const names: string[] = [];
  let all = false;
  const rest: string[] = [];
  let positional = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--host' && i + 1 < argv.length) {
      names.push(argv[++i]);
      continue;
    }
    if (arg.startsWith('--host=')) {
      names.push(arg.slice('--host='.length));
      continue;
    }
    if (arg === '--all-hosts') {
      all = true;
      continue;
    }
    if (i > 0 && arg.startsWith('-') && arg !== '-') {
      rest.push(arg);
      const option = line?.options[arg.replace(/^--?/, '')];
      if (option && option.type !== 'boolean' && !arg.includes('=') && i + 1 < argv.length) rest.push(argv[++i]);
      continue;
    }
    // The command's first positional, when it takes a place, may name the place's host.
    const prefixed = i > 0 && positional === 0 && line?.positionals[0]?.name === 'place' ? PREFIXED.exec(arg) : null;
    if (i > 0) positional++;
    if (prefixed) {
      names.push(prefixed[1]);
      rest.push(prefixed[2]);
      continue;
    }
    rest.push(arg);
  }
  if (!names.length && !all && env.FLUME_HOST) names.push(env.FLUME_HOST);
  const unique = [...new Set(names)];
  if (command === 'status' && (all || unique.length > 1)) {
    const known = await namedHosts(env);
    const hosts = all ? known : await Promise.all(unique.filter((name) => name !== THIS_HOST).map((name) => namedHost(name, env)));
    return { to: 'hosts', here: all || unique.includes(THIS_HOST), hosts, argv: rest };
  }
  if (all) throw flumeError('UNKNOWN_HOST', {}, { variant: 'allHostsAlone' });
  if (unique.length > 1) throw flumeError('UNKNOWN_HOST', { command: command ?? 'flume' }, { variant: 'manyHosts', details: { hosts: unique } });
  if (!unique.length || unique[0] === THIS_HOST) return { to: 'here', argv: rest };
  return { to: 'host', host: await namedHost(unique[0], env), argv: rest };
}

/** `argv` with the host options given before the command (`flume --host h status`) moved after it. */
function commandFirst(argv: string[]): string[] {
  const lead: string[] = [];
  let at = 0;
  while (at < argv.length) {
    const arg = argv[at];
    if (arg === '--host' && at + 1 < argv.length) lead.push(arg, argv[at + 1]), (at += 2);
    else if (arg.startsWith('--host=') || arg === '--all-hosts') lead.push(arg), at++;
    else break;
  }
  return lead.length && at < argv.length ? [argv[at], ...lead, ...argv.slice(at + 1)] : argv;
}
