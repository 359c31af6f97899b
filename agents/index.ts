/**
 * The built-in agent drivers and pane hosts: Claude Code (key `claude-code`, and `printed`, the same
 * driver always on the printed host), the Codex CLI (`codex`), the Gemini CLI (`gemini`), OpenCode (`opencode`), the tmux
 * host on flume's own socket, the container host, and the printed host.
 */
import { join } from 'node:path';
import { containerHost, definePlugin, hostStateDir, type FlumePlugin } from '../core/index.js';
import { claudeCodeDriver } from './claude-code/driver.js';
import { codexDriver } from './codex/driver.js';
import type { CodexOptions } from './codex/options.js';
import { geminiDriver } from './gemini/driver.js';
import type { GeminiOptions } from './gemini/options.js';
import { opencodeDriver } from './opencode/driver.js';
import type { OpencodeOptions } from './opencode/options.js';
import { printedHost, printedHostPlugin } from './printed.js';
import { programOptionsSchema } from './program.js';
import { tmuxHost } from './panes/tmux.js';

export { claudeCodeDriver } from './claude-code/driver.js';
export { agentEnvironment } from './claude-code/environment.js';
export { codexDriver } from './codex/driver.js';
export { geminiDriver } from './gemini/driver.js';
export { opencodeDriver } from './opencode/driver.js';
export { tmuxHost } from './panes/tmux.js';
export { printedHost } from './printed.js';

/** The socket of flume's own tmux server (never the user's default server). */
export function flumeTmuxSocket(): string {
  return join(hostStateDir(), 'tmux', 'flume.sock');
}

/** Registers the tmux host on flume's own socket. */
/** The container host: the panes of agents that run in a place's container (core/engine/container/host.ts). */
export const containerHostPlugin = () => definePlugin({ name: 'flume:host:container', apply: (flume) => flume.hosts.add(containerHost(flume)) });

export const tmuxHostPlugin = () =>
  definePlugin({ name: 'flume:host:tmux', apply: (flume) => flume.hosts.add(tmuxHost({ socket: flumeTmuxSocket() })) });

/** Claude Code's options (`agents["claude-code"]`), checked when the repository opens. */
export const CLAUDE_CODE_OPTIONS = programOptionsSchema({ configDir: { type: 'string', minLength: 1 } });

/**
 * Registers the Claude Code driver, configured from the config's `agents["claude-code"]`, and the
 * same driver again as `printed`, always on the printed host. Registering is the whole job.
 */
export const claudeCodePlugin = () =>
  definePlugin({
    name: 'flume:agent:claude-code',
    apply(flume) {
      const options = flume.config.agents?.['claude-code'] ?? {};
      flume.agents.add({ ...claudeCodeDriver(flume, options, 'claude-code'), optionsSchema: CLAUDE_CODE_OPTIONS });
      flume.agents.add({ ...claudeCodeDriver(flume, options, 'printed'), host: printedHost.key });
    },
  });

/**
 * Registers the Codex CLI driver (key `codex`), configured from the config's `agents.codex`, on the
 * host the launch chose. Registering is the whole job.
 */
export const codexPlugin = () =>
  definePlugin({
    name: 'flume:agent:codex',
    apply(flume) {
      flume.agents.add(codexDriver(flume, (flume.config.agents?.codex ?? {}) as CodexOptions));
    },
  });

/**
 * Registers the Gemini CLI driver (key `gemini`), configured from the config's `agents.gemini`, on the
 * host the launch chose. Registering is the whole job.
 */
export const geminiPlugin = () =>
  definePlugin({
    name: 'flume:agent:gemini',
    apply(flume) {
      flume.agents.add(geminiDriver(flume, (flume.config.agents?.gemini ?? {}) as GeminiOptions));
    },
  });

/**
 * Registers the OpenCode driver (key `opencode`), configured from the config's `agents.opencode`, on
 * the host the launch chose. Registering is the whole job.
 */
export const opencodePlugin = () =>
  definePlugin({
    name: 'flume:agent:opencode',
    apply(flume) {
      flume.agents.add(opencodeDriver(flume, (flume.config.agents?.opencode ?? {}) as OpencodeOptions));
    },
  });

/** Every built-in agent plugin. */
export function agentPlugins(): FlumePlugin[] {
  return [tmuxHostPlugin(), printedHostPlugin(), containerHostPlugin(), claudeCodePlugin(), codexPlugin(), geminiPlugin(), opencodePlugin()];
}
