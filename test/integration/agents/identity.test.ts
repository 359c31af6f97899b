import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { identityVariables } from '../../../core/support/git.js';
import { git, makeRepo, remove, tempDir } from '../../helpers/repo.js';

// The identity handed to an agent whose program reads none of the user's git config (the Gemini CLI's
// shell tool): what `git commit` would use in the place, as git's own variables; nothing where git
// finds none; the variables the caller set are kept as they are.
describe('identityVariables', () => {
  it('answers the identity git commits with in the folder, keeps what the environment sets, and answers nothing where git finds none', async () => {
    const repo = makeRepo();
    const home = tempDir('flume-identity-');
    try {
      git(repo, 'config', '--unset', 'user.name');
      git(repo, 'config', '--unset', 'user.email');
      const global = join(home, 'gitconfig');
      writeFileSync(global, '[user]\n\tname = Operator One\n\temail = one@example.org\n');
      const env = { PATH: process.env.PATH!, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
      expect(await identityVariables(repo, { ...env, GIT_CONFIG_GLOBAL: global })).toEqual({
        GIT_AUTHOR_NAME: 'Operator One',
        GIT_AUTHOR_EMAIL: 'one@example.org',
        GIT_COMMITTER_NAME: 'Operator One',
        GIT_COMMITTER_EMAIL: 'one@example.org',
      });
      // The repository's own identity comes before the user's, as git reads them.
      git(repo, 'config', 'user.name', 'Repo Self');
      expect(await identityVariables(repo, { ...env, GIT_CONFIG_GLOBAL: global })).toMatchObject({ GIT_AUTHOR_NAME: 'Repo Self', GIT_AUTHOR_EMAIL: 'one@example.org' });
      // What the environment sets stays: only what it lacks is answered.
      expect(await identityVariables(repo, { ...env, GIT_CONFIG_GLOBAL: global, GIT_AUTHOR_NAME: 'Caller', GIT_AUTHOR_EMAIL: 'caller@example.org' })).toEqual({ GIT_COMMITTER_NAME: 'Repo Self', GIT_COMMITTER_EMAIL: 'one@example.org' });
      git(repo, 'config', '--unset', 'user.name');
      // No identity anywhere (user.useConfigOnly, as a strict user sets it): nothing, and the agent's commit fails as the user's would.
      writeFileSync(global, '[user]\n\tuseConfigOnly = true\n');
      expect(await identityVariables(repo, { ...env, GIT_CONFIG_GLOBAL: global })).toEqual({});
    } finally {
      remove(repo);
      remove(home);
    }
  });
});
