/**
 * Where a stage's agent runs: the host the config's `agent.host` names, or with `auto` (the default)
 * the available host of the highest `priority`. The core knows hosts only by what they declare.
 */
import { flumeError } from '../../api/errors.js';
import { canType, type PaneHost } from '../../api/pane-host.js';
import type { Flume } from '../../api/plugin.js';

/** The pane host a new agent starts on. */
export async function chooseHost(flume: Flume): Promise<PaneHost> {
  const wanted = flume.config.agent?.host ?? 'auto';
  if (wanted !== 'auto') {
    const host = flume.hosts.get(wanted);
    if (host && (await host.available())) return host;
    throw flumeError('NO_PANE_HOST', { host: wanted }, {
      details: { host: wanted },
    });
  }
  // Registration order breaks a tie, so the order of a preset's plugins stays meaningful.
  const ranked = flume.hosts.all().map((host, index) => ({ host, index })).sort((a, b) => (b.host.priority ?? 0) - (a.host.priority ?? 0) || a.index - b.index);
  for (const { host } of ranked) if (await host.available()) return host;
  throw flumeError('NO_PANE_HOST', {}, {
    variant: 'none',
    details: { hosts: ranked.map(({ host }) => host.key) },
  });
}

/** What the operator does with an agent on a host that cannot type: run its command. */
const HAND_OFF = 'run the command below in a terminal (it starts in the place); flume confirms the prompt in the transcript';

/**
 * Why the host chosen is the one flume uses, in words for launch's output: the config named it, or
 * `auto` chose it (in the host's own words, its `chosen`), and what to do when it cannot type.
 */
export function hostNote(host: Pick<PaneHost, 'key' | 'canType' | 'chosen'>, wanted = 'auto'): string {
  const tail = canType(host) ? '' : `: ${HAND_OFF}`;
  if (wanted !== 'auto') return `the config sets agent.host to "${host.key}"${tail}`;
  return `${host.chosen ?? `the agent runs in ${host.key}, the first host available here`}${tail}`;
}
