/**
 * Loads a repository's config from the text that was found at its root (find.ts): a data config
 * parsed (data.ts), a module evaluated by jiti (`.ts`/`.mts`/`.js`/`.mjs`) at its own path; then
 * validates it and resolves the plugins it names. `import … from 'flume'`
 * inside a config resolves to this flume, so a repository need not install it locally.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { flumeError } from '../api/errors.js';
import type { FlumePlugin } from '../api/plugin.js';
import type { FlumeConfig, PluginEntry } from '../api/plugin.js';
import { configError, configProblems, type ConfigProblem } from './validate.js';
import { findConfigFile, type FoundConfig } from './find.js';
import { cachedTransform, compileCache } from './compile-cache.js';
import { isDataConfig, readDataConfig } from './data.js';

/** Where the loader looks, in order, in the repository root (kept in `find.ts`, which runs nothing). */
export { SEARCH_PLACES } from './find.js';

/** A loaded config: the checked config, the file it came from, and its plugins resolved. */
export interface LoadedConfig {
  config: FlumeConfig;
  file?: string;
  plugins: FlumePlugin[];
  /** Where each of `plugins` came from (same order): the module file it was loaded from, or the config file for a plugin object written in it. */
  origins: string[];
}

/**
 * Loads the config at `root` (the file `found` names, else the one `findConfigFile` finds: exactly
 * the file that was trusted); a repository without one gets the empty config.
 */
export async function loadConfig(root: string, found: FoundConfig | undefined = findConfigFile(root)): Promise<LoadedConfig> {
  if (!found) return { config: {}, plugins: [], origins: [] };
  // jiti is made only for a config that is code, or that names plugins: a data config needs none.
  let made: Promise<Jiti> | undefined;
  const jiti = () => (made ??= makeJiti());
  const file = found.file;
  let exported: unknown;
  if (isDataConfig(file)) {
    exported = readDataConfig(root, found);
  } else {
    try {
      // The text that was found (and trusted), evaluated as the module at its path: the file is not
      // read again, so a file swapped since it was found never runs in its place.
      const namespace = await (await jiti()).evalModule(found.text, { filename: file, async: true, forceTranspile: true });
      exported = namespace && typeof namespace === 'object' && 'default' in namespace ? (namespace as { default: unknown }).default : namespace;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const missing = missingModule(error);
      // An import that cannot be found is not a syntax error: name the import, and flume's own subpaths.
      if (missing) {
        throw flumeError('BAD_CONFIG', { file, module: missing, specifiers: flumeSpecifiers().join(', ') }, {
          variant: 'missingImport',
          details: { root, file, module: missing, message },
          cause: error,
        });
      }
      throw flumeError('BAD_CONFIG', { root, message: firstLines(message) }, {
        variant: 'loadFailed',
        details: { root, message },
        cause: error,
      });
    }
  }
  if (exported === undefined || exported === null) return { config: {}, plugins: [], origins: [] };
  let raw: unknown;
  try {
    // defineConfig takes an object, a promise of one, or a function (sync or async) returning one.
    raw = await (typeof exported === 'function' ? (exported as () => unknown)() : exported);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw flumeError('BAD_CONFIG', { file, message: firstLines(message) }, {
      variant: 'exportThrew',
      details: { file, message },
      cause: error,
    });
  }
  const plain = raw && typeof raw === 'object' ? { ...raw } : raw;
  const pluginRefs = Array.isArray((plain as FlumeConfig | undefined)?.plugins) ? (plain as FlumeConfig).plugins! : [];
  // Every problem at once: the schema's, then each plugin that cannot be found or loaded.
  const problems = await configProblems(plain);
  const resolved = await resolvePlugins(pluginRefs, root, file, jiti, problems.length === 0);
  problems.push(...resolved.problems);
  if (problems.length) throw configError(file, problems);
  return { config: plain as FlumeConfig, file, plugins: resolved.plugins, origins: resolved.origins };
}

