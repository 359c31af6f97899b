/**
 * The fake's command line: the part of Claude Code's that flume uses, checked as strictly as Claude
 * Code checks it, so a driver that passes a bad session id or an unknown flag fails here too.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const VALUED = new Set(['--session-id', '--model', '--permission-mode', '--append-system-prompt', '--settings']);
const FLAGS = new Set(['--dangerously-skip-permissions', '--verbose']);
const MODES = ['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A usage error: printed to stderr, exit code 1. */
export class UsageError extends Error {}

/**
 * Parses argv (without node and the script). Returns { sessionId, model, permissionMode,
 * appendSystemPrompt, settings, prompt }; throws UsageError as Claude Code refuses.
 */
export function parseArgs(argv) {
  const values = {};
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    let value;
    const eq = arg.indexOf('=');
    if (eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    if (FLAGS.has(arg)) values[arg] = true;
    else if (VALUED.has(arg)) {
      if (value === undefined) value = argv[++i];
      if (value === undefined) throw new UsageError(`error: option '${arg} <value>' argument missing`);
      values[arg] = value;
    } else throw new UsageError(`error: unknown option '${arg}'`);
  }
  const sessionId = values['--session-id'] ?? randomUUID();
  if (!UUID.test(sessionId)) throw new UsageError('Error: Invalid session ID. Must be a valid UUID.');
  let permissionMode = values['--permission-mode'] ?? 'default';
  if (!MODES.includes(permissionMode)) {
    throw new UsageError(`error: option '--permission-mode <mode>' argument '${permissionMode}' is invalid. Allowed choices are ${MODES.join(', ')}.`);
  }
  if (values['--dangerously-skip-permissions']) permissionMode = 'bypassPermissions';
  if (positional.length > 1) throw new UsageError(`error: too many arguments. Expected 1 argument but got ${positional.length}.`);
  return {
    sessionId,
    model: values['--model'] ?? 'claude-sonnet-4-5',
    permissionMode,
    appendSystemPrompt: values['--append-system-prompt'],
    settings: readSettings(values['--settings']),
    prompt: positional[0],
  };
}

/** `--settings` is inline JSON or a file holding it. */
function readSettings(value) {
  if (value === undefined) return {};
  try {
    return JSON.parse(value.trim().startsWith('{') ? value : readFileSync(value, 'utf8'));
  } catch (error) {
    throw new UsageError(`Error: Invalid settings ${JSON.stringify(value)}: ${error.message}`);
  }
}
