/** The OpenCode plugin: registers the OpenCode driver (key `opencode`), configured from the config's `agents.opencode`. */
import { definePlugin } from '../../core/index.js';
import { opencodeDriver } from './driver.js';
import type { OpencodeOptions } from './options.js';

/** OpenCode's options (`agents.opencode`), checked when the repository opens. */
export const OPENCODE_OPTIONS = {
  type: 'object',
  properties: {
    binary: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    model: { type: 'string', minLength: 1 },
    config: { type: 'object' },
    dataDir: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
};

/** Registers the OpenCode driver on the host the launch chose. Registering is the whole job. */
export const opencodePlugin = () =>
  definePlugin({
    name: 'flume:agent:opencode',
    apply(flume) {
      flume.agents.add({ ...opencodeDriver(flume, (flume.config.agents?.opencode ?? {}) as OpencodeOptions), optionsSchema: OPENCODE_OPTIONS });
    },
  });
