/**
 * Finds and loads a repository's config with cosmiconfig (jiti loads `.ts`/`.mts`/`.js`/`.mjs`), at
 * the repository root only, validates it, and resolves the plugins it names. `import … from 'flume'`
 * inside a config resolves to this flume, so a repository need not install it locally.
 */
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isAbsolute, join, resolve } from 'node:path';
import { FlumeError } from '../errors.js';
import type { FlumePlugin } from '../plugin.js';
import type { FlumeConfig } from './schema.js';
import { configError, configProblems, type ConfigProblem } from './validate.js';
import { findConfigFile, type FoundConfig } from './find.js';
import { privateDir } from '../state/private.js';

/** Where the loader looks, in order, in the repository root (kept in `find.ts`, which runs nothing). */
export { SEARCH_PLACES } from './find.js';

/** A loaded config: the checked config, the file it came from, and its plugins resolved. */
export interface LoadedConfig {
  config: FlumeConfig;
  file?: string;
  plugins: FlumePlugin[];
}

/**
 * Loads the config at `root` (the file `found` names, else the one `findConfigFile` finds: exactly
 * the file that was trusted); a repository without one gets the empty config.
 */
export async function loadConfig(root: string, found: FoundConfig | undefined = findConfigFile(root)): Promise<LoadedConfig> {
  if (!found) return { config: {}, plugins: [] };
  const { cosmiconfig } = await import('cosmiconfig');
  const jiti = await makeJiti();
  const load = async (file: string) => jiti.import(file, { default: true });
  const explorer = cosmiconfig('flume', {
    searchStrategy: 'none',
    cache: false,
    loaders: { '.ts': load, '.mts': load, '.js': load, '.mjs': load },
  });
  let result;
  try {
    result = await explorer.load(found.file);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlumeError('BAD_CONFIG', `The config in ${root} could not be loaded: ${firstLines(message)}`, {
      fix: 'Correct the syntax of the config file; it must export the config as its default export.',
      details: { root, message },
      cause: error,
    });
  }
  if (!result || result.isEmpty) return { config: {}, plugins: [] };
  const file = result.filepath;
  let raw: unknown;
  try {
    raw = typeof result.config === 'function' ? await result.config() : result.config;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlumeError('BAD_CONFIG', `${file}: the function it exports threw: ${firstLines(message)}`, {
      fix: 'Make the exported function return the config, or export the config itself.',
      details: { file, message },
      cause: error,
    });
  }
  const plain = raw && typeof raw === 'object' ? { ...raw } : raw;
  const pluginRefs = Array.isArray((plain as FlumeConfig | undefined)?.plugins) ? (plain as FlumeConfig).plugins! : [];
  // Every problem at once: the schema's, then each plugin that cannot be found or loaded.
  const problems = await configProblems(plain);
  const resolved = await resolvePlugins(pluginRefs, root, jiti, problems.length === 0);
  problems.push(...resolved.problems);
  if (problems.length) throw configError(file, problems);
  return { config: plain as FlumeConfig, file, plugins: resolved.plugins };
}

async function resolvePlugins(
  refs: Array<string | FlumePlugin>,
  root: string,
  jiti: Awaited<ReturnType<typeof makeJiti>>,
  load: boolean,
): Promise<{ plugins: FlumePlugin[]; problems: ConfigProblem[] }> {
  const plugins: FlumePlugin[] = [];
  const problems: ConfigProblem[] = [];
  for (const [index, ref] of refs.entries()) {
    if (typeof ref !== 'string') {
      plugins.push(ref);
      continue;
    }
    const path = `plugins[${index}]`;
    let resolved: string | undefined;
    try {
      if (!ref.startsWith('.') && !isAbsolute(ref)) resolved = createRequire(join(root, 'package.json')).resolve(ref);
      else resolved = jiti.esmResolve(resolve(root, ref), { try: true });
    } catch {
      resolved = undefined;
    }
    if (!resolved) {
      problems.push({ path, message: `"${ref}" cannot be found from ${root}`, fix: 'install the plugin in the repository, or give a path relative to the repository root' });
      continue;
    }
    // A config with other problems is not run further: its plugins are found, not loaded.
    if (!load) continue;
    try {
      const loaded = await jiti.import(resolved.startsWith('file:') ? fileURLToPath(resolved) : resolved, { default: true });
      const value = typeof loaded === 'function' ? await (loaded as () => unknown)() : loaded;
      plugins.push(...((Array.isArray(value) ? value : [value]) as FlumePlugin[]));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      problems.push({ path, message: `"${ref}" could not be loaded: ${firstLines(message)}`, fix: 'correct the plugin module; it must export a plugin, a list of plugins, or a function returning them' });
    }
  }
  return { plugins, problems };
}

/** An error's first two lines: its words and, for a syntax error, where. */
function firstLines(message: string): string {
  return message.split('\n').map((line) => line.trim()).filter(Boolean).slice(0, 2).join(' ');
}

async function makeJiti() {
  const { createJiti } = await import('jiti');
  const self = fileURLToPath(new URL('../index.js', import.meta.url));
  return createJiti(import.meta.url, { alias: { flume: self }, moduleCache: false, fsCache: await compileCache(), interopDefault: true });
}

/**
 * Where jiti keeps what it compiled of a config and its plugins, so a command run again on an
 * unchanged config does not load a TypeScript compiler (about a quarter second of every command).
 * jiti names each entry by its file and a hash of its source, so an edited file is compiled afresh.
 * It is a cache, not state: it lives in the user's cache folder (`FLUME_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/flume`, else `~/.cache/flume`), in a folder of the user's alone (700), since a
 * compiled config holds whatever the config holds; deleting it costs one compile. Only a config the
 * user trusted is ever run, so only such a config is ever compiled into it. Without a usable folder,
 * nothing is cached.
 */
async function compileCache(env: NodeJS.ProcessEnv = process.env): Promise<string | false> {
  const base = env.FLUME_CACHE_DIR || join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'flume');
  const dir = join(base, 'jiti');
  try {
    await privateDir(base);
    await privateDir(dir);
    return dir;
  } catch {
    return false;
  }
}
