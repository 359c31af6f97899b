/**
 * A repository run by flume with the REAL Gemini CLI as its agent (`agent.driver: 'gemini'`), its
 * `agents.gemini` pointing at the scripted Gemini API with a Gemini home of the test's own
 * (test/helpers/gemini-env.ts).
 */
import { findChat, readChat } from '../../agents/gemini/chat.js';
import { waitFor } from '../../core/index.js';
import { geminiEnv, type GeminiEnv } from '../helpers/gemini-env.js';
import type { Script } from '../helpers/gemini-api.js';
import { programRepo, type ProgramRepo } from '../helpers/program-repo.js';

/** A repository whose stages run the real Gemini CLI. */
export interface GeminiRepo extends ProgramRepo {
  gemini: GeminiEnv;
  /** The prompts the agent of `sessionId` took, as its chat records them, once it holds `count` (at most 10 s). */
  promptsOf(sessionId: string, count: number): Promise<string[]>;
}

/** Makes the scripted API and a repository whose config runs the real Gemini CLI. */
export async function geminiRepo(options: { script: Script; config?: Record<string, unknown>; args?: string[] }): Promise<GeminiRepo> {
  const gemini = await geminiEnv({ script: options.script, ...(options.args ? { args: options.args } : {}) });
  const repo = programRepo('gemini', gemini.options, options.config, () => gemini.cleanup());
  // flume run as on a CI machine, whose `CI=true` would make the Gemini CLI headless if it reached it.
  repo.env.CI = 'true';
  const prompts = async (sessionId: string) => {
    const path = await findChat(gemini.home, sessionId);
    return ((path && (await readChat(path))?.prompts) || []).map((p) => p.text);
  };
  return {
    ...repo,
    gemini,
    async promptsOf(sessionId, count) {
      return (await waitFor(async () => ((await prompts(sessionId)).length >= count ? prompts(sessionId) : undefined), 10_000)) ?? prompts(sessionId);
    },
  };
}
