/**
 * The default preset: every built-in kind, deliverable reader, agent driver and pane host, wired
 * through the same public API a third party uses. Imported by bin/flume.ts and by the MCP server
 * (plugins/claude/mcp-server.ts), which runs the commands in its own process.
 */
import type { FlumePlugin } from '../core/index.js';
import { kindPlugins } from '../kinds/index.js';
import { deliverablePlugins } from '../deliverables/index.js';
import { agentPlugins } from '../agents/index.js';
import { herdrPlugin } from './herdr/index.js';

/** The built-in plugins, in the order they apply. */
export async function defaultPreset(): Promise<FlumePlugin[]> {
  return [...kindPlugins(), ...deliverablePlugins(), ...agentPlugins(), herdrPlugin()];
}
