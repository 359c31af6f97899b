/**
 * A driver's own options (`agents[<key>]` in the config), checked against the schema the driver
 * declares (`optionsSchema`) when the repository opens. ajv compiles it then, only for a driver that
 * declares one and a config that sets its options: the core's own schema is compiled ahead of time.
 *
 * Loading ajv and compiling a schema cost about 100 ms of CPU (with the garbage they leave), paid by
 * every command that opens a repository whose config sets a driver's options, for the same schema and
 * the same options each time. So options found valid are remembered: an empty file in the user's
 * cache folder (`driver-options/`, 700, beside the compile cache) named by a hash of ajv's version,
 * the schema and the options. Only a "valid" is kept; options refused are checked afresh each time (the
 * problems are worded then). A cache that cannot be read or written costs the check, nothing else.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ErrorObject } from 'ajv';
import type { ConfigProblem } from './validate.js';
import { cacheBase } from './compile-cache.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../state/private.js';

const require = createRequire(import.meta.url);
const compiled = new WeakMap<object, (value: unknown) => ErrorObject[]>();

/** The problems of `options` under the driver `key`'s schema, each naming the driver's plugin. */
export function optionProblems(key: string, schema: Record<string, unknown>, options: unknown, plugin: string, env: NodeJS.ProcessEnv = process.env): ConfigProblem[] {
  const known = validVerdict(schema, options, env);
  if (known?.valid) return [];
  const problems = checkOptions(key, schema, options, plugin);
  if (known && problems.length === 0) remember(known.file);
  return problems;
}

function checkOptions(key: string, schema: Record<string, unknown>, options: unknown, plugin: string): ConfigProblem[] {
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

/**
 * Whether these options were found valid under this schema before (and, below, the file that says so). The
 * folder must be the user's own and private (a folder others could write could vouch for options it
 * never saw); otherwise undefined, and nothing is remembered.
 */
export function rememberedValid(schema: Record<string, unknown>, options: unknown, env: NodeJS.ProcessEnv = process.env): boolean {
  return validVerdict(schema, options, env)?.valid === true;
}

function validVerdict(schema: Record<string, unknown>, options: unknown, env: NodeJS.ProcessEnv): { valid: boolean; file: string } | undefined {
  try {
    const dir = verdictDir(cacheBase(env));
    if (!dir) return undefined;
    ajvVersion ??= (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
    const digest = createHash('sha256').update(JSON.stringify({ ajv: ajvVersion, schema })).update('\0').update(JSON.stringify(options) ?? 'undefined').digest('hex');
    const file = join(dir, digest);
    if (seenValid.has(file)) return { valid: true, file };
    try {
      statSync(file);
      seenValid.add(file);
      return { valid: true, file };
    } catch {
      return { valid: false, file };
    }
  } catch {
    return undefined;
  }
}

/**
 * What a long-lived process (the supervisor opens each repository on every pass) need not read again:
 * ajv's version, and each verdict file found. A verdict is only ever added, never withdrawn, so one
 * seen stays true for the life of the process; the folder is still checked on every call (one made
 * writable by others since is trusted no more).
 */
let ajvVersion: string | undefined;
const seenValid = new Set<string>();

/** The verdict folder under `base`, made if missing; undefined unless it is the user's own and private. */
function verdictDir(base: string): string | undefined {
  const dir = join(base, 'driver-options');
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const stat = statSync(dir);
    if ((stat.mode & 0o077) !== 0 || (typeof process.getuid === 'function' && stat.uid !== process.getuid())) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

function remember(file: string): void {
  try {
    writeFileSync(file, '', { mode: PRIVATE_FILE_MODE });
    seenValid.add(file);
  } catch {
    // Not remembered: the next command checks again.
  }
}
