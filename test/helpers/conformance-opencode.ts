/**
 * A conformance harness (`flume/testing`) for the OpenCode driver over the REAL OpenCode (the pinned
 * 1.18.33), each scenario with a scripted Chat Completions API of its own (opencode-env.ts), on a
 * tmux server of the test's own. What the agent took is what the scripted API was asked. OpenCode
 * has no hook that can refuse a prompt, so the drop scenarios drop at the terminal instead: the
 * scenario's host, the same tmux server, loses the first (or every) Enter, leaving the text in the
 * input box, as a lost Enter does. Run inside the network namespace.
 */
import { join } from 'node:path';
import { opencodePlugin } from '../../agents/index.js';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { definePaneHost, definePlugin, type PaneHost } from '../../core/index.js';
import type { ConformanceHarness, ConformanceScenario } from '../../core/testing/index.js';
import { opencodeEnv } from './opencode-env.js';
import { bash, lastUserText, type ChatApi, type Script } from './chat-api.js';
import { remove, tempDir } from './repo.js';

/** The real harness, and `cleanup` for its tmux server and folder. */
export interface OpencodeHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
  /** What any scenario's scripted API saw that no scenario scripted (checked after the suite). */
  unexpected: string[];
}

/** What the model answers in each scenario: a short reply, or a command writing outside the place, which OpenCode asks approval for by default. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? bash('touch ../conformance-outside.txt') : 'Done.');
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/**
 * The prompts the scripted API saw: those of the model steps, and the session title's request,
 * which carries the first prompt as its user message at once (its model step may come seconds
 * later). A text counts as often as the more of the two saw it, so a prompt taken once counts once.
 */
function tookOf(api: ChatApi): string[] {
  const steps = api.requests.map((request) => lastUserText(request.body)).filter((text) => text !== '');
  const titled = api.side.map((request) => lastUserText(request.body)).filter((text) => text !== '');
  const extra = titled.filter((text, index) => titled.slice(0, index + 1).filter((t) => t === text).length > steps.filter((t) => t === text).length);
  return [...steps, ...extra];
}

/** The host as the scenario's agent sees it: Enter lost `drops` times (Infinity: always). */
function losingEnters(host: PaneHost, drops: number): PaneHost {
  let left = drops;
  return definePaneHost({
    ...host,
    async keys(pane, keys) {
      const kept = keys.filter((key) => key !== 'Enter' || left-- <= 0);
      if (kept.length) await host.keys(pane, kept);
    },
  });
}

/** The harness for the real OpenCode. */
export function opencodeConformanceHarness(): OpencodeHarness {
  const folder = tempDir('flume-conformance-opencode-');
  const socket = join(folder, 'tmux.sock');
  const host = tmuxHost({ socket });
  const unexpected: string[] = [];
  return {
    agent: 'opencode',
    host,
    unexpected,
    // OpenCode writes a prompt to its record seconds before its first model step reaches the API
    // (it boots its snapshot and location services first): on a loaded machine more than 10 s.
    timeouts: { startMs: 60_000, promptMs: 15_000, settleMs: 30_000, draftMs: 2_000 },
    async scenario(scenario) {
      const env = await opencodeEnv({ script: scriptOf(scenario), ...(scenario === 'never-up' ? { args: ['--conformance-never-up'] } : {}) });
      const drops = scenario === 'drops-first' ? 1 : scenario === 'drops-all' ? Infinity : 0;
      const plugins = [opencodePlugin()];
      if (drops) plugins.push(definePlugin({ name: 'test:host:losing-enters', apply: (flume) => flume.hosts.register('test:host:losing-enters', losingEnters(host, drops)) }));
      return {
        plugins,
        config: { agents: { opencode: env.options } },
        taken: () => tookOf(env.api),
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