async function resolvePlugins(
  refs: PluginEntry[],
  root: string,
  file: string,
  jiti: () => Promise<Jiti>,
  load: boolean,
): Promise<{ plugins: FlumePlugin[]; origins: string[]; problems: ConfigProblem[] }> {
  const plugins: FlumePlugin[] = [];
  const origins: string[] = [];
  const problems: ConfigProblem[] = [];
  for (const [index, entry] of refs.entries()) {
    if (typeof entry !== 'string' && !isWithOptions(entry)) {
      plugins.push(entry);
      origins.push(file);
      continue;
    }
    // `['./x.ts', { … }]`: the module and the options its factory is handed (the schema checked the shape).
    const [ref, options] = isWithOptions(entry) ? entry : [entry, undefined];
    const path = `plugins[${index}]`;
    let resolved: string | undefined;
    try {
      if (!ref.startsWith('.') && !isAbsolute(ref)) resolved = createRequire(join(root, 'package.json')).resolve(ref);
      else resolved = (await jiti()).esmResolve(resolve(root, ref), { try: true });
    } catch {
      resolved = undefined;
    }
    if (!resolved) {
      problems.push({ path, message: `"${ref}" cannot be found from ${root}`, fix: 'install the plugin in the repository, or give a path relative to the repository root' });
      continue;
    }
    // A config with other problems is not run further: its plugins are found, not loaded.
    if (!load) continue;
    const modulePath = resolved.startsWith('file:') ? fileURLToPath(resolved) : resolved;
    try {
      const loaded = await (await jiti()).import(modulePath, { default: true });
      if (options !== undefined && typeof loaded !== 'function') {
        problems.push({ path, message: `"${ref}" is given options but exports no function to hand them to`, fix: 'export a function (options) => plugin from the module, or drop the options' });
        continue;
      }
      const value = typeof loaded === 'function' ? await (loaded as (options?: unknown) => unknown)(options) : loaded;
      const list = (Array.isArray(value) ? value : [value]) as FlumePlugin[];
      plugins.push(...list);
      origins.push(...list.map(() => modulePath));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      problems.push({ path, message: `"${ref}" could not be loaded: ${firstLines(message)}`, fix: 'correct the plugin module; it must export a plugin, a list of plugins, or a function returning them' });
    }
  }
  return { plugins, origins, problems };
}

function isWithOptions(entry: PluginEntry): entry is readonly [string, Record<string, unknown>] {
  return Array.isArray(entry);
}

/** The module an error says could not be found (node's and jiti's wording), or undefined. */
function missingModule(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const named = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  return named && (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND' || /^Cannot find/.test(message)) ? named : undefined;
}

/** An error's first two lines: its words and, for a syntax error, where. */
function firstLines(message: string): string {
  return message.split('\n').map((line) => line.trim()).filter(Boolean).slice(0, 2).join(' ');
}

/**
 * Loads a CommonJS dependency with `require`: imported as ES modules, node first scans the whole of
 * each file for its exports (jiti's 190 KB bundle: about 40 ms of every command that loads a config).
 */
const requireCjs = createRequire(import.meta.url);

type Jiti = ReturnType<typeof import('jiti').createJiti>;

async function makeJiti(): Promise<Jiti> {
  const { createJiti } = requireCjs('jiti') as typeof import('jiti');
  const cache = await compileCache();
  return createJiti(import.meta.url, { alias: flumeAliases(), moduleCache: false, fsCache: cache, interopDefault: true, transform: cachedTransform(cache) });
}

/** flume's package root: the folder above this module holding flume's package.json. */
function packageRoot(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'flume') return dir;
  }
  return undefined;
}

/** flume's `exports` map from its package.json, or none. */
function packageExports(): Record<string, string | { default?: string }> {
  const root = packageRoot();
  if (!root) return {};
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports?: Record<string, string | { default?: string }> }).exports ?? {};
}

/** Every specifier a config may import flume by: `flume` and each subpath its package exports. */
function flumeSpecifiers(): string[] {
  const keys = Object.keys(packageExports());
  return keys.length ? keys.map((key) => (key === '.' ? 'flume' : `flume/${key.slice(2)}`)) : ['flume'];
}

/**
 * The aliases that make `import … from 'flume'` (and every subpath flume's package exports, such as
 * `flume/deliverables`) resolve to this flume, so a repository need not install it. Each subpath is
 * aliased to its own file: jiti replaces an alias as a prefix, so `flume` alone would turn
 * `flume/deliverables` into `…/core/index.js/deliverables`.
 */
function flumeAliases(): Record<string, string> {
  const aliases: Record<string, string> = { flume: fileURLToPath(new URL('../index.js', import.meta.url)) };
  const root = packageRoot();
  for (const [key, target] of Object.entries(packageExports())) {
    const file = typeof target === 'string' ? target : target.default;
    if (key === '.' || !root || !file) continue;
    aliases[`flume/${key.slice(2)}`] = join(root, file);
  }
  return aliases;
}

