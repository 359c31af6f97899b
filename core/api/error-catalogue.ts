/**
 * Every error code flume raises, in one table (as semantic-release's `lib/definitions/errors.js`):
 * what it means, the shape of its message (`{word}` marks what a call site fills in), the safe next
 * step, and the exit code. A unit test keeps the table and the source in step: every code raised
 * anywhere is here, and every code here is raised somewhere.
 */

/** One code's entry: its exit code, its message's shape and its default fix. */
export interface CatalogueEntry {
  /** The process exit code: 2 for a command line that is wrong, 1 otherwise. */
  exit: 1 | 2;
  /** The message's shape; a call site may word it more closely, but says the same. */
  message: string;
  /** The safe next step, never the override flag. */
  fix: string;
}

const entry = (message: string, fix: string, exit: 1 | 2 = 1): CatalogueEntry => ({ exit, message, fix });

/** The catalogue: code → entry. Callers match on codes, never on text. */
export const ERROR_CATALOGUE = {
  BAD_USAGE: entry('{problem} (the command line is wrong).', 'Run the command with --help to see its arguments.', 2),
  BAD_NAME: entry('The name {name} is not a valid place or branch name.', 'Choose lowercase words joined by single "-" (at most 64 characters).'),
  BAD_CONFIG: entry('{file} has {count} problems: {problems}.', 'Correct each path named in the config; flume.schema.json describes every key.'),
  UNTRUSTED_CONFIG: entry('{file} is not trusted (or changed since it was); flume will not run it.', 'Read the config, and if you trust it run: flume trust --repo {root}.'),
  CONFIG_LOADING: entry('{file} is still loading: flume probes it in the background and runs none of it here until it has loaded.', 'Run `flume status` again in a few seconds; it then reports how the config loaded.'),
  CONFIG_HUNG: entry('{file} did not finish loading within {seconds} s; flume skips this repository.', 'Make the config finish loading; flume tries it again once the file changes.'),
  BAD_RECORD: entry('{file} is not a record {reader} can read: {problems}.', 'The tool that writes it wrote what its schema does not allow: have it write the record again, or move the file aside.'),
  BAD_STATE: entry("flume's state file {file} cannot be read.", 'Move it aside; flume writes it anew.'),
  UNKNOWN_KIND: entry('There is no kind {kind}.', '`flume kinds` lists the kinds with their stages.'),
  UNKNOWN_STAGE: entry('The kind {kind} has no stage {stage}.', 'Use one of the kind\'s stages; a repository declares more in its config.'),
  UNKNOWN_PLACE: entry('There is no place {place} in {repo}.', '`flume status` lists the places flume runs.'),
  UNKNOWN_AGENT: entry('No plugin provides the agent {driver}.', 'Add the plugin that provides it to the config.'),
  NOT_A_REPOSITORY: entry('{folder} is not a git repository.', 'Pass --repo the folder of a git repository.'),
  NO_COMMIT: entry('{repo} has no commit to start a place from.', 'Make a first commit in the repository, then launch again.'),
  BAD_REF: entry('--from {ref} names no commit in {repo}.', 'Name a branch, tag or commit that exists.'),
  PLACE_EXISTS: entry('The place {place} exists already.', 'Give the launch a name of its own.'),
  BRANCH_EXISTS: entry('The branch {branch} exists already.', 'Choose another name; flume never adopts a branch it did not make.'),
  WORKTREE_EXISTS: entry('A worktree flume did not make is registered at {path}.', 'Choose another name; flume never adopts a worktree it did not make.'),
  PLACE_BUSY: entry('{what} is held by another flume ({holder}).', 'Wait for the other flume command to finish, then run this again.'),
  PLACE_NOT_READY: entry('{place} is not ready: {reason}.', 'Mend the failed readying step (flume status shows its words), then retry.'),
  PLACE_OVER: entry('{place} is dropped or tidied; no stage starts there.', 'Launch anew under another name.'),
  PLACES_UNSAFE: entry('{path} is not flume\'s own folder (a symlink, or files the repository tracks).', 'Remove what stands there, so flume can make its own places/ folder, then launch again.'),
  GIT_FAILED: entry('git {command} failed: {message}', 'Read the git message; the repository was left as it was.'),
  PLUGIN_FAILED: entry('[{plugin}] {hook} failed: {message}', 'Check the plugin named; the error came from its tap.'),
  PLUGIN_BAD_RETURN: entry('[{plugin}] {hook} returned {what}: {problems}.', 'Correct the plugin named so its tap returns what the hook declares (core/api/hooks.ts).'),
  AGENT_NOT_UP: entry('The agent of {place} is not up; nothing was typed.', 'Start the stage again with flume retry.'),
  AGENT_ASKING: entry('The agent of {place} has a dialog open; text typed now would go into it.', 'Answer the dialog in its pane, then tell again.'),
  AGENT_WORKING: entry('The agent of {place} is working; stopping it now would lose what it is doing.', 'Wait for its turn to end, then stop it.'),
  AGENT_BUSY: entry("The input box of {place}'s agent holds a draft someone typed; nothing was typed.", 'Submit or clear the draft in its pane, then tell again.'),
  AGENT_RUNNING: entry('The agent of {place} is still working; a fresh agent never starts over a running one.', 'Wait for its turn to end, or stop it, then run this again.'),
  AGENT_DID_NOT_EXIT: entry('The agent of {place} did not exit.', 'Look at its pane; end the process by hand if it hangs.'),
  AGENT_START_FAILED: entry('The agent {driver} did not start.', 'Check the agent driver plugin; flume status shows the stage.'),
  PROMPT_NOT_TAKEN: entry("The text to {place} was sent twice and its agent's transcript does not hold it.", 'Look at its pane; flume stop, then flume retry, starts it afresh.'),
  CANNOT_ATTACH: entry("{place}'s agent has no pane this terminal can be put on ({host}).", 'Look at it where it runs (flume status names its pane or command).'),
  CANNOT_GO_ON: entry("{place}'s stage does not end on a conclusion; go-on runs another round only of a question's session.", 'Tell its agent with flume tell, or start the stage afresh with flume retry.'),
  NO_PANE_HOST: entry('The pane host {host} is not available here.', 'Start it, or set agent.host to "auto" so flume picks what runs.'),
  NO_TARGET: entry('Nothing names the branch work in {repo} lands on.', 'Set `target` in flume.config.ts, or check out that branch in the main checkout.'),
  WATCH_RUNNING: entry('A flume watch already runs on this host.', 'Nothing to do: it moves every place on.'),
  BRIEF_MISSING: entry('The brief {file} cannot be read (or none was given).', 'Pass the brief with --brief, or a readable file with --brief-file.'),
  BAD_TEXT: entry('{what} holds the control character {character}; it would be typed to the agent as a keystroke.', 'Remove the control character (only newlines and tabs may stand in text sent to an agent).'),
  IO_FAILED: entry('{what} could not be read or written: {message}', 'Run again; report it with the command that failed if it persists.'),
} as const satisfies Record<string, CatalogueEntry>;

/** A code from the catalogue. */
export type CatalogueCode = keyof typeof ERROR_CATALOGUE;

/**
 * A catalogue message with its `{words}` filled from `values` (a word without a value stays as
 * written, so a missing value shows rather than vanishes).
 */
export function catalogueMessage(code: CatalogueCode, values: Record<string, string | number> = {}): string {
  return ERROR_CATALOGUE[code].message.replace(/\{(\w+)\}/g, (whole, word: string) => (word in values ? String(values[word]) : whole));
}
