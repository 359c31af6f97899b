/**
 * Checks a config against the one schema and reports every problem at once, each with its path and
 * how to fix it. The validator is ajv's, compiled ahead of time from the schema
 * (`config-validator.generated.ts`, written by core/engine/schemas.ts and checked by a test to match), so no
 * command pays for compiling it; it is loaded lazily, so commands that need no config pay nothing.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { FlumeError, flumeError } from '../api/errors.js';
import { findControl } from '../support/text.js';
import { durationMs, MAX_DURATION } from '../support/duration.js';

/** One problem in a config: where, what, and the fix. */
export interface ConfigProblem {
  path: string;
  message: string;
  fix: string;
}

/** The options the validator is compiled with (every error, each with its schema for the fix). */
export const AJV_OPTIONS = { allErrors: true, strict: false, useDefaults: false, verbose: true } as const;

async function validator(): Promise<ValidateFunction> {
  return (await import('./config-validator.generated.js')).default as ValidateFunction;
}

/** Every problem in `config`, schema and sense both; empty when it is sound. */
export async function configProblems(config: unknown): Promise<ConfigProblem[]> {
  const validate = await validator();
  const problems: ConfigProblem[] = [];
  // A duration is named once, by what is wrong with it, not also as a form the schema does not accept.
  const durations = configDurationProblems(config);
  const named = new Set(durations.map((problem) => problem.path));
  if (!validate(config)) problems.push(...describeErrors(validate.errors ?? []).filter((problem) => !named.has(problem.path)));
  // Sense is checked on whatever parts have the right shape, so every problem is reported at once.
  problems.push(...durations, ...senseProblems(config));
  return problems;
}

/** Every duration of a kind (found at `at`: `kinds[0]`, `kind unit`) that flume cannot take. */
export function kindDurationProblems(kind: unknown, at: string): ConfigProblem[] {
  if (!isObject(kind)) return [];
  const stages = Array.isArray(kind.stages) ? kind.stages : [];
  return [
    ...limitsProblems(kind.limits, `${at}.limits`),
    ...stages.flatMap((stage: unknown, s) => (isObject(stage) ? limitsProblems(stage.limits, `${at}.stages[${s}].limits`) : [])),
  ];
}

/** The BAD_CONFIG error for a list of problems. */
export function configError(file: string, problems: ConfigProblem[]): FlumeError {
  const lines = problems.map((problem) => `  ${problem.path || '(root)'}: ${problem.message} — ${problem.fix}`);
  return flumeError('BAD_CONFIG', { file, count: problems.length, problems: lines.join('\n') }, {
    variant: problems.length === 1 ? 'oneProblem' : 'default',
    details: { file, problems },
  });
}

function senseProblems(config: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const { kinds, plugins } = (isObject(config) ? config : {}) as { kinds?: unknown; plugins?: unknown };
  const seen = new Set<string>();
  (Array.isArray(kinds) ? kinds : []).forEach((kind, k) => {
    if (!isObject(kind)) return;
    if (typeof kind.name === 'string' && seen.has(kind.name)) {
      problems.push({ path: `kinds[${k}].name`, message: `the kind "${kind.name}" is declared twice`, fix: 'give each kind its own name' });
    }
    if (typeof kind.name === 'string') seen.add(kind.name);
    const stages = new Set<string>();
    (Array.isArray(kind.stages) ? kind.stages : []).forEach((stage: unknown, s) => {
      if (!isObject(stage) || typeof stage.name !== 'string') return;
      if (stages.has(stage.name)) {
        problems.push({ path: `kinds[${k}].stages[${s}].name`, message: `the stage "${stage.name}" appears twice in "${String(kind.name)}"`, fix: 'give each stage of a kind its own name' });
      }
      stages.add(stage.name);
      // A stage's prompt is typed to its agent like a brief: the same control characters are refused.
      for (const key of ['prompt', 'fixPrompt']) {
        const control = typeof stage[key] === 'string' ? findControl(stage[key] as string) : undefined;
        if (control) {
          problems.push({ path: `kinds[${k}].stages[${s}].${key}`, message: `holds the control character ${control.name} at line ${control.line}, column ${control.column}`, fix: 'remove it; only newlines and tabs may stand in text sent to an agent' });
        }
      }
    });
  });
  (Array.isArray(plugins) ? plugins : []).forEach((plugin, p) => {
    if (isObject(plugin) && (typeof plugin.name !== 'string' || typeof plugin.apply !== 'function')) {
      problems.push({ path: `plugins[${p}]`, message: 'a plugin object needs a string "name" and an "apply" function', fix: 'write it with definePlugin({ name: "you:thing", apply(flume) { … } })' });
    }
  });
  return problems;
}

