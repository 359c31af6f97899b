/**
 * The core's one way to an agent driver. Every method the core needs of a driver is called here: a
 * throw becomes an error naming the plugin that registered it and the method (`inPlugin`), and what
 * it returns is checked as a tap's return is (core/api/hook-returns.ts) before the engine sees it. Start,
 * plan and confirm go through their hooks (which registering the driver tapped; a plugin intercepts
 * them by registering a driver that wraps it); the other methods are called on the registered
 * driver. Nothing in core or the plugin folders calls a driver any other way (the structure test looks).
 */
import { FlumeError, flumeError, inPlugin } from '../api/errors.js';
import { callHook, type AgentPlan, type ConfirmRequest, type StartRequest } from '../api/hooks.js';
import { badReturn, driverReturnCheck } from '../api/hook-returns.js';
import type { AgentDriver, UsageRead } from '../api/driver.js';
import type { DoctorCheck, PaneHost } from '../api/pane-host.js';
import type { Flume } from '../api/plugin.js';
import type { AgentHandle, AgentReading, PromptState } from '../api/agent.js';
import { agentBaseEnvironment } from '../support/environment.js';
import { containerEnvironment } from './container-env.js';

/** A registered driver as the core reaches it: the same methods, each named and checked. */
export interface ReachedDriver {
  key: string;
  /** The plugin that registered it. */
  plugin: string;
  /** The host it always runs on, when it declares one. */
  host?: string;
  hasPlan: boolean;
  hasUsage: boolean;
  inContainers: boolean;
  /** The hosts its program must reach (its `egress`), none where it says none. */
  egress(env: Record<string, string>): string[];
  start(request: StartRequest, host: PaneHost): Promise<AgentHandle>;
  /** What start would run, or undefined when the driver cannot say. */
  plan(request: StartRequest, host: PaneHost): Promise<AgentPlan | undefined>;
  confirm(request: ConfirmRequest): Promise<PromptState>;
  waitForInput(handle: AgentHandle, timeoutMs: number): Promise<'ready' | 'slow' | 'exited'>;
  /** The driver's refusal of `text` (its `refuse`), undefined for a text it takes as a prompt. */
  refusal(text: string): Error | undefined;
  /** Sends `text`, first refused as the driver's `refuse` says (nothing typed). */
  send(handle: AgentHandle, text: string): Promise<void>;
  resend(handle: AgentHandle, text: string): Promise<void>;
  read(handle: AgentHandle): Promise<AgentReading>;
  /** Many agents read at once (`readMany` where the driver has it, else `read` each); undefined where one could not be read. */
  readMany(handles: AgentHandle[]): Promise<Array<AgentReading | undefined>>;
  hasDraft(handle: AgentHandle): Promise<boolean>;
  /** The driver's `withdraw` where it has one; true (nothing to take back) where it has none. */
  withdraw(handle: AgentHandle, text: string): Promise<boolean>;
  stop(handle: AgentHandle, options?: { hangUp?: boolean }): Promise<void>;
  usage(handle: AgentHandle, cursor?: unknown): Promise<UsageRead | undefined>;
  watchPaths(handle: AgentHandle): string[];
  checks(): Promise<DoctorCheck[] | undefined>;
}

