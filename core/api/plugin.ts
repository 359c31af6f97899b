/**
 * The plugin contract and the flume instance plugins are applied to. A plugin is `{ name, apply }`;
 * `apply` adds what it provides to a registry, each written with its `define…`: kinds
 * (`defineKind`, `flume.kinds.add`), deliverable readers (`defineDeliverable`,
 * `flume.deliverables.add`), agent drivers (`defineDriver`, `flume.agents.add`) and pane hosts
 * (`definePaneHost`, `flume.hosts.add`), in the plugin's own name; one that takes over a key
 * already registered says so (`{ replace: true }`). Registering is the whole job: the core taps the
 * keyed hooks a reader or a driver answers itself, here and nowhere else; plugins tap only the
 * lifecycle hooks (`beforeReady`, `beforeTidy`). The built-ins use exactly this contract
 * (plugins/defaults.ts).
 */
import { createHooks, type DeliverableReading, type DeliverableRequest, type Hooks } from './hooks.js';
import { flumeError, inPlugin } from './errors.js';
import type { AgentDriver } from './driver.js';
import type { PaneHost } from './pane-host.js';
import type { KindDef } from './config.js';
import type { configSchema, Infer } from './config.js';
import type { DeliverableReader } from './deliverable.js';
import { noteSessionVariables } from '../support/environment.js';

/** A repository's flume config, as written in `flume.config.ts`. */
export type FlumeConfig = Omit<Infer<typeof configSchema>, 'plugins'> & {
  plugins?: PluginEntry[];
};
/** One entry of a config's `plugins`: a module, a module with the options its factory is handed, or a plugin. */
export type PluginEntry = string | readonly [string, Record<string, unknown>] | FlumePlugin;

/** A minimal logger handed to plugins; only the CLI decides where lines go. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

/** A flume plugin: a namespaced name (`flume:kind:fix`, `acme:kind:unit`) and an apply function. */
export interface FlumePlugin {
  name: string;
  apply(flume: Flume): void | Promise<void>;
}

/**
 * What a plugin's `apply` is handed: its registries register in that plugin's name (`add`). The
 * instance `createFlume` returns has the same registries and hooks; its `add` has no plugin to name.
 */
export interface Flume {
  readonly hooks: Hooks;
  /** The repository's config (validated), or an empty one where no repository is involved. */
  readonly config: FlumeConfig;
  /** The repository root the config came from, when there is one. */
  readonly root?: string;
  /** Kinds by name. */
  readonly kinds: Registry<KindDef>;
  /** Deliverable readers by type; registering one taps `readDeliverable.for(type)` in the plugin's name. */
  readonly deliverables: Registry<DeliverableReader>;
  /** Agent drivers by key; registering one taps `startAgent`, `planAgent` and `confirmPrompt` for its key. */
  readonly agents: Registry<AgentDriver>;
  /** Pane hosts by key. */
  readonly hosts: Registry<PaneHost>;
  /** What holds when the config names nothing: set by a preset (the built-ins' is plugins/defaults.ts). */
  readonly defaults: FlumeDefaults;
  readonly logger: Logger;
}

/** Defaults a preset sets, so the core names no built-in. */
export interface FlumeDefaults {
  /** The agent driver a stage runs when neither it nor the config's `agent.driver` names one. */
  driver?: string;
  /** The deliverable a fix round (a stage run again because the next sent it back) ends on; default the stage's own. */
  fixDeliverable?: string;
}

/**
 * A named set of things plugins register, each under the key it carries (a kind's `name`, a
 * reader's `type`, a driver's or a host's `key`); the first registration of a key wins unless a
 * later one says `replace`.
 */
export class Registry<T extends object> {
  private readonly items = new Map<string, { value: T; plugin: string; replaced?: string }>();
  /** The plugin whose `apply` this registry was handed (`as`); `add` registers in its name. */
  private readonly plugin?: string;

  /**
   * `field` names what a value is registered under (`key`, `name`, `type`); `onRegister` runs for each
   * registration once it stands, with the plugin it replaced (the core taps a driver's or a reader's
   * hooks there).
   */
  constructor(
    private readonly what: string,
    private readonly options: { field?: string; onRegister?: (plugin: string, value: T, key: string, replaced?: string) => void } = {},
  ) {}

  /**
   * The way a plugin registers: `value` under the key it carries, in the name of the plugin whose
   * `apply` was handed this registry. A key registered already is an error unless `replace`: then
   * this value answers for it, and `get(key)` beforehand is the one replaced (to defer to).
   */
  add(value: T, options: { replace?: boolean } = {}): void {
    if (this.plugin === undefined) {
      throw flumeError('BAD_CONFIG', { what: this.what }, { variant: 'addedOutsideApply' });
    }
    this.register(this.plugin, value, options);
  }

