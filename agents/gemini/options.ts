import { programOptionsSchema, type ProgramOptions } from '../program.js';

/**
 * How a repository points flume at its Gemini CLI: the config's `agents.gemini`. `binary` defaults to
 * `gemini` on PATH; `args` go after flume's own (`-s` runs it in Gemini's own sandbox, `-e` picks
 * extensions); `env` might hold `GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL`, `GEMINI_CLI_HOME`.
 */
export interface GeminiOptions extends ProgramOptions {
  /** The model (`-m`); a stage's `model` wins. */
  model?: string;
}

/** The JSON schema of {@link GeminiOptions}, checked when the repository opens. */
export const GEMINI_OPTIONS_SCHEMA = programOptionsSchema({ model: { type: 'string', minLength: 1 } });
