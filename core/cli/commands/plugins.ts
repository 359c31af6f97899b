/** `flume plugins [--json]`: what a repository has registered, by which plugin, and where each plugin came from. */
import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { repositoryFrom } from '../command.js';
import { printJson } from '../output.js';
import { tappedKeys } from '../../api/hooks.js';
import type { Flume } from '../../api/plugin.js';
import type { Repository } from '../../config/repository.js';

interface Tapped {
  taps?: Array<{ name: string }>;
}

/** `flume plugins`: every plugin, kind, reader, driver, host and hook tap, each with who registered it and from where. */
export const pluginsCommand: Command = {
  ...commandLine('plugins'),
  describe: 'List what is registered (kinds, deliverable readers, agent drivers, pane hosts, hook taps), by which plugin and from where.',
  async run(args, context) {
    const report = pluginReport(await repositoryFrom(args, context));
    if (args.json) {
      printJson(context.io, report);
      return;
    }
    const out = context.io.stdout;
    out(`${report.repository} (${report.config ?? 'no config'})\n`);
    const sections: Array<[string, Array<{ label: string; plugin?: string; from: string }>]> = [
      ['plugins', report.plugins.map((p) => ({ label: p.name, from: p.from }))],
      ['kinds', report.kinds.map((k) => ({ label: k.name, plugin: k.plugin, from: k.from }))],
      ['deliverables', report.deliverables.map((d) => ({ label: d.type, plugin: d.plugin, from: d.from }))],
      ['agents', report.agents.map((a) => ({ label: a.key, plugin: a.plugin, from: a.from }))],
      ['hosts', report.hosts.map((h) => ({ label: h.key, plugin: h.plugin, from: h.from }))],
      ['hooks', report.hooks.map((h) => ({ label: h.key ? `${h.hook}(${h.key})` : h.hook, plugin: h.plugin, from: h.from }))],
    ];
    for (const [title, rows] of sections) {
      out(`${title}:\n`);
      for (const row of rows) out(`  ${[row.label, row.plugin, row.from].filter(Boolean).join('  ')}\n`);
    }
  },
};

/** What `flume plugins --json` prints (plugins.schema.json). */
export function pluginReport(repository: Repository) {
  const { flume } = repository;
  const plugins = repository.plugins ?? [];
  // A name registered by a plugin not applied under that name (a plugin may register under another) is its own origin unknown.
  const fromOf = (name: string) => plugins.find((plugin) => plugin.name === name)?.from ?? (name.startsWith('flume:') ? 'built-in' : 'unknown');
  const row = <K extends string>(field: K, key: string, plugin: string | undefined) => ({ [field]: key, plugin: plugin ?? 'unknown', from: fromOf(plugin ?? '') }) as Record<K, string> & { plugin: string; from: string };
  const hooks = hookTaps(flume);
  return {
    repository: repository.info.root,
    config: repository.configFile ?? null,
    plugins,
    kinds: flume.kinds.all().map((kind) => row('name', kind.name, flume.kinds.owner(kind.name))),
    deliverables: tappedKeys(flume.hooks.readDeliverable).map((type) => row('type', type, hooks.find((tap) => tap.hook === 'readDeliverable' && tap.key === type)?.plugin)),
    agents: flume.agents.all().map((driver) => row('key', driver.key, flume.agents.owner(driver.key))),
    hosts: flume.hosts.all().map((host) => row('key', host.key, flume.hosts.owner(host.key))),
    hooks: hooks.map((tap) => ({ ...tap, from: fromOf(tap.plugin) })),
  };
}

/** Every tap of every hook, by tapable's public `taps` of each hook (a HookMap's through its tapped keys). */
function hookTaps(flume: Flume): Array<{ hook: string; key?: string; plugin: string }> {
  const rows: Array<{ hook: string; key?: string; plugin: string }> = [];
  for (const [hook, value] of Object.entries(flume.hooks)) {
    const keys = tappedKeys(value);
    if (keys.length || 'for' in value) {
      const map = value as unknown as { get(key: string): Tapped | undefined };
      for (const key of keys) for (const tap of map.get(key)?.taps ?? []) rows.push({ hook, key, plugin: tap.name });
    } else {
      for (const tap of (value as Tapped).taps ?? []) rows.push({ hook, plugin: tap.name });
    }
  }
  return rows;
}
