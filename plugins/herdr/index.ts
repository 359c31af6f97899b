/**
 * plugins/herdr: where herdr runs, each stage's agent runs in a herdr pane (host key `herdr`, which
 * `auto` prefers), and flume's places show as rows in herdr's sidebar. The herdr side of the plugin
 * (actions, popups, the sidebar's event hooks) is herdr-plugin.toml beside this file; README.md says how to
 * link it and which herdr version's documentation it follows.
 */
import { definePlugin, type FlumePlugin } from '../../core/index.js';
import { herdrHost, type HerdrHostOptions } from './host.js';

export { herdrHost, HERDR_BURST_CHARS, HERDR_BURST_GAP_MS, HERDR_KEY_GAP_MS } from './host.js';
export type { HerdrHostOptions } from './host.js';
export { sidebarRows, rowTokens, sidebarRefresher, startedWaiting, startedAwaiting, awaitingNeeds, watchSidebar, normalise, SIDEBAR_TOKENS, SIDEBAR_SOURCE, SIDEBAR_TTL_MS, SIDEBAR_POLL_MS } from './sidebar.js';
export type { SidebarRow, SidebarReport, SidebarRefresher, SidebarMemory } from './sidebar.js';
export { agentName, herdrLaunch, projectOf, HERDR_KINDS } from './launch-script.js';
export { ACTIONS, PROMPTED, flumeCommand, invocationContext, isPrompted, placeOf } from './actions.js';
export type { ActionId, ActionInput, HerdrContext, PromptedId } from './actions.js';
export { herdrCli, herdrKey } from './herdr.js';

/** The plugin's name, which names its host registration too. */
export const HERDR_PLUGIN = 'flume:host:herdr';

/**
 * Registers the herdr pane host. Applying it twice (the default preset and a repository's config
 * both naming it) registers once; a different plugin's `herdr` host is still refused as a clash.
 */
export function herdrPlugin(options: HerdrHostOptions = {}): FlumePlugin {
  return definePlugin({
    name: HERDR_PLUGIN,
    apply(flume) {
      if (flume.hosts.owner('herdr') === HERDR_PLUGIN) return;
      flume.hosts.add(herdrHost(options));
    },
  });
}

/** A repository's config may name this module in `plugins`: its default export gives the plugin. */
export default herdrPlugin;
