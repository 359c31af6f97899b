/**
 * A conformance harness (`flume/testing`) for the Gemini CLI driver over the REAL Gemini CLI (the
 * pinned 0.61.0), each scenario with a scripted Gemini API and a Gemini home of its own
 * (gemini-env.ts), on a tmux server of the test's own. What the agent took is what the scripted API
 * was asked. As for Codex, the drop scenarios drop at the terminal: the scenario's host loses the
 * first (or every) Enter, leaving the text in the input box. Run inside the network namespace.
 */
import { join } from 'node:path';
import { geminiPlugin } from '../../agents/index.js';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { definePlugin } from '../../core/index.js';
import type { ConformanceHarness, ConformanceScenario } from '../../core/testing/index.js';
import { losingEnters } from './conformance-codex.js';
import { geminiEnv } from './gemini-env.js';
import { lastUserText, shell, type Script } from './gemini-api.js';
import { remove, tempDir } from './repo.js';

/** The real harness, and `cleanup` for its tmux server and folder. */
export interface GeminiHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
  /** What any scenario's scripted API saw that no scenario scripted (checked after the suite). */
  unexpected: string[];
}

/** What the model answers in each scenario: a short reply, or a shell command, which Gemini's default approval mode asks for. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? shell('touch ../conformance-outside.txt') : 'Done.');
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/** The harness for the real Gemini CLI. */
export function geminiConformanceHarness(): GeminiHarness {
  const folder = tempDir('flume-conformance-gemini-');
  const socket = join(folder, 'tmux.sock');
  const host = tmuxHost({ socket });
  const unexpected: string[] = [];
  return {
    agent: 'gemini',
    host,
    unexpected,
    timeouts: { startMs: 40_000, promptMs: 6_000, settleMs: 20_000, draftMs: 1_500 },
    async scenario(scenario) {
      const env = await geminiEnv({ script: scriptOf(scenario), ...(scenario === 'never-up' ? { args: ['--conformance-never-up'] } : {}) });
      const drops = scenario === 'drops-first' ? 1 : scenario === 'drops-all' ? Infinity : 0;
      const plugins = [geminiPlugin()];
      if (drops) plugins.push(definePlugin({ name: 'test:host:losing-enters', apply: (flume) => flume.hosts.register('test:host:losing-enters', losingEnters(host, drops)) }));
      return {
        plugins,
        config: { agents: { gemini: env.options } },
        taken: () => env.api.requests.map((request) => lastUserText(request)).filter((text) => text !== ''),
        async close() {
          unexpected.push(...env.api.unexpected().map((line) => `${scenario}: ${line}`));
          await env.cleanup().catch(() => undefined);
        },
      };
    },
    async cleanup() {
      await killTmuxServer(socket);
      remove(folder);
    },
  };
}
