/**
 * A conformance harness (`flume/testing`) for the Codex driver over the REAL Codex CLI (the pinned
 * 0.171.0), each scenario with a scripted Responses API of its own (codex-env.ts), on a tmux server
 * of the test's own. What the agent took is what the scripted API was asked. Codex has no hook that
 * can refuse a prompt, so the drop scenarios drop at the terminal instead: the scenario's host, the
 * same tmux server, loses the first (or every) Enter, leaving the text in the input box, as a lost
 * Enter does. Run inside the network namespace.
 */
import { join } from 'node:path';
import { codexPlugin } from '../../agents/index.js';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { definePaneHost, definePlugin, type PaneHost } from '../../core/index.js';
import type { ConformanceHarness, ConformanceScenario } from '../../core/testing/index.js';
import { codexEnv } from './codex-env.js';
import { lastUserText, type Reply, type Script } from './responses-api.js';
import { remove, tempDir } from './repo.js';

/** The real harness, and `cleanup` for its tmux server and folder. */
export interface CodexHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
  /** What any scenario's scripted API saw that no scenario scripted (checked after the suite). */
  unexpected: string[];
}

/** A command asking to run outside the sandbox, which Codex asks approval for (harmless if given). */
const ESCALATED: Reply = { items: [{ type: 'call', name: 'exec_command', arguments: { cmd: 'touch ../conformance-outside.txt', sandbox_permissions: 'require_escalated', justification: 'Write outside' } }] };

/** What the model answers in each scenario: a short reply, or a command outside the place, which Codex asks approval for. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? ESCALATED : 'Done.');
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/** The host as the scenario's agent sees it: Enter lost `drops` times (Infinity: always). */
export function losingEnters(host: PaneHost, drops: number): PaneHost {
  let left = drops;
  return definePaneHost({
    ...host,
    async keys(pane, keys) {
      const kept = keys.filter((key) => key !== 'Enter' || left-- <= 0);
      if (kept.length) await host.keys(pane, kept);
    },
  });
}

/** The harness for the real Codex CLI. */
export function codexConformanceHarness(): CodexHarness {
  const folder = tempDir('flume-conformance-codex-');
  const socket = join(folder, 'tmux.sock');
  const host = tmuxHost({ socket });
  const unexpected: string[] = [];
  return {
    agent: 'codex',
    host,
    unexpected,
    timeouts: { startMs: 40_000, promptMs: 6_000, settleMs: 20_000, draftMs: 1_500 },
    async scenario(scenario) {
      // Approvals are asked only where the scenario wants a dialog; the sandbox keeps the place's writes in it.
      const args = scenario === 'asks' ? ['-a', 'on-request', '-s', 'workspace-write'] : scenario === 'never-up' ? ['--conformance-never-up'] : undefined;
      const env = await codexEnv({ script: scriptOf(scenario), ...(args ? { args } : {}) });
      const drops = scenario === 'drops-first' ? 1 : scenario === 'drops-all' ? Infinity : 0;
      const plugins = [codexPlugin()];
      if (drops) plugins.push(definePlugin({ name: 'test:host:losing-enters', apply: (flume) => flume.hosts.register('test:host:losing-enters', losingEnters(host, drops)) }));
      return {
        plugins,
        config: { agents: { codex: env.options } },
        taken: () => env.api.requests.map((request) => lastUserText(request.body)).filter((text) => text !== ''),
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
