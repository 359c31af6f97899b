import type { ProgramOptions } from '../program.js';

/**
 * How a repository points flume at its Codex CLI: the config's `agents.codex`. `binary` defaults to
 * `codex` on PATH; `args` go after flume's own (`-c key=value` sets any Codex config value); `env`
 * holds the provider's key, under its `env_key`.
 */
export interface CodexOptions extends ProgramOptions {
  /** The user's Codex home, whose login (`auth.json`) each agent's own home links to. Default `$CODEX_HOME`, else `~/.codex`. */
  configDir?: string;
  /** The model (`model` in Codex's config); a stage's `model` wins. */
  model?: string;
  /**
   * A model provider of Codex's (`[model_providers.<name>]`): `base_url`, `env_key` (the variable
   * holding the API key), `wire_api` (default `responses`), and any other key Codex reads there.
   */
  provider?: { name?: string; base_url: string; env_key?: string; wire_api?: string; [key: string]: string | number | boolean | undefined };
}
