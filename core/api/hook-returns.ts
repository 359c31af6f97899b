/**
 * What a tap may return, checked where the core receives it: a malformed agent handle, reading or
 * prompt state is a PLUGIN_BAD_RETURN naming the plugin, not a crash deep in the engine later. The
 * checks are hand-written and small (a few `typeof`s), since they run on every status; undefined is
 * always allowed (a bail hook's "not mine"), and properties a type does not name are let through.
 */
import { FlumeError, flumeError } from './errors.js';

/** The problems with a value a tap returned, each in a few words; empty when it is well formed. */
export type ReturnCheck = (value: unknown) => string[];

/** The check of the hook `family` (`readDeliverable`) under `key` (`commit`), or undefined for a hook whose return flume ignores. */
export function returnCheck(family: string, key?: string): ReturnCheck | undefined {
  switch (family) {
    case 'startAgent':
      return (value) => {
        const problems = shape(value, HANDLE);
        const driver = (value as { driver?: unknown })?.driver;
        // flume finds the driver again by the handle's key: another key would reach another driver.
        if (!problems.length && key !== undefined && driver !== key) problems.push(`"driver" must be "${key}", the key it was started under, got ${describe(driver)}`);
        return problems;
      };
    case 'planAgent':
      return (value) => shape(value, PLAN);
    case 'confirmPrompt':
      return (value) => oneOf(value, PROMPT_STATES);
    case 'readDeliverable':
      return (value) => shape(value, DELIVERABLE);
    case 'beforeTidy':
      return (value) => (typeof value === 'string' ? [] : [`expected a string (the reason to keep the place), got ${describe(value)}`]);
    default:
      return undefined;
  }
}

/**
 * The check of what a driver's `method` returns when the core calls it directly (core/drivers/reach.ts);
 * start, plan and confirm are checked as their hooks' taps are.
 */
export function driverReturnCheck(method: string): ReturnCheck | undefined {
  switch (method) {
    case 'read':
      return (value) => shape(value, READING);
    case 'readMany':
      return (value) =>
        Array.isArray(value) ? value.flatMap((one, i) => (one === undefined ? [] : shape(one, READING).map((problem) => `[${i}] ${problem}`))) : [`expected an array (one reading per handle), got ${describe(value)}`];
    case 'waitForInput':
      return (value) => oneOf(value, ['ready', 'slow', 'exited']);
    case 'hasDraft':
    case 'withdraw':
      return (value) => (typeof value === 'boolean' ? [] : [`expected true or false, got ${describe(value)}`]);
    case 'watchPaths':
      return (value) => (strings.test(value) ? [] : [`expected ${strings.expected}, got ${describe(value)}`]);
    case 'usage':
      return (value) => (value === undefined || (isObject(value) && isObject(value.usage)) ? [] : [`expected undefined or { usage, cursor }, got ${describe(value)}`]);
    case 'checks':
      return (value) => (Array.isArray(value) ? [] : [`expected an array of checks, got ${describe(value)}`]);
    case 'refuse':
      return (value) => (value === undefined || value instanceof Error ? [] : [`expected undefined or an Error, got ${describe(value)}`]);
    default:
      return undefined;
  }
}

/** The error for a tap's malformed return: PLUGIN_BAD_RETURN, naming the plugin, the hook and each problem. */
export function badReturn(plugin: string, hook: string, problems: string[], value: unknown): FlumeError {
  return flumeError('PLUGIN_BAD_RETURN', { plugin, hook, problems: problems.join('; ') }, {
    details: { problems, returned: describe(value) },
    plugin,
    hook,
  });
}

interface Field {
  required?: boolean;
  expected: string;
  test(value: unknown): boolean;
}

const isString = (value: unknown) => typeof value === 'string';
const string: Field = { expected: 'a string', test: isString };
const required = (field: Field): Field => ({ ...field, required: true });
const boolean: Field = { expected: 'true or false', test: (value) => typeof value === 'boolean' };
const count = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const strings: Field = { expected: 'an array of strings', test: (value) => Array.isArray(value) && value.every(isString) };
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const enumOf = (values: readonly string[]): Field => ({ expected: `one of ${values.map((v) => `"${v}"`).join(', ')}`, test: (value) => values.includes(value as string) });

const PROMPT_STATES = ['taken', 'held', 'not-yet', 'unknown'] as const;
const AGENT_STATES = ['not-up', 'starting', 'idle', 'working', 'asking', 'exited'] as const;

/** AgentHandle (core/api/agent.ts). */
const HANDLE = fields({
  driver: required(string),
  sessionId: required(string),
  host: required(string),
  cwd: required(string),
  startedAt: required(string),
  version: string,
  pane: string,
  paneIdentity: string,
  pid: { expected: 'a process id (a positive integer)', test: (value) => count(value) && (value as number) > 0 },
  pidStart: string,
  transcriptPath: string,
  command: strings,
  data: { expected: 'an object of strings', test: (value) => isObject(value) && Object.values(value).every(isString) },
});

/** AgentPlan (core/api/hooks.ts). */
const PLAN = fields({ command: required(strings), cwd: required(string), host: required(string), version: string });

/** AgentReading (core/api/agent.ts). */
const READING = fields({
  state: required(enumOf(AGENT_STATES)),
  needs: string,
  dialog: enumOf(['question', 'permission', 'trust']),
  lastActivity: string,
  turnEnded: boolean,
  paneGone: boolean,
});

/** DeliverableReading (core/api/hooks.ts). */
const DELIVERABLE = fields({
  present: required(boolean),
  what: string,
  progress: { expected: '{ done, total } (counts)', test: (value) => isObject(value) && count(value.done) && count(value.total) },
  facts: { expected: 'an object', test: isObject },
  problem: string,
  needs: string,
  readFrom: strings,
  sendBack: boolean,
});

function fields(spec: Record<string, Field>): [string, Field][] {
  return Object.entries(spec);
}

function shape(value: unknown, spec: [string, Field][]): string[] {
  if (!isObject(value)) return [`expected an object, got ${describe(value)}`];
  const problems: string[] = [];
  for (const [name, field] of spec) {
    const got = value[name];
    if (got === undefined) {
      if (field.required) problems.push(`"${name}" is missing (${field.expected})`);
    } else if (!field.test(got)) {
      problems.push(`"${name}" must be ${field.expected}, got ${describe(got)}`);
    }
  }
  return problems;
}

function oneOf(value: unknown, values: readonly string[]): string[] {
  return values.includes(value as string) ? [] : [`expected ${enumOf(values).expected}, got ${describe(value)}`];
}

/** A returned value in a few characters, for a message: `"yes"`, `42`, `null`, `an array`, `{ present, what }`. */
function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `{ ${Object.keys(value).slice(0, 6).join(', ')} }`;
  if (typeof value === 'function') return 'a function';
  return String(value);
}
