/**
 * The REAL Claude Code in a place's podman container: flume starts it there (`podman exec -it` in a
 * pane of flume's tmux), confirms its prompt in the transcript it writes in the place's home, reads it
 * idle after the scripted Messages API's reply (on the test's 127.0.0.1, which the container reaches
 * only through flume's proxy: by default it reaches what ANTHROPIC_BASE_URL names, and nothing else),
 * and stops it so that nothing of it runs in the container after.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { CLAUDE_VERSION, makeClaudeEnv, TEST_API_KEY } from '../helpers/claude-env.js';
import { lastUserText, startMessagesApi } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { HOST_PROGRAMS, podmanForTests } from '../helpers/podman.js';
import { transcript } from './real-repo.js';
import { insidePids } from '../../core/engine/container/engine.js';
import { repoFor } from '../integration/stages/helpers.js';

let podman: ReturnType<typeof podmanForTests>;

beforeAll(() => {
  assertIsolated();
  podman = podmanForTests();
  Object.assign(process.env, podman.env);
});

describe('the real Claude Code in a container', { timeout: 240_000 }, () => {
  it('takes its prompt there, as its own transcript in the place home says, and ends there when stopped', async ({ expect, onTestFinished }) => {
    const api = await startMessagesApi({ script: [{ blocks: [{ type: 'text', text: 'Looked, and done.' }] }] });
    onTestFinished(() => api.close());
    const claude = makeClaudeEnv({ baseUrl: api.url });
    // The agent's config folder is the place's home, seeded by flume: not the test's own.
    const { CLAUDE_CONFIG_DIR: _own, ...vars } = claude.vars;
    const program = dirname(dirname(realpathSync(claude.binary)));
    const config = {
      kinds: [{ name: 'one', stages: [{ name: 'code', prompt: 'Look at the repository: {brief}', deliverable: 'commit' }] }],
      agent: { host: 'tmux', container: { engine: 'podman', image: podman.image, mounts: [...HOST_PROGRAMS, `${program}:ro`, vars.TMPDIR!] } },
      agents: { 'claude-code': { binary: claude.binary, args: [], env: vars } },
      limits: { promptTimeout: '8s', startTimeout: '40s' },
    };
    const t = repoFor({ onTestFinished }, {}, config);
    const place = await t.launch('one', 'real', 'say what you see.');
    const { name, home } = place.container;
    expect(place.container.network).toEqual({ allow: [new URL(api.url).host] });
    onTestFinished(() => void execFileSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' }));
    expect(place.stage).toMatchObject({ delivery: 'taken', agent: { host: 'container', version: CLAUDE_VERSION } });
    // The prompt was read in the transcript the program wrote inside, in the place's home.
    const path = place.stage.agent.transcriptPath;
    expect(path.startsWith(join(home, '.claude', 'projects'))).toBe(true);
    expect(transcript(path).filter((l) => l.type === 'user' && !l.isMeta)[0]).toMatchObject({ message: { content: 'Look at the repository: say what you see.' } });
    expect(lastUserText((await api.waitForRequest(1)).body)).toBe('Look at the repository: say what you see.');
    const inside = () => execFileSync('podman', ['top', name, 'args'], { encoding: 'utf8' }).trim().split('\n').slice(1).map((l) => l.trim());
    expect(inside().some((line) => line.includes('claude'))).toBe(true);
    // The pane's program is the engine's client; its argv names the API key's variable, never its value.
    const argv = readFileSync(`/proc/${place.stage.agent.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(0, 2)).toEqual(['podman', 'exec']);
    expect(argv).toContain('ANTHROPIC_API_KEY');
    expect(argv.join(' ')).not.toContain(TEST_API_KEY);

    // Its reply ends the turn with no commit: the stage waits on the operator, in the agent's words.
    const waiting = await t.until('one/real', (p) => p?.stage?.state === 'waiting' && p, 'the turn to end', { timeoutMs: 60_000 });
    expect(waiting.stage).toMatchObject({ needs: 'Looked, and done.', agent: { state: 'idle' } });
    const stopped = await t.flume(['stop', 'one/real', '--json']);
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    // Only the init and the bridge to the proxy that keeps the container are left.
    expect(inside().some((line) => line.includes('claude'))).toBe(false);
    expect(await insidePids('podman', name)).toEqual([]);
    expect((await t.view('one/real')).stage.agent.state).toBe('exited');
  });
});
