/**
 * A conformance harness (`flume/testing`) for the Codex driver over the REAL Codex CLI (the pinned
 * 0.171.0), each scenario with a scripted Responses API of its own (codex-env.ts); drops are lost
 * Enters at the terminal (conformance-program.ts).
 */
import { codexPlugin } from '../../agents/index.js';
import type { ConformanceScenario } from '../../core/testing/index.js';
import { codexEnv } from './codex-env.js';
import { programHarness, type ProgramHarness } from './conformance-program.js';
import { lastUserText, type Reply, type Script } from './responses-api.js';

/** A command asking to run outside the sandbox, which Codex asks approval for (harmless if given). */
const ESCALATED: Reply = { items: [{ type: 'call', name: 'exec_command', arguments: { cmd: 'touch ../conformance-outside.txt', sandbox_permissions: 'require_escalated', justification: 'Write outside' } }] };

/** What the model answers in each scenario: a short reply, or a command outside the place, which Codex asks approval for. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? ESCALATED : 'Done.');
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/** The harness for the real Codex CLI. */
export function codexConformanceHarness(): ProgramHarness {
  return programHarness('codex', codexPlugin, async (scenario) => {
    // Approvals are asked only where the scenario wants a dialog; the sandbox keeps the place's writes in it.
    const args = scenario === 'asks' ? ['-a', 'on-request', '-s', 'workspace-write'] : scenario === 'never-up' ? ['--conformance-never-up'] : undefined;
    const env = await codexEnv({ script: scriptOf(scenario), ...(args ? { args } : {}) });
    return { options: env.options, taken: () => env.api.requests.map((request) => lastUserText(request.body)).filter((text) => text !== ''), unexpected: () => env.api.unexpected(), cleanup: () => env.cleanup() };
  }, { startMs: 40_000, promptMs: 6_000, settleMs: 20_000, draftMs: 1_500 });
}
