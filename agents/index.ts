/**
 * The built-in agent drivers and pane hosts: Claude Code (key `claude-code`, and `printed`, the same
 * driver always on the printed host), the tmux host on flume's own socket, and the printed host.
 */
import { join } from 'node:path';
import { definePlugin, hostStateDir, type FlumePlugin, type PaneHost, type StartRequest } from '../core/index.js';
import { claudeCodeDriver } from './claude-code/driver.js';
import { codexDriver } from './codex/driver.js';
import type { CodexOptions } from './codex/options.js';
import { printedHost, printedHostPlugin } from './printed.js';
import { tmuxHost } from './panes/tmux.js';

export { claudeCodeDriver, agentEnvironment } from './claude-code/driver.js';
export { codexDriver } from './codex/driver.js';
export { tmuxHost } from './panes/tmux.js';
export { printedHost } from './printed.js';

/** The socket of flume's own tmux server (never the user's default server). */
export function flumeTmuxSocket(): string {
  return join(hostStateDir(), 'tmux', 'flume.sock');
}

/** Registers the tmux host on flume's own socket. */
export const tmuxHostPlugin = () =>
  definePlugin({ name: 'flume:host:tmux', apply: (flume) => flume.hosts.register('flume:host:tmux', tmuxHost({ socket: flumeTmuxSocket() })) });

/** Registers the Claude Code driver, configured from the config's `agents["claude-code"]`. */
export const claudeCodePlugin = () =>
  definePlugin({
    name: 'flume:agent:claude-code',
    apply(flume) {
      const options = flume.config.agents?.['claude-code'] ?? {};
      for (const key of ['claude-code', 'printed']) {
        const driver = claudeCodeDriver(flume, options, key);
        const name = 'flume:agent:claude-code';
        flume.agents.register(name, driver);
        // `printed` always runs on the printed host, whatever host the launch chose.
        const hostFor = (request: StartRequest): PaneHost | undefined => (key === 'printed' ? printedHost : flume.hosts.get(request.host));
        flume.hooks.startAgent.for(key).tapPromise(name, async (request) => {
          const host = hostFor(request);
          return host ? driver.start(request, host) : undefined;
        });
        flume.hooks.planAgent.for(key).tapPromise(name, async (request) => {
          const host = hostFor(request);
          return host && driver.plan ? driver.plan(request, host) : undefined;
        });
        flume.hooks.confirmPrompt.for(key).tapPromise(name, (request) => driver.confirm(request));
        flume.hooks.readAgentState.for(key).tapPromise(name, (handle) => driver.read(handle));
      }
    },
  });

/**
 * Registers the Codex CLI driver (key `codex`), configured from the config's `agents.codex`, on the
 * host the launch chose. All of its registration is here, in one place.
 */
export const codexPlugin = () =>
  definePlugin({
    name: 'flume:agent:codex',
    apply(flume) {
      const name = 'flume:agent:codex';
      const driver = codexDriver(flume, (flume.config.agents?.codex ?? {}) as CodexOptions);
      flume.agents.register(name, driver);
      flume.hooks.startAgent.for('codex').tapPromise(name, async (request) => {
        const host = flume.hosts.get(request.host);
        return host ? driver.start(request, host) : undefined;
      });
      flume.hooks.planAgent.for('codex').tapPromise(name, async (request) => {
        const host = flume.hosts.get(request.host);
        return host && driver.plan ? driver.plan(request, host) : undefined;
      });
      flume.hooks.confirmPrompt.for('codex').tapPromise(name, (request) => driver.confirm(request));
      flume.hooks.readAgentState.for('codex').tapPromise(name, (handle) => driver.read(handle));
    },
  });

/** Every built-in agent plugin. */
export function agentPlugins(): FlumePlugin[] {
  return [tmuxHostPlugin(), printedHostPlugin(), claudeCodePlugin(), codexPlugin()];
}
