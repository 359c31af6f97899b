/**
 * A malformed return met by the engine, end to end: a third-party driver in a repository's config,
 * only registered (no tap of its own), whose start answers a handle without its session id, folder or
 * start time. The launch fails
 * with PLUGIN_BAD_RETURN naming that plugin (not a crash later on the handle), and the place's
 * record keeps flume's own intent, never the malformed handle.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { flume, flumeEnv, makeRepo, remove, tempDir } from '../../helpers/repo.js';
import { launchedRecord } from '../../helpers/result-schema.js';

const CONFIG = `
const driver = {
  key: 'acme',
  async start() { return { driver: 'acme', host: 'printed' }; },
  async waitForInput() { return 'slow'; },
  async send() {},
  async resend() {},
  async confirm() { return 'unknown'; },
  async read() { return { state: 'not-up' }; },
  async hasDraft() { return false; },
  async stop() {},
  watchPaths() { return []; },
};
export default {
  agent: { host: 'printed' },
  kinds: [{ name: 'acme-work', stages: [{ name: 'work', prompt: 'Do {brief}', deliverable: 'commit', agent: 'acme' }] }],
  plugins: [{
    name: 'acme:driver',
    apply(flume) {
      flume.agents.register('acme:driver', driver);
    },
  }],
};
`;

describe('a malformed tap return in the engine', () => {
  it('fails the launch with PLUGIN_BAD_RETURN naming the plugin, and records the stage never started', async ({ expect, onTestFinished }) => {
    const repo = makeRepo({ config: CONFIG });
    const state = tempDir('flume-state-');
    onTestFinished(() => {
      remove(repo);
      remove(state);
    });
    const env = flumeEnv(state);
    const result = await flume(['launch', '--kind', 'acme-work', '--name', 'bad', '--brief', 'it.', '--no-watch', '--json'], { cwd: repo, env });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const error = JSON.parse(result.stdout).error;
    expect(error).toMatchObject({ code: 'PLUGIN_BAD_RETURN', plugin: 'acme:driver', hook: 'startAgent(acme)' });
    for (const field of ['sessionId', 'cwd', 'startedAt']) expect(error.message).toContain(`"${field}" is missing`);
    const status = await flume(['status', 'acme-work/bad', '--repo', repo, '--json'], { cwd: repo, env });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const stage = JSON.parse(status.stdout).places[0].stage;
    expect(stage).toMatchObject({ state: 'never-started', delivery: 'never-started', needs: expect.stringContaining('[acme:driver] startAgent(acme) returned') });
    expect(stage.agent).toMatchObject({ driver: 'acme', host: 'printed', sessionId: expect.any(String) });
  });

  it('a reader that answers what is not a reading is named in status, and its stage is not seen delivered', async ({ expect, onTestFinished }) => {
    const repo = makeRepo({
      config: `
export default {
  agent: { host: 'printed' },
  kinds: [{ name: 'acme-read', stages: [{ name: 'work', prompt: 'Do {brief}', deliverable: 'acme-file' }] }],
  plugins: [{
    name: 'acme:reader',
    apply(flume) {
      // A good reading until the place holds a file named bad; then one that is not a reading.
      flume.hooks.readDeliverable.for('acme-file').tapPromise('acme:reader', async (request) => ((await request.workingFile('bad')) === undefined ? { present: false } : { present: 'yes' }));
    },
  }],
};
`,
    });
    const state = tempDir('flume-state-');
    onTestFinished(() => {
      remove(repo);
      remove(state);
    });
    const env = flumeEnv(state);
    const launched = await flume(['launch', '--kind', 'acme-read', '--name', 'bad', '--brief', 'it.', '--no-watch', '--json'], { cwd: repo, env });
    expect(launched.code, launched.stdout + launched.stderr).toBe(0);
    writeFileSync(join(launchedRecord(launched.stdout).path, 'bad'), '');
    const status = await flume(['status', 'acme-read/bad', '--repo', repo, '--json'], { cwd: repo, env });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const stage = JSON.parse(status.stdout).places[0].stage;
    expect(stage.state).not.toBe('delivered');
    expect(stage.deliverableProblem).toMatch(/^its reader failed: PLUGIN_BAD_RETURN \[acme:reader\] readDeliverable\(acme-file\)/);
    const plain = await flume(['status', 'acme-read/bad', '--repo', repo], { cwd: repo, env });
    expect(plain.stdout).toContain('deliverable: its reader failed: PLUGIN_BAD_RETURN');
  });
});
