/**
 * What counts as a secret in an environment: a variable whose name says so (`ANTHROPIC_API_KEY`,
 * `GITHUB_TOKEN`, `…_SECRET`, `…_PASSWORD`). Its value is never printed or stored: the printed
 * host writes it as a reference for the operator's shell, and a dry run shows it hidden.
 */

/** Names of variables whose values are secrets: never printed or stored, only referred to. */
export const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|COOKIE|PRIVATE)(_|$)|TOKEN$|SECRET$|KEY$/i;

/** What a dry run shows in place of a secret's value. */
export const HIDDEN = '(hidden)';

/** The environment as it may be shown: each secret's value replaced by HIDDEN. */
export function shownEnvironment(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, SECRET_NAME.test(name) ? HIDDEN : value]));
}
