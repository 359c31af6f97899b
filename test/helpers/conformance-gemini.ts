/**
 * A conformance harness (`flume/testing`) for the Gemini CLI driver over the REAL Gemini CLI (the
 * pinned 0.61.0), each scenario with a scripted Gemini API and a Gemini home of its own
 * (gemini-env.ts); drops are lost Enters at the terminal (conformance-program.ts).
 */
import { geminiPlugin } from '../../agents/index.js';
import type { ConformanceScenario } from '../../core/testing/index.js';
import { programHarness, type ProgramHarness } from './conformance-program.js';
import { geminiEnv } from './gemini-env.js';
import { lastUserText, shell, type Script } from './gemini-api.js';

/** What the model answers in each scenario: a short reply, or a shell command, which Gemini's default approval mode asks for. */
function scriptOf(scenario: ConformanceScenario): Script {
  if (scenario === 'asks') return (_request, index) => (index === 0 ? shell('touch ../conformance-outside.txt') : 'Done.');
  if (scenario === 'drops-all' || scenario === 'never-up') return [];
  return () => 'Noted.';
}

/** The harness for the real Gemini CLI. */
export function geminiConformanceHarness(): ProgramHarness {
  return programHarness('gemini', geminiPlugin, async (scenario) => {
    const env = await geminiEnv({ script: scriptOf(scenario), ...(scenario === 'never-up' ? { args: ['--conformance-never-up'] } : {}) });
    return { options: env.options, taken: () => env.api.requests.map(lastUserText).filter((text) => text !== ''), unexpected: () => env.api.unexpected(), cleanup: () => env.cleanup() };
  }, { startMs: 40_000, promptMs: 6_000, settleMs: 20_000, draftMs: 1_500 });
}
