/** `flume hosts [add NAME SSH-TARGET [--flume COMMAND] | remove NAME] [--json]`: the hosts the user names. */
import { flumeError } from '../../api/errors.js';
import { addHost, listHosts, removeHost } from '../../hosts/hosts.js';
import { flumeVersion, type Command } from '../command.js';
import { commandLine } from '../options.js';
import { printJson } from '../output.js';

export const hostsCommand: Command = {
  ...commandLine('hosts'),
  describe: 'List, add or remove the other hosts whose flume this one reaches over ssh (--host NAME, HOST:kind/name, status --all-hosts).',
  async run(args, context) {
    const action = args.action === undefined ? 'list' : String(args.action);
    const name = args.name === undefined ? undefined : String(args.name);
    const target = args.target === undefined ? undefined : String(args.target);
    const usage = (message: string) => flumeError('BAD_USAGE', { message }, { variant: 'parser' });
    if (action === 'list') {
      if (name !== undefined) throw usage('flume hosts lists the hosts; add or remove one with flume hosts add NAME SSH-TARGET or flume hosts remove NAME.');
      const hosts = await listHosts(context.env ?? process.env);
      if (args.json) return void printJson(context.io, { hosts });
      if (!hosts.length) context.io.stdout('no hosts\n');
      for (const host of hosts) context.io.stdout(`${host.name}  ${host.target}  (flume: ${host.flume}${host.lastReadingAt ? `; last read ${host.lastReadingAt}` : ''})\n`);
      return;
    }
    if (action === 'add') {
      if (name === undefined || target === undefined) throw usage('flume hosts add takes a NAME and an SSH-TARGET.');
      const { host, remote } = await addHost({ name, target, flume: args.flume === undefined ? undefined : String(args.flume) }, context.env ?? process.env, await flumeVersion());
      if (args.json) return void printJson(context.io, { hosts: await listHosts(context.env ?? process.env), flume: remote });
      context.io.stdout(`added ${host.name} (${host.target}): flume ${remote}\n`);
      return;
    }
    if (action === 'remove') {
      if (name === undefined || target !== undefined) throw usage('flume hosts remove takes a NAME.');
      const host = await removeHost(name, context.env ?? process.env);
      if (args.json) return void printJson(context.io, { hosts: await listHosts(context.env ?? process.env) });
      context.io.stdout(`removed ${host.name} (${host.target})\n`);
      return;
    }
    throw usage(`flume hosts takes add, remove, or nothing (to list), not "${action}".`);
  },
};
