/**
 * The interactive view's keys over several hosts (`status --watch --all-hosts` on a terminal): a
 * place of this host is acted on here; another host's through that host's flume, the command and
 * its arguments as values (`relayCall`), so the remote refuses exactly as its CLI does; attaching to
 * another host's place is `ssh -t` to that host, whose flume (`flume __attach`) attaches its own
 * tmux (or herdr) pane. The detail of another host's place is what its status says.
 */
import { answeredError, flumeError } from '../../api/errors.js';
import type { PlaceStatus } from '../../engine/status/status.js';
import { THIS_HOST, type NamedHost } from '../../hosts/list.js';
import { relayCall } from '../../hosts/relay.js';
import { quoted, sshArguments } from '../../hosts/ssh.js';
import type { PlaceActions, ViewAction } from '../view/view-actions.js';

/** The hidden first argument of the remote's attaching entry: `flume __attach PLACE --repo REPO`. */
export const ATTACH_ENTRY = '__attach';

/** Each action as the remote's command and its arguments as values. */
function call(action: ViewAction, place: string, repo: string, text: string): { command: string; args: Record<string, unknown> } {
  const note = text.trim() || undefined;
  if (action === 'tell') return { command: 'tell', args: { place, repo, text } };
  if (action === 'stop' || action === 'force-stop') return { command: 'stop', args: { place, repo, force: action === 'force-stop' } };
  if (action === 'go-on' || action === 'next') return { command: action, args: { place, repo, note } };
  return { command: action, args: { place, repo } };
}

const DONE: Record<ViewAction, string> = { tell: 'told', stop: 'stopped the agent of', 'force-stop': 'stopped the agent of', retry: 'restarted', 'go-on': 'went on with', next: 'went on with', drop: 'dropped' };

/** The actions on every host's places: `here` for this host's, each named host's flume for its own. */
export function hostsActions(here: PlaceActions, hosts: NamedHost[], env: NodeJS.ProcessEnv, version: string): PlaceActions {
  const hostOf = (place: PlaceStatus): NamedHost | undefined => {
    const name = (place as PlaceStatus & { host?: string }).host;
    return name === undefined || name === THIS_HOST ? undefined : hosts.find((h) => h.name === name);
  };
  const own = (place: PlaceStatus) => `${place.kind}/${place.name}`;
  return {
    async act(place, action, text = '') {
      const host = hostOf(place);
      if (!host) return here.act(place, action, text);
      const answer = await relayCall(host, call(action, own(place), place.repo, text), { env, version });
      let value: { error?: { code: string; message: string; fix?: string; details?: Record<string, unknown> } } = {};
      try {
        value = JSON.parse(answer.stdout);
      } catch {
        // An answer with no JSON is told by its exit code below.
      }
      if (value.error) throw answeredError(value.error);
      if (answer.code !== 0) throw flumeError('IO_FAILED', { message: `${host.name} answered ${action} with exit ${answer.code} and no error.` }, { variant: 'unexpected' });
      return `${DONE[action]} ${place.id} on ${host.name}`;
    },
    async attach(place) {
      const host = hostOf(place);
      if (!host) return here.attach(place);
      const command = [host.flume, ATTACH_ENTRY, own(place), '--repo', place.repo].map((word, i) => (i === 0 ? word : quoted(word))).join(' ');
      return { file: 'ssh', args: await sshArguments(host, env, command, true), env: { ...env }, leave: `the pane on ${host.name}` };
    },
    async detail(place, width) {
      return hostOf(place) ? { diff: [], tail: [] } : here.detail(place, width);
    },
  };
}
