import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { printJson } from '../output.js';
import { findRepository } from '../../support/git.js';
import { revokeTrust, trustRepository, trustState } from '../../config/trust.js';
import { forgetProbe } from '../../config/probe/guard.js';
import { takeBackTrustGrants } from '../../state/trust-grants.js';

/** What trusting a repository means, in the words `flume trust` prints. */
export const TRUST_MEANING =
  'flume will run this file as you (it is code: it may do anything you may) when you launch, tell, tidy, check status or run the supervisor in this repository, and run the ready steps it declares in every place; Claude Code is told to trust the repository\'s places. An edit to the file undoes this until you trust it again.';

/** `flume trust`: the user's decision to let flume run a repository's config, as it is now. */
export const trustCommand: Command = {
  ...commandLine('trust'),
  describe: 'Trust the repository\'s flume config as it is now (flume runs it, and its ready steps); --revoke takes it back.',
  async run(args, context) {
    const { io } = context;
    const root = (await findRepository(String(args.repo ?? context.cwd ?? process.cwd()))).root;
    if (args.revoke) {
      const had = await revokeTrust(root);
      // What trusting told the agents' programs (Claude Code's folder trust) goes with it.
      const keys = await takeBackTrustGrants(root);
      const agents = keys ? ` The folder trust flume gave its agents' programs is taken back too (${keys} ${keys === 1 ? 'entry' : 'entries'}).` : '';
      if (args.json) printJson(io, { root, revoked: had });
      else io.stdout(had ? `${root}: trust taken back; flume will not run its config until you trust it again.${agents}\n` : keys ? `${root}: was not trusted.${agents}\n` : `${root}: was not trusted; nothing to take back.\n`);
      return;
    }
    const record = await trustRepository(root);
    // Trusting again is how a user says "try it again": a config that hung is probed afresh.
    await forgetProbe(root);
    const state = await trustState(root);
    if (args.json) {
      printJson(io, { root, file: record.file, digest: record.digest, state: state.state === 'no-config' ? 'trusted' : state.state });
      return;
    }
    if (record.file === null) {
      io.stdout(`${root}: trusted. It has no flume config, so flume runs nothing of it; Claude Code is told to trust its places.\n`);
      return;
    }
    io.stdout(`trusted ${record.file}\n  sha256 ${record.digest}\n  for ${root}\n${TRUST_MEANING}\n`);
  },
};