/** The driver registered under `key`, reached through the checked path; undefined when none is. */
export function reachDriver(flume: Flume, key: string): ReachedDriver | undefined {
  const driver = flume.agents.get(key);
  if (!driver) return undefined;
  const plugin = flume.agents.owner(key)!;
  const call = <T>(method: string, run: () => T): T => {
    const name = `${method}(${key})`;
    const judged = (value: unknown) => {
      const problems = driverReturnCheck(method)?.(value);
      if (problems?.length) throw badReturn(plugin, name, problems, value);
      return value as T;
    };
    let answer: T;
    try {
      answer = run();
    } catch (error) {
      throw inPlugin(error, plugin, name);
    }
    if (answer instanceof Promise) return answer.then(judged, (error) => Promise.reject(inPlugin(error, plugin, name))) as T;
    return judged(answer);
  };
  // The agent's environment is the core's to decide (core/support/environment.ts): the driver gets it made.
  // A place in a container starts from the container's environment, not the caller's (core/engine/container/engine.ts).
  // Less every registered driver's session variables, not this one's alone: a Codex agent started
  // from inside a Claude Code session gets no token to that session's inbox (docs/decisions/agent-environment.md).
  const withEnvironment = (request: StartRequest): StartRequest => ({ ...request, env: request.place.container ? containerEnvironment(request.place.container) : agentBaseEnvironment(everySessionVariable(flume)) });
  const refusal = (text: string): Error | undefined => {
    if (typeof driver.refuse !== 'function') return undefined;
    const refused = call('refuse', () => driver.refuse!(text));
    return refused === undefined ? undefined : inPlugin(refused, plugin, `refuse(${key})`);
  };
  const own = (method: keyof AgentDriver) => {
    if (typeof driver[method] !== 'function') throw missing(plugin, key, method);
  };
  return {
    key,
    plugin,
    ...(driver.host ? { host: driver.host } : {}),
    hasPlan: typeof driver.plan === 'function',
    hasUsage: typeof driver.usage === 'function',
    inContainers: driver.inContainers === true,
    egress: (env) => {
      if (typeof driver.egress !== 'function') return [];
      const hosts = call('egress', () => driver.egress!(env));
      return Array.isArray(hosts) ? hosts.filter((host): host is string => typeof host === 'string') : [];
    },
    async start(request, host) {
      const handle = await callHook(`startAgent(${key})`, flume.hooks.startAgent.for(key), withEnvironment(request), host);
      if (!handle) {
        throw flumeError('AGENT_START_FAILED', { plugin, agent: key }, {
          variant: 'noAnswer',
          plugin,
          hook: `startAgent(${key})`,
        });
      }
      return handle;
    },
    async plan(request, host) {
      return (await callHook(`planAgent(${key})`, flume.hooks.planAgent.for(key), withEnvironment(request), host)) ?? undefined;
    },
    async confirm(request) {
      return (await callHook(`confirmPrompt(${key})`, flume.hooks.confirmPrompt.for(key), request)) ?? 'unknown';
    },
    waitForInput: (handle, timeoutMs) => (own('waitForInput'), call('waitForInput', () => driver.waitForInput(handle, timeoutMs))),
    refusal,
    send: async (handle, text) => {
      const refused = refusal(text);
      if (refused) throw refused;
      return (own('send'), call('send', () => driver.send(handle, text)));
    },
    resend: async (handle, text) => {
      const refused = refusal(text);
      if (refused) throw refused;
      return (own('resend'), call('resend', () => driver.resend(handle, text)));
    },
    read: (handle) => (own('read'), call('read', () => driver.read(handle))),
    async readMany(handles) {
      if (typeof driver.readMany === 'function') {
        const many = await call('readMany', () => driver.readMany!(handles)).catch(() => undefined);
        if (Array.isArray(many) && many.length === handles.length) return many;
      }
      return Promise.all(handles.map((handle) => this.read(handle).catch(() => undefined)));
    },
    hasDraft: (handle) => (own('hasDraft'), call('hasDraft', () => driver.hasDraft(handle))),
    withdraw: async (handle, text) => (typeof driver.withdraw === 'function' ? call('withdraw', () => driver.withdraw!(handle, text)) : true),
    stop: (handle, options) => (own('stop'), call('stop', () => driver.stop(handle, options))),
    usage: async (handle, cursor) => (typeof driver.usage === 'function' ? call('usage', () => driver.usage!(handle, cursor)) : undefined),
    watchPaths: (handle) => (typeof driver.watchPaths === 'function' ? call('watchPaths', () => driver.watchPaths(handle)) : []),
    checks: async () => (typeof driver.checks === 'function' ? call('checks', () => driver.checks!()) : undefined),
  };
}

/** The session variables every registered driver declares (AgentDriver.sessionVariables). */
function everySessionVariable(flume: Flume): string[] {
  return flume.agents.all().flatMap((driver) => (Array.isArray(driver.sessionVariables) ? driver.sessionVariables.filter((name): name is string => typeof name === 'string' && name !== '') : []));
}

/** The driver registered under `key`, or UNKNOWN_AGENT naming the ones there are. */
export function requireDriver(flume: Flume, key: string): ReachedDriver {
  const reached = reachDriver(flume, key);
  if (reached) return reached;
  const known = flume.agents.all().map((driver) => driver.key);
  throw flumeError('UNKNOWN_AGENT', { agent: key, known: known.join(', ') || 'none is registered' }, {
    details: { agent: key, known },
  });
}

/** The methods every driver must have (the rest are optional). */
export const DRIVER_METHODS = ['start', 'waitForInput', 'send', 'resend', 'confirm', 'read', 'hasDraft', 'stop', 'watchPaths'] as const;

/** The required methods a registered driver lacks, for the config check. */
export function missingMethods(driver: AgentDriver): string[] {
  return DRIVER_METHODS.filter((method) => typeof (driver as unknown as Record<string, unknown>)[method] !== 'function');
}

function missing(plugin: string, key: string, method: string): FlumeError {
  return flumeError('PLUGIN_BAD_RETURN', { plugin, agent: key, method }, {
    variant: 'driverMethod',
    plugin,
    hook: `${method}(${key})`,
  });
}
