/**
 * What the container tests share: podman as the tests run it (test/helpers/podman.ts), set in this
 * process's environment for flume, its supervisor and the pane's podman client alike, and the config
 * of a repository whose agents (the scripted fake) run in containers of the test image.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT } from '../../helpers/repo.js';
import { FAKE_CLAUDE } from '../../helpers/fake-claude/index.js';
import { HOST_PROGRAMS, podmanForTests } from '../../helpers/podman.js';

/** Podman for the tests, made once and put in this process's environment. */
export function usePodman(): ReturnType<typeof podmanForTests> {
  const podman = podmanForTests();
  Object.assign(process.env, podman.env);
  return podman;
}

/** A kind of one stage that ends on a commit. */
export const ONE = { name: 'one', stages: [{ name: 'code', prompt: 'Make the change: {brief}', deliverable: 'commit' }] };

/** The config of a repository whose agents run in containers of the test image (no network), their script in `dir`. */
export function containerConfig(dir: string, script: object) {
  const scriptFile = join(dir, 'script.json');
  writeFileSync(scriptFile, JSON.stringify(script));
  return {
    kinds: [ONE],
    agent: { host: 'tmux', container: { engine: 'podman', image: podmanForTests().image, mounts: [...HOST_PROGRAMS, `${PROJECT}:ro`, `${dir}:ro`], network: 'none' as string | undefined } },
    // No config folder of the operator's: the agent's is in the place's home.
    agents: { 'claude-code': { binary: FAKE_CLAUDE, args: [], env: { FAKE_CLAUDE_SCRIPT: scriptFile } } },
  };
}