/** The durations of a config: its limits, its kinds', and its readying steps' timeouts. */
function configDurationProblems(config: unknown): ConfigProblem[] {
  if (!isObject(config)) return [];
  const ready = isObject(config.ready) ? config.ready : {};
  const steps = (list: string) => (Array.isArray(ready[list]) ? (ready[list] as unknown[]) : []).flatMap((step, i) => (isObject(step) ? durationProblem(step.timeout, `ready.${list}[${i}].timeout`) : []));
  return [
    ...limitsProblems(config.limits, 'limits'),
    ...(Array.isArray(config.kinds) ? config.kinds : []).flatMap((kind, k) => kindDurationProblems(kind, `kinds[${k}]`)),
    ...steps('toolchain'),
    ...steps('setup'),
  ];
}

function limitsProblems(limits: unknown, at: string): ConfigProblem[] {
  if (!isObject(limits)) return [];
  return ['stuckAfter', 'promptTimeout', 'startTimeout'].flatMap((key) => durationProblem(limits[key], `${at}.${key}`));
}

function durationProblem(value: unknown, path: string): ConfigProblem[] {
  if (value === undefined) return [];
  const ms = typeof value === 'number' || typeof value === 'string' ? durationMs(value) : 'malformed';
  if (ms === 'too-long') return [{ path, message: `is ${JSON.stringify(value)}, longer than ${MAX_DURATION}, the longest duration flume takes`, fix: `give at most ${MAX_DURATION}` }];
  if (ms === 'malformed') return [{ path, message: 'is not a duration', fix: `give seconds as a number, or a string such as "90s", "20m" or "2h", at most ${MAX_DURATION}` }];
  return [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeErrors(errors: ErrorObject[]): ConfigProblem[] {
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // Inside an anyOf, the branches' own errors only repeat it; the anyOf error says it once.
    if (error.keyword !== 'anyOf' && anyOfPaths.has(error.instancePath)) continue;
    const problem = describe(error);
    const key = `${problem.path}\0${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

function describe(error: ErrorObject): ConfigProblem {
  const path = toPath(error.instancePath);
  const schema = error.parentSchema as { description?: string; properties?: Record<string, unknown> } | undefined;
  switch (error.keyword) {
    case 'additionalProperties': {
      const extra = String((error.params as { additionalProperty: string }).additionalProperty);
      const expected = Object.keys(schema?.properties ?? {}).join(', ');
      return { path: join(path, extra), message: `unexpected property "${extra}"`, fix: `remove it; expected properties: ${expected}` };
    }
    case 'required': {
      const missing = String((error.params as { missingProperty: string }).missingProperty);
      return { path: join(path, missing), message: `"${missing}" is required`, fix: `add "${missing}"` };
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ');
      return { path, message: 'is not one of the allowed values', fix: `use one of ${allowed}` };
    }
    case 'type':
      return { path, message: `must be ${(error.params as { type: string }).type}`, fix: schema?.description ?? `write a ${(error.params as { type: string }).type}` };
    case 'pattern':
      return { path, message: `does not match ${(error.params as { pattern: string }).pattern}`, fix: schema?.description ?? 'see flume.schema.json' };
    case 'anyOf':
      return { path, message: 'is not of an accepted form', fix: schema?.description ?? 'see flume.schema.json' };
    default:
      return { path, message: error.message ?? 'is invalid', fix: schema?.description ?? 'see flume.schema.json' };
  }
}

function toPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : join(path, part)), '');
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
