import { definePaneHost, type PaneHost } from '../../core/api/pane-host.js';

/** A pane host that opens nothing and answers every question as an empty, live pane would; `fields` override. */
export function stubHost(fields: Partial<PaneHost> = {}): PaneHost {
  return definePaneHost({
    key: 'acme-host',
    available: async () => true,
    open: async () => ({}),
    identity: async () => undefined,
    capture: async () => undefined,
    type: async () => {},
    keys: async () => {},
    alive: async () => true,
    close: async () => {},
    ...fields,
  });
}
