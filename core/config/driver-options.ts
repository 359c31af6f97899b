/**
 * A driver's own options (`agents[<key>]` in the config), checked against the schema the driver
 * declares (`optionsSchema`) when the repository opens. ajv compiles it then, only for a driver that
 * declares one and a config that sets its options: the core's own schema is compiled ahead of time.
 */
import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import type { ConfigProblem } from './validate.js';

const require = createRequire(import.meta.url);
const compiled = new WeakMap<object, (value: unknown) => ErrorObject[]>();

/** The problems of `options` under the driver `key`'s schema, each naming the driver's plugin. */
export function optionProblems(key: string, schema: Record<string, unknown>, options: unknown, plugin: string): ConfigProblem[] {
  let check = compiled.get(schema);
  if (!check) {
    const Ajv = require('ajv').default as typeof import('ajv').default;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    check = (value) => (validate(value) ? [] : (validate.errors ?? []));
    compiled.set(schema, check);
  }
  return check(options).map((error) => ({
    path: `agents.${key}${error.instancePath.replace(/\//g, '.')}`,
    message: `${error.message ?? 'is not valid'}${error.keyword === 'additionalProperties' ? ` ("${String((error.params as { additionalProperty?: string }).additionalProperty)}")` : ''}`,
    fix: `write the options as the driver "${key}" of ${plugin} declares them (its optionsSchema)`,
  }));
}
