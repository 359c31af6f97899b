/**
 * Where a stage's agent runs: the config's `agent.host`, or with `auto` (the default) herdr when it
 * runs, else tmux when it is found, else a printed command for the operator.
 */
import { FlumeError } from '../errors.js';
import type { PaneHost } from '../agent.js';
import type { Flume } from '../plugin.js';

const AUTO_ORDER = ['herdr', 'tmux', 'printed'];

/** The pane host a new agent starts on. */
export async function chooseHost(flume: Flume): Promise<PaneHost> {
  const wanted = flume.config.agent?.host ?? 'auto';
  if (wanted !== 'auto') {
    const host = flume.hosts.get(wanted);
    if (host && (await host.available())) return host;
    throw new FlumeError('NO_PANE_HOST', `The pane host "${wanted}" the config names is not available here.`, {
      fix: `Start ${wanted}, or set agent.host to "auto" so flume picks what runs.`,
      details: { host: wanted },
    });
  }
  for (const key of AUTO_ORDER) {
    const host = flume.hosts.get(key);
    if (host && (await host.available())) return host;
  }
  throw new FlumeError('NO_PANE_HOST', 'No pane host is available to run an agent.', {
    fix: 'Install tmux, or add the printed host plugin so flume prints the command to run.',
  });
}

/**
 * Why the host chosen is the one flume uses, in words for launch's output: the config named it, or
 * (with `auto`) herdr runs here, or herdr does not and tmux is found, or neither is.
 */
export function hostNote(key: string, wanted = 'auto'): string {
  const printed = 'run the command below in a terminal (it starts in the place); flume confirms the prompt in the transcript';
  if (wanted !== 'auto') return key === 'printed' ? `the config sets agent.host to "printed": ${printed}` : `the config sets agent.host to "${key}"`;
  if (key === 'printed') return `neither a running herdr nor tmux is found here: ${printed}`;
  if (key === 'tmux') return "herdr is not running here and tmux is found, so the agent runs in flume's own tmux";
  if (key === 'herdr') return 'herdr is running here, so the agent runs in a herdr pane';
  return `the agent runs in ${key}, the first host available here`;
}
