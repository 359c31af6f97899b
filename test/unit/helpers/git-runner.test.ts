import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { gitRun, gitRunSync } from '../../helpers/git-runner.js';
import { commit, git, makeRepo, remove, tempDir } from '../../helpers/repo.js';

// The test-side git runner (helpers/git-runner.ts) must answer exactly as git started directly does.
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' };
const direct = (cwd: string, args: string[], input?: string) => execFileSync('git', args, { cwd, env, input: input ?? '' });

describe('the test-side git runner', () => {
  it('passes every argument as it is and returns output byte for byte', () => {
    const repo = makeRepo();
    try {
      const message = 'a message\nwith "quotes", $(no shell), a tab\there, é and a trailing newline\n\n';
      commit(repo, 'odd name.txt', 'x\n', message);
      for (const args of [['log', '-1', '--format=%B'], ['ls-files', '-z'], ['cat-file', '-p', 'HEAD'], ['rev-parse', 'HEAD']]) {
        expect(gitRunSync(repo, args, env).stdout.equals(direct(repo, args)), args.join(' ')).toBe(true);
      }
      expect(git(repo, 'log', '-1', '--format=%B')).toBe(message.trim());
    } finally {
      remove(repo);
    }
  });

  it('throws as execFileSync does on a failure, with the exit status and stderr', () => {
    const repo = makeRepo();
    try {
      let thrown: any;
      try {
        gitRunSync(repo, ['rev-parse', '--verify', 'no-such-ref'], env);
      } catch (error) {
        thrown = error;
      }
      expect(thrown?.status).toBe(128);
      expect(thrown?.stderr).toContain('fatal');
      expect(() => gitRunSync(`${repo}/missing`, ['status'], env)).toThrow(/ENOENT/);
      // The runner goes on after a failure.
      expect(gitRunSync(repo, ['rev-parse', '--abbrev-ref', 'HEAD'], env).stdout.toString()).toBe('main\n');
    } finally {
      remove(repo);
    }
  });

  it('hands the promise form its standard input and resolves with any exit', async () => {
    const repo = makeRepo();
    try {
      const head = git(repo, 'rev-parse', 'HEAD');
      const input = `${head}\nffffffffffffffffffffffffffffffffffffffff\n`;
      const run = await gitRun(repo, ['cat-file', '--batch-check'], env, input);
      expect(run !== 'cwd' && run.stdout.toString()).toBe(direct(repo, ['cat-file', '--batch-check'], input).toString());
      expect(run !== 'cwd' && run.stdout.toString()).toContain(`${head} commit `);
      const failed = await gitRun(repo, ['merge-base', '--is-ancestor', head, 'no-such'], env);
      expect(failed !== 'cwd' && failed.status).toBe(128);
      expect(await gitRun(tempDir() + '/missing', ['status'], env)).toBe('cwd');
    } finally {
      remove(repo);
    }
  });

  it('runs each call with the environment it was given', () => {
    const repo = makeRepo();
    try {
      const one = gitRunSync(repo, ['var', 'GIT_AUTHOR_IDENT'], { ...env, GIT_AUTHOR_NAME: 'One' }).stdout.toString();
      const two = gitRunSync(repo, ['var', 'GIT_AUTHOR_IDENT'], { ...env, GIT_AUTHOR_NAME: 'Two' }).stdout.toString();
      expect([one.split(' <')[0], two.split(' <')[0]]).toEqual(['One', 'Two']);
    } finally {
      remove(repo);
    }
  });
});
