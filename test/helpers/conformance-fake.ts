/**
 * A conformance harness (`flume/testing`) for the Claude Code driver over the fake agent: each
 * scenario is a fake-claude script of its own, in a config folder of its own, on a tmux server of the
 * test's own. `wrap` swaps the driver for a deliberately broken one, to see each check fail.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeCodeDriver, claudeCodePlugin, tmuxHost } from '../../agents/index.js';
import { killTmuxServer } from '../../agents/panes/tmux.js';
import { definePlugin, type AgentDriver, type Flume, type FlumePlugin } from '../../core/index.js';
import type { ConformanceHarness, ConformanceScenario, ConformanceTimeouts } from '../../core/testing/index.js';
import { FAKE_CLAUDE, readRecords, type FakeScript } from './fake-claude/index.js';
import { remove, tempDir } from './repo.js';

/** What each scenario asks of the fake. */
const SCRIPTS: Record<ConformanceScenario, FakeScript> = {
  answers: { onPrompt: [{ actions: [{ say: 'Noted.' }] }] },
  // Harmless if a broken driver's keys answer it: `true` runs.
  asks: { onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'true', run: ['true'] } }] }] },
  'drops-first': { dropInputs: 1, onPrompt: [{ actions: [{ say: 'Noted.' }] }] },
  'drops-all': { dropInputs: 1000 },
  'never-up': {},
};

/** The fake harness, and `cleanup` for its tmux server and folder. */
export interface FakeHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
}

/** The harness; `wrap` turns the real driver into the one under test. */
export function fakeConformanceHarness(options: { wrap?: (driver: AgentDriver, flume: Flume) => AgentDriver; timeouts?: Partial<ConformanceTimeouts> } = {}): FakeHarness {
  const folder = tempDir('flume-conformance-fake-');
  const socket = join(folder, 'tmux.sock');
  return {
    agent: 'claude-code',
    host: tmuxHost({ socket }),
    timeouts: { startMs: 15_000, promptMs: 3_000, settleMs: 10_000, draftMs: 1_500, ...options.timeouts },
    async scenario(scenario, { root }) {
      const configDir = join(root, `fake-${scenario}`);
      mkdirSync(configDir, { recursive: true });
      const scriptPath = join(configDir, 'script.json');
      writeFileSync(scriptPath, JSON.stringify(SCRIPTS[scenario]));
      // The fake refuses an option it does not know and exits at once, as the real program does.
      const args = scenario === 'never-up' ? ['--conformance-never-up'] : [];
      const agentOptions = { binary: FAKE_CLAUDE, configDir, args, env: { FAKE_CLAUDE_SCRIPT: scriptPath } };
      const plugins: FlumePlugin[] = options.wrap ? [wrappedPlugin(agentOptions, options.wrap)] : [claudeCodePlugin()];
      return {
        plugins,
        config: { agents: { 'claude-code': agentOptions } },
        taken: () => typedPrompts(configDir),
      };
    },
    async cleanup() {
      await killTmuxServer(socket);
      remove(folder);
    },
  };
}

/**
 * The (broken) driver registered as a third party registers one: registering is the whole job.
 */
function wrappedPlugin(agentOptions: Parameters<typeof claudeCodeDriver>[1], wrap: (driver: AgentDriver, flume: Flume) => AgentDriver): FlumePlugin {
  return definePlugin({
    name: 'test:agent:broken',
    apply(flume) {
      const driver = wrap(claudeCodeDriver(flume, agentOptions), flume);
      flume.agents.register('test:agent:broken', driver);
    },
  });
}

/** The prompts typed into the fake sessions of a config folder, read from their transcripts by the test. */
function typedPrompts(configDir: string): string[] {
  const projects = join(configDir, 'projects');
  if (!existsSync(projects)) return [];
  return readdirSync(projects).flatMap((dir) =>
    readdirSync(join(projects, dir))
      .filter((file) => file.endsWith('.jsonl'))
      .flatMap((file) => readRecords(join(projects, dir, file)))
      .filter((record) => record.type === 'user' && !record.isMeta && typeof record.message?.content === 'string')
      .map((record) => record.message.content as string),
  );
}
