/**
 * Writes the files made from the schemas' one source: `flume.schema.json` (the config),
 * `status.schema.json` (status --json), `launch-dry-run.schema.json` (launch --dry-run --json), `plugins.schema.json` (plugins --json), and
 * the config's validator compiled ahead of time by ajv (its standalone code), so no command compiles
 * the schema when it runs. `npm run schema` writes them; a test keeps the files in step with the source.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import AjvModule from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { configSchema } from './schema.js';
import { statusSchema } from '../engine/status-schema.js';
import { dryRunSchema } from '../engine/dry-run-schema.js';
import { pluginsSchema } from '../engine/plugins-schema.js';
import { resultSchemas } from '../engine/results-schema.js';
import { AJV_OPTIONS } from './validate.js';

/** Where the compiled config validator is kept, from the project's root. */
export const VALIDATOR_FILE = 'core/config/config-validator.generated.ts';

/** Each file made from a schema, by its path from the project's root, and its content. */
export function schemaFiles(): Record<string, string> {
  return {
    'flume.schema.json': JSON.stringify(configSchema, null, 2) + '\n',
    'status.schema.json': JSON.stringify(statusSchema, null, 2) + '\n',
    'launch-dry-run.schema.json': JSON.stringify(dryRunSchema, null, 2) + '\n',
    'plugins.schema.json': JSON.stringify(pluginsSchema, null, 2) + '\n',
    // launch, tell, stop, stage (retry, go-on, stage), drop, tidy, kinds, doctor and error: results-schema.ts.
    ...Object.fromEntries(Object.entries(resultSchemas).map(([file, schema]) => [file, JSON.stringify(schema, null, 2) + '\n'])),
    [VALIDATOR_FILE]: validatorSource(),
  };
}

/** The config validator as ajv's standalone ES module, with its one runtime helper imported. */
function validatorSource(): string {
  const ajv = new AjvModule.default({ ...AJV_OPTIONS, code: { source: true, esm: true } });
  const code = standaloneCode.default(ajv, ajv.compile(configSchema));
  const helper = 'require("ajv/dist/runtime/ucs2length").default';
  const unknown = code.match(/require\("[^"]*"\)/g)?.filter((call) => !helper.startsWith(call));
  if (unknown?.length) throw new Error(`the standalone validator needs runtime helpers not handled here: ${unknown.join(', ')}`);
  // The helper is required as ajv wrote it: an ES import of a CommonJS module gives its exports
  // object under node but its `default` under vitest's loader, and the validator runs under both.
  return [
    '// @ts-nocheck',
    '// Written by `npm run schema` (core/config/write-schema.ts) from core/config/schema.ts: do not edit.',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code.replace('"use strict";', ''),
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  for (const [file, content] of Object.entries(schemaFiles())) writeFileSync(join(root, file), content);
}
