/**
 * What the conformance harnesses (`flume/testing`) of the real agent programs with a terminal UI
 * share (Codex, the Gemini CLI, OpenCode): a tmux server of the harness's own, each scenario with a
 * scripted API of its own, and the drop scenarios dropped at the terminal. These programs have no
 * hook that can refuse a prompt, so the scenario's host, the same tmux server under the same key,
 * loses the first (or every) Enter, leaving the text in the input box, as a lost Enter does. What the
 * agent took is what its scripted API was asked. Run inside the network namespace.
 */
import { join } from 'node:path';
import { killTmuxServer, tmuxHost } from '../../agents/panes/tmux.js';
import { definePaneHost, definePlugin, type FlumePlugin, type PaneHost } from '../../core/index.js';
import type { ConformanceHarness, ConformanceScenario, ConformanceTimeouts } from '../../core/testing/index.js';
import { remove, tempDir } from './repo.js';

/** The real harness, and `cleanup` for its tmux server and folder. */
export interface ProgramHarness extends ConformanceHarness {
  cleanup(): Promise<void>;
  /** What any scenario's scripted API saw that no scenario scripted (checked after the suite). */
  unexpected: string[];
}

/** One scenario's program, as its scripted API and options put it. */
export interface ProgramScenario {
  /** The driver's options (the config's `agents[<agent>]`). */
  options: object;
  /** The prompts its API saw, in order. */
  taken(): string[];
  /** What its API saw that no test scripted. */
  unexpected(): string[];
  cleanup(): Promise<void>;
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

/** The harness for the driver `agent`, registered by `plugin`, its program put into each scenario by `start`. */
export function programHarness(agent: string, plugin: () => FlumePlugin, start: (scenario: ConformanceScenario) => Promise<ProgramScenario>, timeouts: Partial<ConformanceTimeouts>): ProgramHarness {
  const folder = tempDir(`flume-conformance-${agent}-`);
  const socket = join(folder, 'tmux.sock');
  const host = tmuxHost({ socket });
  const unexpected: string[] = [];
  return {
    agent,
    host,
    unexpected,
    timeouts,
    async scenario(scenario) {
      const program = await start(scenario);
      const drops = scenario === 'drops-first' ? 1 : scenario === 'drops-all' ? Infinity : 0;
      const plugins = [plugin()];
      if (drops) plugins.push(definePlugin({ name: 'test:host:losing-enters', apply: (flume) => flume.hosts.register('test:host:losing-enters', losingEnters(host, drops)) }));
      return {
        plugins,
        config: { agents: { [agent]: program.options } },
        taken: () => program.taken(),
        async close() {
          unexpected.push(...program.unexpected().map((line) => `${scenario}: ${line}`));
          await program.cleanup().catch(() => undefined);
        },
      };
    },
    async cleanup() {
      await killTmuxServer(socket);
      remove(folder);
    },
  };
}
