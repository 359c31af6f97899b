/**
 * Where jiti keeps what it compiled of a config and its plugins, and the compile step it is handed, so
 * a config is compiled once per source text rather than once per file.
 *
 * jiti's own cache names each entry by its file's path and a hash of its source: a config copied
 * into another repository (every new checkout, every test's temp repository, every place) misses it,
 * and a miss loads jiti's 1.5 MB TypeScript compiler, about a quarter second of CPU, in the config
 * probe and again wherever the probe's entry is not found. The compile step below keeps what it
 * compiled by a hash of everything the output depends on: the source, how it was compiled (module
 * form, TypeScript, JSX, default interop) and jiti's version. The output names the file only where
 * the source reads `import.meta` (jiti writes the file's URL and folder in as literals), so the path is
 * part of the key exactly then.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { createHash } from 'node:crypto';
import type { TransformOptions, TransformResult } from 'jiti';
import { privateDir, PRIVATE_FILE_MODE } from '../state/private.js';

/** What jiti hands its compile step, and what it takes back. */
type Transform = (options: TransformOptions) => TransformResult;

/** The folder of the compile cache's entries (jiti's own entries lie beside it). */
const BY_SOURCE = 'by-source';

/**
 * The cache folder: the user's cache folder (`FLUME_CACHE_DIR`, else `$XDG_CACHE_HOME/flume`, else
 * `~/.cache/flume`), in a folder of the user's alone (700), since a compiled config holds whatever
 * the config holds; deleting it costs one compile. Only a config the user trusted is ever run, so
 * only such a config is ever compiled into it. Without a usable folder, nothing is cached.
 */
export async function compileCache(env: NodeJS.ProcessEnv = process.env): Promise<string | false> {
  const base = cacheBase(env);
  const dir = join(base, 'jiti');
  try {
    await privateDir(base);
    await privateDir(dir);
    await privateDir(join(dir, BY_SOURCE));
    return dir;
  } catch {
    return false;
  }
}

/** The user's cache folder for flume: `FLUME_CACHE_DIR`, else `$XDG_CACHE_HOME/flume`, else `~/.cache/flume`. */
export function cacheBase(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLUME_CACHE_DIR || join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'flume');
}

/**
 * jiti's own compile step, behind a cache keyed by what its output depends on (see above). The
 * compiler is loaded on the first miss only. Entries are written whole (a temporary file renamed),
 * so two commands compiling at once never read half of one.
 */
export function cachedTransform(dir: string | false): Transform {
  const require = createRequire(import.meta.url);
  const jitiRoot = dirname(require.resolve('jiti/package.json'));
  const version = (JSON.parse(readFileSync(join(jitiRoot, 'package.json'), 'utf8')) as { version: string }).version;
  let compile: Transform | undefined;
  return (options) => {
    const file = dir ? join(dir, BY_SOURCE, `${transformKey(options, version)}.js`) : undefined;
    if (file) {
      try {
        return { code: readFileSync(file, 'utf8') };
      } catch {
        // not compiled yet
      }
    }
    compile ??= require(join(jitiRoot, 'dist', 'babel.cjs')) as Transform;
    const result = compile(options);
    if (file && !result.error && typeof result.code === 'string') store(file, result.code);
    return result;
  };
}

/** The cache key of a compile: a hash of what the output depends on. */
export function transformKey(options: TransformOptions, jitiVersion: string): string {
  const { source, filename, babel, ...how } = options;
  // jiti writes `import.meta.url`/`dirname`/`filename` as the file's own literals; nothing else of the path reaches the output.
  const path = source.includes('import.meta') ? filename : undefined;
  const parts = { jiti: jitiVersion, how: sorted(how), babel: babel ?? {}, ext: filename ? extname(filename) : '', path };
  return createHash('sha256').update(JSON.stringify(parts)).update('\0').update(source).digest('hex');
}

function sorted(value: object): Record<string, unknown> {
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, (value as Record<string, unknown>)[key]]));
}

function store(file: string, code: string): void {
  try {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, code, { mode: PRIVATE_FILE_MODE });
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written costs a compile next time, nothing else.
  }
}
