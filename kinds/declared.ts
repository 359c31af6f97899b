import { definePlugin } from '../core/index.js';

/**
 * Registers the kinds a repository declares in its config, in the same form as the built-ins.
 * A declared kind with a built-in's name replaces it for that repository: the repository's word wins.
 */
export const declaredKindsPlugin = () =>
  definePlugin({
    name: 'flume:kind:declared',
    apply(flume) {
      for (const kind of flume.config.kinds ?? []) flume.kinds.add(kind, { replace: true });
    },
  });
