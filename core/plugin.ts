/**
 * The plugin contract and the flume instance plugins are applied to. A plugin is `{ name, apply }`;
 * `apply` taps hooks with the plugin's own name and registers kinds, agent drivers and pane hosts.
 * The built-ins use exactly this contract (plugins/defaults.ts).
 */
import { createHooks, type Hooks } from './hooks.js';
import { FlumeError, inPlugin } from './errors.js';
import type { AgentDriver, PaneHost } from './agent.js';
import type { FlumeConfig, KindDef, Logger } from './types.js';

/** A flume plugin: a namespaced name (`flume:kind:fix`, `acme:kind:unit`) and an apply function. */
export interface FlumePlugin {
  name: string;
  apply(flume: Flume): void | Promise<void>;
}

/** What a plugin's `apply` is handed. */
export interface Flume {
  readonly hooks: Hooks;
  /** The repository's config (validated), or an empty one where no repository is involved. */
  readonly config: FlumeConfig;
  /** The repository root the config came from, when there is one. */
  readonly root?: string;
  readonly kinds: Registry<KindDef>;
  readonly agents: Registry<AgentDriver>;
  readonly hosts: Registry<PaneHost>;
  readonly logger: Logger;
}

/** A named set of things plugins register; the first registration of a name wins unless replaced. */
export class Registry<T extends { name?: string; key?: string }> {
  private readonly items = new Map<string, { value: T; plugin: string; replaced?: string }>();

  constructor(private readonly what: string) {}

  /** Registers `value` under its name (or key); a second registration of one name is an error unless `replace`. */
  register(plugin: string, value: T, options: { replace?: boolean } = {}): void {
    const key = (value.key ?? value.name) as string;
    const existing = this.items.get(key);
    if (existing && !options.replace) {
      throw new FlumeError('BAD_CONFIG', `${this.what} "${key}" is registered twice: by ${existing.plugin} and by ${plugin}.`, {
        fix: `Rename one of them, or register with { replace: true } to replace the ${existing.plugin} one.`,
        details: { key, first: existing.plugin, second: plugin },
        plugin,
      });
    }
    // Who was replaced is kept, so `flume kinds` can say a repository's kind stands in for a built-in.
    this.items.set(key, { value, plugin, replaced: existing ? (existing.replaced ?? existing.plugin) : undefined });
  }

  /** The value registered under `key`, or undefined. */
  get(key: string): T | undefined {
    return this.items.get(key)?.value;
  }

  /** The plugin that registered `key`. */
  owner(key: string): string | undefined {
    return this.items.get(key)?.plugin;
  }

  /** The plugin whose registration of `key` a later one replaced (the first, when replaced twice), or undefined. */
  replaced(key: string): string | undefined {
    return this.items.get(key)?.replaced;
  }

  /** Every registered value, in registration order. */
  all(): T[] {
    return [...this.items.values()].map((entry) => entry.value);
  }
}

/** A typed identity for writing a plugin. */
export function definePlugin(plugin: FlumePlugin): FlumePlugin {
  return plugin;
}

/** A typed identity for writing a kind as data. */
export function defineKind(kind: KindDef): KindDef {
  return kind;
}

/**
 * A typed identity for `flume.config.ts`: the config itself, a promise of it, or a function (sync or
 * async) returning it, which flume calls when it loads the file. All checking happens then.
 */
// The function form is tried first: a function's return is typed once, against the first signature
// that gives it a context, so with the object form first its literals ('tmux') would widen to string.
export function defineConfig(config: () => FlumeConfig | Promise<FlumeConfig>): () => FlumeConfig | Promise<FlumeConfig>;
export function defineConfig(config: Promise<FlumeConfig>): Promise<FlumeConfig>;
export function defineConfig(config: FlumeConfig): FlumeConfig;
export function defineConfig(config: ConfigExport): ConfigExport {
  return config;
}

/** What a config file may export: the config, a promise of it, or a function returning either. */
export type ConfigExport = FlumeConfig | Promise<FlumeConfig> | (() => FlumeConfig | Promise<FlumeConfig>);

const silent: Logger = { info() {}, warn() {}, debug() {} };

/** Creates a flume instance and applies the plugins to it, in order; a failing plugin is named. */
export async function createFlume(options: {
  plugins: FlumePlugin[];
  config?: FlumeConfig;
  root?: string;
  logger?: Logger;
}): Promise<Flume> {
  const flume: Flume = {
    hooks: createHooks(),
    config: options.config ?? {},
    root: options.root,
    kinds: new Registry<KindDef>('Kind'),
    agents: new Registry<AgentDriver>('Agent driver'),
    hosts: new Registry<PaneHost>('Pane host'),
    logger: options.logger ?? silent,
  };
  for (const plugin of options.plugins) {
    if (!plugin || typeof plugin.name !== 'string' || typeof plugin.apply !== 'function') {
      throw new FlumeError('BAD_CONFIG', 'A plugin must be an object with a string "name" and an "apply" function.', {
        fix: 'Write plugins with definePlugin({ name: "you:thing", apply(flume) { … } }).',
        details: { plugin: describe(plugin) },
      });
    }
    try {
      await plugin.apply(flume);
    } catch (error) {
      throw inPlugin(error, plugin.name, 'apply');
    }
  }
  return flume;
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return `{ ${Object.keys(value).join(', ')} }`;
}
