/**
 * A conformance harness (`flume/testing`) for the Claude Code driver over the REAL Claude Code (the
 * version under test), each scenario with a scripted Messages API and a seeded config folder of its
 * own, on a tmux server of the test's own. What the agent took is what the scripted API was asked:
 * the model sees a prompt only once the program took it. Run inside the network namespace.
 *
 * A second agent's harness has the same shape: per scenario, its own scripted backend and the
 * driver's shipped plugin configured to reach it (see docs/writing-a-plugin.md, "Testing your driver").
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { claudeCodePlugin, tmuxHost } from '../../agents/index.js';
import { killTmuxServer } from '../../agents/panes/tmux.js';
import type { ConformanceHarness, ConformanceScenario } from '../../core/testing/index.js';
import { makeClaudeEnv } from './claude-env.js';
import { bash, lastUserText, startMessagesApi, type Script } from './messages-api.js';
import { remove, tempDir } from './repo.js';

/** The real harness, and `cleanup` for its tmux server and folder. */
export interface ClaudeHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
  /** What any scenario's scripted API saw that no scenario scripted (checked after the suite). */
  unexpected: string[];
}

/** What the model answers in each scenario: a short reply, or a harmless command (touch a file in the place) to ask permission for. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? bash('touch conformance-allowed.txt', 'Create conformance-allowed.txt') : 'Done.');
  // Nothing reaches the model when every prompt is dropped, or when the program never comes up.
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/**
 * A UserPromptSubmit hook that blocks prompts (exit 2): the real program then writes no prompt line
 * and puts the text back in its input box. `first`: only the first of the config folder's prompts.
 */
function dropHook(mark: string | undefined): Record<string, unknown> {
  const command = mark ? `if [ -e ${mark} ]; then exit 0; fi; touch ${mark}; echo "dropped by the conformance harness" >&2; exit 2` : 'echo "dropped by the conformance harness" >&2; exit 2';
  return { hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command }] }] } };
}

/** The harness for the real Claude Code. */
export function claudeConformanceHarness(): ClaudeHarness {
  const folder = tempDir('flume-conformance-claude-');
  const socket = join(folder, 'tmux.sock');
  const unexpected: string[] = [];
  return {
    agent: 'claude-code',
    host: tmuxHost({ socket }),
    unexpected,
    // The real program on a loaded machine: a prompt in its transcript within flume's own default
    // promptTimeout (20 s). Under a CI run's load 2.1.300 once left two sendings 6 s apart untaken,
    // each still in its input box when the stage was read never started.
    timeouts: { startMs: 40_000, promptMs: 20_000, settleMs: 20_000, draftMs: 1_500 },
    async scenario(scenario, { root }) {
      const api = await startMessagesApi({ script: scriptOf(scenario) });
      const drop = scenario === 'drops-first' ? dropHook(join(root, `dropped-${process.pid}`)) : scenario === 'drops-all' ? dropHook(undefined) : {};
      const claude = makeClaudeEnv({ baseUrl: api.url, parent: root, permissionMode: 'default', settings: drop });
      // The real program refuses an option it does not know and exits at once.
      const args = scenario === 'never-up' ? ['--conformance-never-up'] : [];
      return {
        plugins: [claudeCodePlugin()],
        config: { agents: { 'claude-code': { binary: claude.binary, configDir: claude.configDir, args, env: claude.vars } } },
        taken: () => api.requests.map((request) => lastUserText(request.body)).filter((text) => text !== ''),
        async close() {
          await api.close();
          unexpected.push(...api.unexpected().map((line) => `${scenario}: ${line}`));
          // The program writes to its config folder as it exits: a moment's grace.
          for (let tries = 0; ; tries++) {
            try {
              claude.cleanup();
              break;
            } catch (error) {
              if (tries >= 5) throw error;
              await sleep(200);
            }
          }
        },
      };
    },
    async cleanup() {
      await killTmuxServer(socket);
      remove(folder);
    },
  };
}
