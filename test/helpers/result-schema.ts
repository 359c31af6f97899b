/**
 * Checks of the `--json` answers (and MCP tool results) against their published `<name>.schema.json`
 * files, read from the files (not the source) as a caller would; and `launchedRecord`, for tests that
 * look past what launch answers (the agent's pid, the prompt sent) into flume's own record of it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const compiled = new Map<string, ValidateFunction>();

/** Throws, naming every schema error, unless `value` fits `<name>.schema.json`; returns it. */
export function validResult<T = any>(name: string, value: unknown, where = `${name} --json`): T {
  let validate = compiled.get(name);
  if (!validate) {
    const ajv = createRequire(import.meta.url)('ajv') as { default: new (options: object) => { compile(schema: object): ValidateFunction } };
    validate = new ajv.default({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(join(PROJECT, 'schemas', `${name}.schema.json`), 'utf8')));
    compiled.set(name, validate);
  }
  if (!validate(value)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
    throw new Error(`${where} does not match ${name}.schema.json:\n  ${errors.join('\n  ')}\n${JSON.stringify(value).slice(0, 2000)}`);
  }
  return value as T;
}

/**
 * What `flume launch --json` printed, checked against launch.schema.json, then flume's record of the
 * place it made (read from the repository's state: `<repo>/.git/flume/places/<kind>--<name>.json`).
 */
export function launchedRecord(stdout: string): any {
  const { place } = validResult('launch', JSON.parse(stdout));
  const file = join(place.repo, '.git', 'flume', 'places', `${place.kind}--${place.name}.json`);
  if (!existsSync(file)) throw new Error(`launch answered ${place.id}, but there is no record at ${file}`);
  return JSON.parse(readFileSync(file, 'utf8'));
}
