/**
 * The one check of `flume status --json` against the published `status.schema.json`. Every way a
 * test obtains a status report (the CLI through `runFlume`, in-process or as a process, the MCP
 * `status` tool, the engine's own `status()` in the tidy driver) goes through `validStatus`, so a
 * field the schema does not allow (an extra key in `stage.agent`, say) fails whichever test met it,
 * not only the one test that launched places with no agent.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));

let compiled: ValidateFunction | undefined;

/** The compiled schema, read from the published file (not the source), once per test process. */
function validator(): ValidateFunction {
  if (compiled) return compiled;
  // ajv is CommonJS; required so the check stays synchronous inside the CLI runner's callback.
  const ajv = createRequire(import.meta.url)('ajv') as { default: new (options: object) => { compile(schema: object): ValidateFunction } };
  const schema = JSON.parse(readFileSync(join(PROJECT, 'schemas', 'status.schema.json'), 'utf8'));
  compiled = new ajv.default({ allErrors: true, strict: false }).compile(schema);
  return compiled;
}

/** Throws, naming every schema error and where the report came from, unless `report` matches the schema; returns it. */
export function validStatus<T = any>(report: unknown, where = 'status --json'): T {
  const validate = validator();
  if (!validate(report)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
    throw new Error(`${where} does not match status.schema.json:\n  ${errors.join('\n  ')}`);
  }
  return report as T;
}

/** Parses `stdout` as a status report and validates it. */
export function parseStatus<T = any>(stdout: string, where = 'status --json'): T {
  let report: unknown;
  try {
    report = JSON.parse(stdout);
  } catch (error) {
    throw new Error(`${where} printed no JSON: ${(error as Error).message}\n${stdout}`);
  }
  return validStatus<T>(report, where);
}

/** True when `args` is a `flume status … --json` run (the command first, as every test gives it). */
export function isStatusJson(args: readonly string[]): boolean {
  return args[0] === 'status' && args.includes('--json') && !args.includes('--help');
}

/**
 * What every CLI runner calls with each finished run: a `status --json` that succeeded must print a
 * report the schema allows; anything else passes through unchecked (refusals are their tests' business).
 */
export function checkStatusRun(args: readonly string[], result: { code: number; stdout: string }): void {
  if (isStatusJson(args) && result.code === 0) parseStatus(result.stdout, `flume ${args.join(' ')}`);
}
