import { programOptionsSchema, type ProgramOptions } from '../program.js';

/**
 * How a repository points flume at its OpenCode: the config's `agents.opencode`. `binary` defaults to
 * `opencode` on PATH; `args` go after flume's own (`--agent plan`, `--pure`, …); `env` might hold a
 * provider's API key or `OPENCODE_DISABLE_MODELS_FETCH`.
 */
export interface OpencodeOptions extends ProgramOptions {
  /** The model, as OpenCode names it: `<provider>/<model>`. A stage's `model` wins. */
  model?: string;
  /**
   * OpenCode config merged into the file flume writes for each agent (`provider`, `agent`, …), over
   * the user's own config, which OpenCode still reads.
   */
  config?: Record<string, unknown>;
  /** The user's OpenCode data folder, whose login (`auth.json`) each agent's own links to. Default `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`. */
  dataDir?: string;
}

/** OpenCode's options (`agents.opencode`), checked when the repository opens. */
export const OPENCODE_OPTIONS = programOptionsSchema({
  model: { type: 'string', minLength: 1 },
  config: { type: 'object' },
  dataDir: { type: 'string', minLength: 1 },
});
