/** How a repository points flume at its Gemini CLI: the config's `agents.gemini`. */
export interface GeminiOptions {
  /** The program; default `gemini` on PATH. */
  binary?: string;
  /** Arguments after flume's own (`-s` runs it in Gemini's own sandbox; `-e` picks extensions). */
  args?: string[];
  /** Variables added to the agent's environment (`GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL`, `GEMINI_CLI_HOME`). */
  env?: Record<string, string>;
  /** The model (`-m`); a stage's `model` wins. */
  model?: string;
}

/** The JSON schema of {@link GeminiOptions}, checked when the repository opens. */
export const GEMINI_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    binary: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    model: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
};
