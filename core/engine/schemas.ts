/**
 * Writes the files made from the schemas' one source, the published ones in `schemas/`: `flume.schema.json` (the config),
 * `status.schema.json` (status --json), `launch-dry-run.schema.json` (launch --dry-run --json), `plugins.schema.json` (plugins --json), and
 * the config's validator compiled ahead of time by ajv (its standalone code), so no command compiles
 * the schema when it runs, and `docs/errors.md`, the page of every error code from the catalogue. The published config schema has each registered driver's `optionsSchema`
 * merged in under `agents.<key>` (the validator stays the core's: a driver's options are checked
 * against its own schema when the repository opens). `npm run schema` (scripts/write-schema.mjs, which
 * hands over the default preset's drivers) writes them; a test keeps the files in step with the source.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import AjvModule from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { configSchema } from '../api/config.js';
import { statusSchema } from './status/status-schema.js';
import { dryRunSchema } from './launch/dry-run-schema.js';
import { pluginsSchema } from './doctor/plugins-schema.js';
import { resultSchemas } from './stage/results-schema.js';
import { AJV_OPTIONS } from '../config/validate.js';
import { ERROR_CATALOGUE, type CatalogueEntry } from '../api/error-catalogue.js';

/** The folder of the published schemas, from the project's root (the package exports each as `flume/<name>.schema.json`). */
export const SCHEMA_DIR = 'schemas';

/** Where the compiled config validator is kept, from the project's root. */
export const VALIDATOR_FILE = 'core/config/config-validator.generated.ts';

/** The page of every error code, from the catalogue, from the project's root. */
export const ERRORS_PAGE = 'docs/errors.md';

/** A driver as the published schema needs it: its key and the schema of its options. */
export interface DriverOptions {
  key: string;
  optionsSchema?: Record<string, unknown>;
}

/** The config schema as published: each driver's `optionsSchema` merged in under `agents.<key>`. */
export function publishedConfigSchema(drivers: DriverOptions[] = []): Record<string, unknown> {
  const schema = JSON.parse(JSON.stringify(configSchema)) as { properties: { agents: { properties?: Record<string, unknown> } } };
  const own = drivers.filter((driver) => driver.optionsSchema);
  if (own.length === 0) return schema;
  schema.properties.agents.properties = Object.fromEntries(
    own.map((driver) => [driver.key, { description: `Options of the agent driver "${driver.key}", as it declares them.`, ...driver.optionsSchema }]),
  );
  return schema;
}

/** Each file made from a schema, by its path from the project's root, and its content; `drivers` are merged into the config's. */
export function schemaFiles(drivers: DriverOptions[] = []): Record<string, string> {
  const published: Record<string, unknown> = {
    'flume.schema.json': publishedConfigSchema(drivers),
    'status.schema.json': statusSchema,
    'launch-dry-run.schema.json': dryRunSchema,
    'plugins.schema.json': pluginsSchema,
    // launch, tell, stop, stage (retry, go-on, stage), drop, tidy, kinds, doctor and error: results-schema.ts.
    ...resultSchemas,
  };
  return {
    ...Object.fromEntries(Object.entries(published).map(([file, schema]) => [`${SCHEMA_DIR}/${file}`, JSON.stringify(schema, null, 2) + '\n'])),
    [VALIDATOR_FILE]: validatorSource(),
    [ERRORS_PAGE]: errorsPage(),
  };
}

/** docs/errors.md: each code of the catalogue with its exit code, its message's shape and its fix, and its other wordings. */
export function errorsPage(): string {
  const lines = [
    '# Errors',
    '',
    '<!-- Written by `npm run schema` (core/engine/schemas.ts) from core/api/error-catalogue.ts: do not edit. -->',
    '',
    'Every error flume raises, by its code: the exit code, the message, and the fix a person can act on.',
    'A caller matches on the code (`error.code` with `--json`), never on the text. `{word}` marks what the',
    'error fills in (a place, a file, the message of the program that failed). A code raised in more than',
    'one case has a wording for each, named; a wording without a fix of its own has the code\'s.',
    '',
  ];
  for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as [string, CatalogueEntry][]) {
    lines.push(`## ${code}`, '', `Exit code ${entry.exit}.`, '', `- Message: ${markdown(entry.message)}`, `- Fix: ${markdown(entry.fix)}`, '');
    const variants = Object.entries(entry.variants ?? {});
    if (variants.length === 0) continue;
    lines.push('Other wordings:', '');
    for (const [name, variant] of variants) lines.push(`- \`${name}\`: ${markdown(variant.message)}${variant.fix ? `<br>Fix: ${markdown(variant.fix)}` : ''}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** Catalogue text as Markdown: its code spans kept, `<` and `*` outside them shown as written, a newline as a break. */
function markdown(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/[<*]/g, (c) => `\\${c}`)))
    .join('')
    .replace(/\n/g, '<br>');
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
    '// Written by `npm run schema` (core/engine/schemas.ts) from core/api/config.ts: do not edit.',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code.replace('"use strict";', ''),
    '',
  ].join('\n');
}

/** Writes every file made from a schema, each at its path from the project's root. */
export function writeSchemaFiles(drivers: DriverOptions[] = []): void {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  for (const [file, content] of Object.entries(schemaFiles(drivers))) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), content);
  }
}
