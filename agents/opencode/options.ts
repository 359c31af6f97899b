/** How a repository points flume at its OpenCode: the config's `agents.opencode`. */
export interface OpencodeOptions {
  /** The program; default `opencode` on PATH. */
  binary?: string;
  /** Arguments after flume's own (`--agent plan`, `--pure`, …). */
  args?: string[];
  /** Variables added to the agent's environment (a provider's API key, `OPENCODE_DISABLE_MODELS_FETCH`). */
  env?: Record<string, string>;
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
export const OPENCODE_OPTIONS = {
  type: 'object',
  properties: {
    binary: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    model: { type: 'string', minLength: 1 },
    config: { type: 'object' },
    dataDir: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
};
