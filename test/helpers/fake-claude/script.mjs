/**
 * The fake's script: how it behaves, from the JSON file named by `FAKE_CLAUDE_SCRIPT` (see README.md).
 * Checked when loaded, so a mistyped script fails at start instead of passing a test by accident.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from './args.mjs';

const DEFAULTS = {
  startDelayMs: 0,
  footerReadyMs: 150,
  // 2.1.332 on a loaded host echoed a short typed line 80 ms and more after it came; an Enter before the echo was lost.
  echoMs: 100,
  dropInputs: 0,
  transcriptLagMs: 0,
  // The state file lags the screen in 2.1.332 by about this much (sessions/*.json against the transcript).
  stateLagMs: 250,
  pasteThreshold: 800,
  notifyAfterMs: 6000,
  idleNotifyAfterMs: 60000,
  trust: false,
  draft: '',
  // The `message.usage` of every reply, written on each of its block lines as 2.1.332 does.
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  onPrompt: [],
};
const ACTIONS = ['say', 'run', 'sleepMs', 'waitFile', 'ask', 'permission', 'hang', 'crash', 'exit', 'draft'];
const MODIFIERS = { run: ['description'], ask: ['transcriptLagMs'] };

/** Loads and checks the script at `path`; no path means the default (reply "ok" to every prompt). */
export function loadScript(path) {
  let script = {};
  if (path) {
    try {
      script = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new UsageError(`fake-claude: cannot read FAKE_CLAUDE_SCRIPT ${path}: ${error.message}`);
    }
  }
  const unknown = Object.keys(script).filter((key) => !(key in DEFAULTS));
  if (unknown.length) throw new UsageError(`fake-claude: unknown script keys ${unknown.join(', ')}; expected ${Object.keys(DEFAULTS).join(', ')}`);
  const full = { ...DEFAULTS, ...script };
  full.onPrompt.forEach((rule, index) => {
    if (!Array.isArray(rule.actions)) throw new UsageError(`fake-claude: onPrompt[${index}] needs an actions list`);
    if (rule.match !== undefined) rule.regex = new RegExp(rule.match, rule.flags ?? '');
    rule.actions.forEach((action, at) => checkAction(action, `onPrompt[${index}].actions[${at}]`));
  });
  return full;
}

/** The actions for a prompt: the first rule whose `match` fits (a `once` rule fits one time). */
export function actionsFor(script, prompt) {
  const rule = script.onPrompt.find((candidate) => !candidate.spent && (!candidate.regex || candidate.regex.test(prompt)));
  if (!rule) return [{ say: 'ok' }];
  if (rule.once) rule.spent = true;
  return rule.actions;
}

/** The one action key of an action object. */
export function actionKind(action) {
  return ACTIONS.find((key) => key in action);
}

function checkAction(action, where) {
  const keys = Object.keys(action ?? {});
  const kinds = keys.filter((key) => ACTIONS.includes(key));
  if (kinds.length !== 1) throw new UsageError(`fake-claude: ${where} needs exactly one of ${ACTIONS.join(', ')}`);
  const extra = keys.filter((key) => key !== kinds[0] && !(MODIFIERS[kinds[0]] ?? []).includes(key));
  if (extra.length) throw new UsageError(`fake-claude: ${where} has unknown keys ${extra.join(', ')}`);
  if (kinds[0] === 'run' && (!Array.isArray(action.run) || !action.run.length)) throw new UsageError(`fake-claude: ${where}.run must be an argv list`);
}
