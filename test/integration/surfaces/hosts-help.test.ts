/**
 * The host options (`--host NAME`, `--all-hosts`) are taken off the command line before any parser
 * reads it; `--help` names them still.
 */
import { describe, expect, it } from 'vitest';
import { flume } from '../../helpers/repo.js';

describe('help names the host options', () => {
  it('in flume --help and flume status --help', async () => {
    for (const args of [['--help'], ['status', '--help']]) {
      const help = await flume(args);
      expect(help.code, help.stderr).toBe(0);
      // A paragraph of its own after the options (the list of commands names them in passing).
      expect(help.stdout, args.join(' ')).toMatch(/^Other hosts: --host NAME[\s\S]*--all-hosts/m);
    }
    expect((await flume(['status', '--help'])).stdout).toMatch(/--all-hosts reads this host and every host/);
  });
});
