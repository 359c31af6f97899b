/**
 * A conformance harness (`flume/testing`) for the OpenCode driver over the REAL OpenCode (the pinned
 * 1.18.33), each scenario with a scripted Chat Completions API of its own (opencode-env.ts); drops
 * are lost Enters at the terminal (conformance-program.ts).
 */
import { opencodePlugin } from '../../agents/index.js';
import type { ConformanceScenario } from '../../core/testing/index.js';
import { opencodeEnv } from './opencode-env.js';
import { bash, lastUserText, type ChatApi, type Script } from './chat-api.js';
import { programHarness, type ProgramHarness } from './conformance-program.js';

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

/** The harness for the real OpenCode. */
export function opencodeConformanceHarness(): ProgramHarness {
  // OpenCode writes a prompt to its record seconds before its first model step reaches the API (it
  // boots its snapshot and location services first): on a loaded machine more than 10 s.
  return programHarness('opencode', opencodePlugin, async (scenario) => {
    const env = await opencodeEnv({ script: scriptOf(scenario), ...(scenario === 'never-up' ? { args: ['--conformance-never-up'] } : {}) });
    return { options: env.options, taken: () => tookOf(env.api), unexpected: () => env.api.unexpected(), cleanup: () => env.cleanup() };
  }, { startMs: 60_000, promptMs: 15_000, settleMs: 30_000, draftMs: 2_000 });
}
