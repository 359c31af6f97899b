/**
 * The published shape of `flume plugins --json` (plugins.schema.json): what a repository has
 * registered, each with the plugin that registered it and where that plugin came from.
 */

const from = { type: 'string', description: '`built-in` (flume\'s preset), or the file the plugin was loaded from: a module path, or the config file for a plugin written in it.' } as const;
const plugin = { type: 'string', description: 'The name of the plugin that registered it.' } as const;

const registered = (key: string, description: string) =>
  ({
    type: 'array',
    description,
    items: {
      type: 'object',
      required: [key, 'plugin', 'from'],
      properties: { [key]: { type: 'string' }, plugin, from },
      additionalProperties: false,
    },
  }) as const;

/** The JSON Schema of `flume plugins --json`. */
export const pluginsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://flume.dev/plugins.schema.json',
  title: 'flume plugins --json',
  type: 'object',
  required: ['repository', 'config', 'plugins', 'kinds', 'deliverables', 'agents', 'hosts', 'hooks'],
  properties: {
    repository: { type: 'string', description: 'The repository root.' },
    config: { type: ['string', 'null'], description: 'The config file, or null when the repository has none.' },
    plugins: {
      type: 'array',
      description: 'Every plugin applied, in the order applied.',
      items: { type: 'object', required: ['name', 'from'], properties: { name: { type: 'string' }, from }, additionalProperties: false },
    },
    kinds: registered('name', 'Every kind, by the plugin that registered it (the last, when one replaced another).'),
    deliverables: registered('type', 'Every deliverable type a reader is tapped for, by the plugin whose reader is asked first.'),
    agents: registered('key', 'Every agent driver.'),
    hosts: registered('key', 'Every pane host.'),
    hooks: {
      type: 'array',
      description: 'Every tap of every hook, in the order each hook calls them; `key` is the HookMap key (a driver, a deliverable type), absent for a plain hook.',
      items: {
        type: 'object',
        required: ['hook', 'plugin', 'from'],
        properties: { hook: { type: 'string' }, key: { type: 'string' }, plugin, from },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
