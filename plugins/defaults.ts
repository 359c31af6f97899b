/**
 * The default preset: every built-in kind, deliverable reader, agent driver and pane host, wired
 * through the same public API a third party uses, and the defaults that hold when a config names
 * nothing (the core names no built-in). Imported by bin/flume.ts and by the MCP server
 * (plugins/claude/mcp-server.ts), which runs the commands in its own process.
 */
import { definePlugin, type FlumePlugin } from '../core/index.js';
import { kindPlugins } from '../kinds/index.js';
import { deliverablePlugins } from '../deliverables/index.js';
import { agentPlugins } from '../agents/index.js';
import { herdrPlugin } from './herdr/index.js';

/**
 * What holds when a config names nothing: stages run Claude Code, and a fix round (code run again
 * because verify sent the place back) ends on a new commit. Which host runs agents with `auto` is
 * each host's own `priority` (herdr, then tmux, then a printed command).
 */
export const defaultsPlugin = () =>
  definePlugin({
    name: 'flume:defaults',
    apply(flume) {
      flume.defaults.driver = 'claude-code';
      flume.defaults.fixDeliverable = 'commit';
    },
  });

/** The built-in plugins, in the order they apply. */
export async function defaultPreset(): Promise<FlumePlugin[]> {
  return [defaultsPlugin(), ...kindPlugins(), ...deliverablePlugins(), ...agentPlugins(), herdrPlugin()];
}