  /** Registers `value` under its key (or name) in the name of `plugin`; `add` is this with the applying plugin's name. */
  register(plugin: string, value: T, options: { replace?: boolean } = {}): void {
    const field = this.options.field;
    const own = (value ?? {}) as Record<string, unknown>;
    const key = field ? own[field] : (own.key ?? own.name);
    if (typeof key !== 'string' || key === '') {
      throw flumeError('BAD_CONFIG', { what: this.what, plugin, field: field ?? 'key' }, {
        variant: 'registeredWithoutKey',
        plugin,
      });
    }
    const existing = this.items.get(key);
    if (existing && !options.replace) {
      throw flumeError('BAD_CONFIG', { what: this.what, key, first: existing.plugin, plugin }, {
        variant: 'registeredTwice',
        details: { key, first: existing.plugin, second: plugin },
        plugin,
      });
    }
    // Who was replaced is kept, so `flume kinds` can say a repository's kind stands in for a built-in.
    this.items.set(key, { value, plugin, replaced: existing ? (existing.replaced ?? existing.plugin) : undefined });
    this.options.onRegister?.(plugin, value, key, existing?.plugin);
  }

  /**
   * This registry as the plugin named `plugin` is handed it: the same registrations, with `add`
   * registering in that name. `createFlume` hands each plugin's `apply` its own.
   */
  as(plugin: string): Registry<T> {
    // Everything but the name is the registry's own (read through the prototype), so what one
    // plugin registers every other sees.
    return Object.create(this, { plugin: { value: plugin } }) as Registry<T>;
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
  const hooks = createHooks();
  const flume: Flume = {
    hooks,
    config: options.config ?? {},
    root: options.root,
    kinds: new Registry<KindDef>('Kind'),
    deliverables: new Registry<DeliverableReader>('Deliverable reader', {
      field: 'type',
      onRegister(plugin, reader, type, replaced) {
        // Tapped once per registration; a reader replaced since lets the one replacing it answer.
        hooks.readDeliverable.for(type).tapPromise(tapOf(plugin, replaced), async (request) => (flume.deliverables.get(type) === reader ? reader.read(request) : undefined));
      },
    }),
    agents: new Registry<AgentDriver>('Agent driver', { onRegister: (plugin, driver, key, replaced) => tapDriver(flume, tapOf(plugin, replaced), driver, key) }),
    hosts: new Registry<PaneHost>('Pane host'),
    defaults: {},
    logger: options.logger ?? silent,
  };
  for (const plugin of options.plugins) {
    if (!plugin || typeof plugin.name !== 'string' || typeof plugin.apply !== 'function') {
      throw flumeError('BAD_CONFIG', {}, {
        variant: 'notAPlugin',
        details: { plugin: describe(plugin) },
      });
    }
    try {
      await plugin.apply(handedTo(flume, plugin.name));
    } catch (error) {
      throw inPlugin(error, plugin.name, 'apply');
    }
  }
  return flume;
}

/** The flume a plugin's `apply` is handed: every registry's `add` registers in the plugin's name. */
function handedTo(flume: Flume, plugin: string): Flume {
  const { kinds, deliverables, agents, hosts } = flume;
  return { ...flume, kinds: kinds.as(plugin), deliverables: deliverables.as(plugin), agents: agents.as(plugin), hosts: hosts.as(plugin) };
}

/**
 * A registration's tap, in the registering plugin's name; one that replaced another goes before the
 * replaced one's, so the first tap of a key is always its owner's (as `flume plugins` lists it).
 */
function tapOf(plugin: string, replaced: string | undefined): { name: string; before?: string } {
  return replaced === undefined ? { name: plugin } : { name: plugin, before: replaced };
}

/**
 * The hooks a registered driver answers, tapped in the registering plugin's name: the registry is the
 * one way to provide start, plan and confirm (a plugin that wraps a driver registers the wrapper with
 * `replace`), and a driver's plugin taps nothing itself. A driver replaced since lets the one
 * replacing it answer.
 */
function tapDriver(flume: Flume, plugin: { name: string; before?: string }, driver: AgentDriver, key: string): void {
  // Its sessions' variables reach nothing flume starts from here on (core/support/environment.ts).
  if (Array.isArray(driver.sessionVariables)) noteSessionVariables(driver.sessionVariables);
  const current = () => flume.agents.get(key) === driver;
  flume.hooks.startAgent.for(key).tapPromise(plugin, async (request, host) => (current() ? driver.start(request, host) : undefined));
  flume.hooks.planAgent.for(key).tapPromise(plugin, async (request, host) => (current() && driver.plan ? driver.plan(request, host) : undefined));
  flume.hooks.confirmPrompt.for(key).tapPromise(plugin, async (request) => (current() ? driver.confirm(request) : undefined));
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return `{ ${Object.keys(value).join(', ')} }`;
}
