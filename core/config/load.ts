/**
 * Finds and loads a repository's config with cosmiconfig (jiti loads `.ts`/`.mts`/`.js`/`.mjs`), at
 * the repository root only, validates it, and resolves the plugins it names. `import … from 'flume'`
 * inside a config resolves to this flume, so a repository need not install it locally.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isAbsolute, join, resolve } from 'node:path';
import { FlumeError } from '../errors.js';
import type { FlumePlugin } from '../plugin.js';
import type { FlumeConfig } from './schema.js';
import { validateConfig } from './validate.js';

/** Where cosmiconfig looks, in order, in the repository root. */
export const SEARCH_PLACES = [
  'package.json',
  '.flumerc',
  '.flumerc.json',
  '.flumerc.yaml',
  '.flumerc.yml',
  '.flumerc.js',
  '.flumerc.mjs',
  '.flumerc.ts',
  '.flumerc.mts',
  'flume.config.ts',
  'flume.config.mts',
  'flume.config.js',
  'flume.config.mjs',
];

/** A loaded config: the checked config, the file it came from, and its plugins resolved. */
export interface LoadedConfig {
  config: FlumeConfig;
  file?: string;
  plugins: FlumePlugin[];
}

/** Loads the config at `root`; a repository without one gets the empty config. */
export async function loadConfig(root: string): Promise<LoadedConfig> {
  const { cosmiconfig } = await import('cosmiconfig');
  const jiti = await makeJiti();
  const load = async (file: string) => jiti.import(file, { default: true });
  const explorer = cosmiconfig('flume', {
    searchPlaces: SEARCH_PLACES,
    searchStrategy: 'none',
    cache: false,
    loaders: { '.ts': load, '.mts': load, '.js': load, '.mjs': load },
  });
  let found;
  try {
    found = await explorer.search(root);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new FlumeError('BAD_CONFIG', `The config in ${root} could not be loaded: ${message.split('\n')[0]}`, {
      fix: 'Correct the syntax of the config file; it must export the config as its default export.',
      details: { root, message },
      cause: error,
    });
  }
  if (!found || found.isEmpty) return { config: {}, plugins: [] };
  const raw = typeof found.config === 'function' ? await found.config() : found.config;
  const plain = raw && typeof raw === 'object' ? { ...raw } : raw;
  const pluginRefs = Array.isArray(plain?.plugins) ? plain.plugins : undefined;
  const config = await validateConfig(plain, found.filepath);
  const plugins = pluginRefs ? await resolvePlugins(pluginRefs, root, found.filepath, jiti) : [];
  return { config, file: found.filepath, plugins };
}

async function resolvePlugins(
  refs: Array<string | FlumePlugin>,
  root: string,
  file: string,
  jiti: Awaited<ReturnType<typeof makeJiti>>,
): Promise<FlumePlugin[]> {
  const plugins: FlumePlugin[] = [];
  for (const [index, ref] of refs.entries()) {
    if (typeof ref !== 'string') {
      plugins.push(ref);
      continue;
    }
    let resolved: string;
    try {
      resolved = ref.startsWith('.') || isAbsolute(ref) ? resolve(root, ref) : createRequire(join(root, 'package.json')).resolve(ref);
    } catch {
      throw new FlumeError('BAD_CONFIG', `${file}: plugins[${index}] names "${ref}", which cannot be found from ${root}.`, {
        fix: 'Install the plugin in the repository, or give a path relative to the repository root.',
        details: { plugin: ref, root },
      });
    }
    const loaded = await jiti.import(resolved, { default: true });
    const value = typeof loaded === 'function' ? await (loaded as () => unknown)() : loaded;
    plugins.push(...((Array.isArray(value) ? value : [value]) as FlumePlugin[]));
  }
  return plugins;
}

async function makeJiti() {
  const { createJiti } = await import('jiti');
  const self = fileURLToPath(new URL('../index.js', import.meta.url));
  return createJiti(import.meta.url, { alias: { flume: self }, moduleCache: false, fsCache: false, interopDefault: true });
}
