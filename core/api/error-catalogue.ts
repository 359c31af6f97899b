/**
 * Every error code flume raises, in one table (as semantic-release's `lib/definitions/errors.js`):
 * what it means, the shape of its message (`{word}` marks what a call site fills in), the safe next
 * step, and the exit code. A unit test keeps the table and the source in step: every code raised
 * anywhere is here, and every code here is raised somewhere.
 */

/** One wording of a code: its message's shape and its fix's. */
export interface CatalogueWording {
  /** The message's shape: `{word}` marks a value the call site gives. */
  message: string;
  /** The safe next step, never the override flag; `{word}` as in the message. */
  fix: string;
}

/** One code's entry: its exit code, its wording, and the other wordings it may be raised with. */
export interface CatalogueEntry extends CatalogueWording {
  /** The process exit code: 2 for a command line that is wrong, 4 for a wait that timed out, 1 otherwise. */
  exit: 1 | 2 | 4;
  /**
   * Named wordings of the same code for the cases a caller raises it in (`flumeError(code, values,
   * { variant })`); a variant without a fix of its own has the entry's.
   */
  variants?: Record<string, { message: string; fix?: string }>;
}

/** The catalogue: code → entry. Callers match on codes, never on text. */
export const ERROR_CATALOGUE = {
  BAD_USAGE: {
    exit: 2,
    message: 'The tell is empty.',
    fix: 'Give the text to tell, or --file with it.',
    variants: {
      parser: { message: '{message}', fix: 'Run `flume --help` or `flume <command> --help` for the usage.' },
      briefTwice: { message: 'Give the brief once: --brief or --brief-file, not both.', fix: 'Drop one of the two.' },
      paneProgram: { message: "A pane's program must be named first and hold no '=': {argv}.", fix: 'Pass the program as argv[0], preferably as an absolute path.' },
      environmentNames: { message: "Environment names cannot be empty, hold '=' or start with '-': {names}.", fix: 'Rename or drop those variables.' },
      environmentLimit: { message: '{name} is {value}: not a time limit (a number of milliseconds above 0, or a duration such as 90s, at most {limit}).', fix: 'Set {name} to a number of milliseconds, or unset it for the default of {fallback} ms.' },
      tellTwice: { message: 'Give the text to tell, or --file, once.', fix: 'flume tell fix/x "the answer", or flume tell fix/x --file answer.md' },
      unreadableFile: { message: 'The file {file} cannot be read.', fix: 'Pass --file a readable text file.' },
      eventId: { message: '--{flag} {value} is not an event id.', fix: 'Give --since the id of an event (a whole number), as `flume events --json` prints it.' },
      outcomes: { message: '--{flag} {value} names no outcome flume waits for.', fix: 'Name one or more, comma-separated: {known}.' },
      duration: { message: '--{flag} {value} is not a duration.', fix: 'Give --{flag} seconds, or a number with ms, s, m or h (for example 30s or 10m), at most {limit}.' },
      durationTooLong: { message: '--{flag} {value} is longer than {limit}, the longest duration flume takes.', fix: 'Give --{flag} at most {limit}.' },
      noName: { message: 'Missing required argument: name', fix: 'Name the launch with --name NAME, or let flume make one from the brief with --auto-name.' },
      noTool: { message: 'There is no tool {tool}.', fix: 'Use one of: {tools}.' },
      argumentsNotObject: { message: 'The arguments must be an object.', fix: 'Call the tool with the arguments its input schema names.' },
      argumentsMismatch: { message: 'The arguments of {tool} do not fit its input schema: {problems}.', fix: 'Call {tool} with the arguments its input schema names ({arguments}).' },
      launchText: { message: '{message}', fix: 'Put the brief after "--kind <kind>".' },
    },
  },
  BAD_NAME: {
    exit: 1,
    message: 'The name {name} is not a safe branch and folder name.',
    fix: 'Use 1 to 64 lowercase letters and digits in words joined by single "-" (for example: bump-parser).',
    variants: {
      branch: { message: 'The branch {branch} is not a valid branch name.', fix: 'Choose a simpler name (letters, digits, "-").' },
    },
  },
  BAD_CONFIG: {
    exit: 1,
    message: '{file} has {count} problems:\n{problems}',
    fix: 'Correct each path named above in {file}; flume.schema.json describes every key.',
    variants: {
      unreadable: { message: 'The config {file} could not be read: {message}', fix: 'Correct the syntax of {file}.' },
      missingImport: { message: 'The config {file} imports "{module}", which cannot be found.', fix: 'Install it in the repository or correct the import; flume itself is importable as {specifiers}.' },
      loadFailed: { message: 'The config in {root} could not be loaded: {message}', fix: 'Correct the syntax of the config file; it must export the config as its default export.' },
      exportThrew: { message: '{file}: the function it exports threw: {message}', fix: 'Make the exported function return the config, or export the config itself.' },
      registeredWithoutKey: { message: '{what} registered by {plugin} has no "{field}".', fix: 'Give it a string "{field}" (write it with its define… function).' },
      addedOutsideApply: { message: "{what} added outside a plugin's apply: there is no plugin to register it in the name of.", fix: "Add it in a plugin's apply(flume) with flume.<registry>.add(value), or name the plugin: register(plugin, value)." },
      registeredTwice: { message: '{what} "{key}" is registered twice: by {first} and by {plugin}.', fix: 'Rename one of them, or register with { replace: true } to replace the {first} one.' },
      notAPlugin: { message: 'A plugin must be an object with a string "name" and an "apply" function.', fix: 'Write plugins with definePlugin({ name: "you:thing", apply(flume) { … } }).' },
      deliverablePath: { message: 'The deliverable path {path} is not a file inside the place.', fix: 'Give the stage\'s deliverable a "path" relative to the place, such as "docs/verify.md".' },
      openspecChange: { message: 'The OpenSpec change id {id} is not a folder under {folder}/.', fix: 'Give the stage\'s deliverable a "change" option naming the change\'s folder, such as "add-widget".' },
      oneProblem: { message: '{file} has 1 problem:\n{problems}' },
      dataImport: { message: 'The config {file} asks to "$import" {imports}; flume reads a JSON or YAML config as data and follows no "$import".', fix: 'Write what {list} holds into {file} itself, or make the config a module (flume.config.ts or .mjs) that imports it; then run: flume trust --repo {root}' },
      packageImport: { message: 'The config {file} asks to "$import" {imports}; flume reads a package.json `flume` key as data and follows no "$import".', fix: 'Write what {list} holds into {file} itself, or make the config a module (flume.config.ts or .mjs) that imports it; then run: flume trust --repo {root}' },
      thrown: { message: '{message}', fix: 'Correct the config file; it must export the config as its default export.' },
      probeFailed: { message: '{file} could not be loaded.', fix: 'Correct {file}; it must export the config as its default export.' },
      duration: { message: '{path} is not a duration: {value}.', fix: 'Give {path} seconds as a number, or a string such as "90s", "20m" or "2h", at most {limit}.' },
      durationTooLong: { message: '{path} is {value}, longer than {limit}, the longest duration flume takes.', fix: 'Give {path} at most {limit}.' },
    },
  },
  UNTRUSTED_CONFIG: {
    exit: 1,
    message: '{file} is not trusted; flume will not run it.',
    fix: "Trusting it is a person's decision: read {file} (flume runs it, and the ready steps it declares, as you); if you trust it, run: flume trust --repo {root}",
    variants: {
      changed: { message: '{file} changed since it was trusted; flume will not run it.' },
    },
  },
  CONFIG_LOADING: {
    exit: 1,
    message: '{file} is still loading: flume probes it in the background (for {seconds} s at most) and runs none of it here until it has loaded.',
    fix: 'Run `flume status` again in a few seconds: it then reports how {file} loaded (or `flume kinds --repo {root}` waits for it).',
  },
  CONFIG_HUNG: {
    exit: 1,
    message: '{file} did not finish loading within {seconds} s; flume skips this repository.',
    fix: 'Make {file} finish loading (a loop or a wait at its top level, or in a module or plugin it loads); flume tries it again once any of them changes, or after `flume trust --repo {root}`.',
  },
  BAD_RECORD: {
    exit: 1,
    message: '{file} is not a record {reader} can read: {problems}.',
    fix: 'sluice wrote what sluice-record.schema.json does not allow: have it write the record again (submit the branch again), or move the file aside.',
  },
  BAD_STATE: {
    exit: 1,
    message: "flume's state file {file} cannot be read.",
    fix: 'Move it aside; flume writes it anew (trust decisions in it must then be taken again).',
    variants: {
      hostList: { message: "The host's list of repositories {file} cannot be read.", fix: 'Move it aside; flume status --repo DIR still reads each repository, and the next launch there writes the list anew.' },
      placeRecord: { message: 'The place record {file} cannot be read: {problem}.', fix: 'Move the file aside and run `flume status`; the worktree and branch are untouched and status shows them as not recorded.' },
    },
  },
  UNKNOWN_KIND: {
    exit: 1,
    message: 'There is no kind {kind}.',
    fix: 'Use one of: {known}; `flume kinds` lists them with their stages.',
  },
  UNKNOWN_STAGE: {
    exit: 1,
    message: 'The kind {kind} has no stage {stage}.',
    fix: 'Use one of: {stages}; a repository declares more in its config.',
  },
  UNKNOWN_PLACE: {
    exit: 1,
    message: 'There is no place {place} in {repo}.',
    fix: '`flume status` lists the places flume runs.',
    variants: {
      notAPlace: { message: '{place} does not name a place.', fix: 'Name a place as kind/name (for example fix/bump-parser); `flume status` lists them.' },
      status: { message: 'There is no place {place} in {repo}.', fix: 'Run `flume status` to list the places flume runs.' },
      statusOnHost: { message: 'There is no place {place} on this host.', fix: 'Run `flume status` to list the places flume runs.' },
      manyRepositories: { message: '{place} names a place in {count} repositories.', fix: 'Say which with --repo ({repositories}).' },
      onHost: { message: 'There is no place {place} on this host.', fix: '`flume status` lists the places flume runs; pass --repo for a repository it does not know.' },
    },
  },
  UNKNOWN_AGENT: {
    exit: 1,
    message: 'No plugin provides the agent "{agent}".',
    fix: 'Name an agent a plugin provides ({known}), or add the plugin that provides it to the config.',
    variants: {
      unnamed: { message: "No agent is named for {kind}'s {stage}, and no plugin sets a default.", fix: 'Name the agent in the stage ("agent") or in the config (agent.driver).' },
    },
  },
  NOT_A_REPOSITORY: {
    exit: 1,
    message: 'Not a git repository: {folder}',
    fix: 'Pass --repo the folder of a git repository (git init, and make a first commit).',
    variants: {
      noFolder: { message: 'No such folder: {folder}', fix: 'Pass --repo the folder of a git repository.' },
      bare: { message: 'A bare repository has no checkout to make places beside: {folder}', fix: 'Pass --repo a repository with a working tree.' },
    },
  },
  NO_COMMIT: {
    exit: 1,
    message: '{repo} has no commit to start a place from.',
    fix: 'Make a first commit in the repository, then launch again.',
  },
  BAD_REF: {
    exit: 1,
    message: '--from {ref} names no commit in {repo}.',
    fix: 'Name a branch, tag or commit that exists (git branch -a lists branches).',
  },
  PLACE_EXISTS: {
    exit: 1,
    message: 'The place {place} exists already ({path}).',
    fix: 'Choose another name; `flume status` shows the existing place.',
    variants: {
      autoNames: { message: 'Fifty places named after this brief exist already ({name}, {name}-2, …).', fix: 'Give the launch a name of its own.' },
      launching: { message: 'Another launch of {place} is under way.', fix: 'Choose another name, or wait and read `flume status`.' },
      symlinkThere: { message: 'A symlink {path} exists already.', fix: 'Choose another name; flume never adopts a folder it did not make.' },
      folderThere: { message: 'The folder {path} exists already.', fix: 'Choose another name; flume never adopts a folder it did not make.' },
    },
  },
  BRANCH_EXISTS: {
    exit: 1,
    message: 'The branch {branch} exists already.',
    fix: 'Choose another name; flume never adopts a branch it did not make.',
  },
  WORKTREE_EXISTS: {
    exit: 1,
    message: 'A worktree flume did not make is registered at {path}.',
    fix: 'Choose another name; flume never adopts a worktree it did not make.',
  },
  PLACE_BUSY: {
    exit: 1,
    message: '{what} is held by another flume ({holder}).',
    fix: 'Wait for the other flume command to finish, then run this again.',
  },
  PLACE_NOT_READY: {
    exit: 1,
    message: '{place} is not ready: {reason}.',
    fix: 'Mend the failed readying step (flume status shows its words), then retry.',
  },
  NOT_AWAITING: {
    exit: 1,
    message: '{place} does not wait for its caller: {state}.',
    fix: 'Wait for its stage to end (`flume wait {place}`); `flume status {place}` says where it stands.',
  },
  WAIT_TIMEOUT: {
    exit: 4,
    message: '{place} reached none of {outcomes} within {timeout}.',
    fix: 'Wait again (`flume wait {place}`), or see where it stands with `flume status {place}`.',
  },
  PLACE_OVER: {
    exit: 1,
    message: '{place} is {state}; no stage starts there.',
    fix: 'Launch anew under another name.',
  },
  PLACES_UNSAFE: {
    exit: 1,
    message: '{path} is a symlink; flume would make the place wherever it points, perhaps in another repository.',
    fix: 'Remove the symlink (git rm {folder} if it is committed), so flume can make its own {folder}/ folder, then launch again.',
    variants: {
      tracked: { message: "The repository tracks files under {folder}/ ({tracked}); flume's /{folder}/ line in info/exclude would hide new files there from git status.", fix: "Move those files out of {folder}/ (git mv) and commit, so the folder is flume's alone, then launch again." },
    },
  },
  GIT_FAILED: {
    exit: 1,
    message: 'git {command} failed: {message}',
    fix: 'Read the git message above; the repository was left as it was.',
    variants: {
      mergeTree: { message: 'git merge-tree failed: {message}', fix: 'flume judges a branch by content with git merge-tree --write-tree (git 2.38 or later): `flume doctor` checks git.' },
      init: { message: 'git could not make a repository in {dir}: {message}', fix: 'Read the git message above; check that git is installed and the folder is writable.' },
    },
  },
  PLUGIN_FAILED: {
    exit: 1,
    message: '[{plugin}] {hook} failed: {message}',
    fix: 'Check the plugin "{plugin}"; the error came from its {hook} tap.',
  },
  PLUGIN_BAD_RETURN: {
    exit: 1,
    message: '[{plugin}] {hook} returned a malformed value: {problems}.',
    fix: 'Correct the plugin "{plugin}" so its tap returns what the hook declares (core/api/hooks.ts).',
    variants: {
      driverMethod: { message: '[{plugin}] The agent driver "{agent}" has no {method} method.', fix: 'Give the driver of "{plugin}" every method of AgentDriver (defineDriver checks its type).' },
    },
  },
  AGENT_NOT_UP: {
    exit: 1,
    message: 'The agent of {place} is not up; nothing was typed.',
    fix: 'Start the stage again with flume retry, then tell it.',
    variants: {
      paneGone: { message: 'The pane {pane} no longer holds the agent of session {sessionId}; nothing was typed.', fix: 'Start the stage again with flume retry.' },
      elsewhere: { message: 'The agent of session {sessionId} runs where flume cannot type ({host}).', fix: 'Type into it where it runs; flume reads its transcript all the same.' },
      driverNoPane: { message: 'The {agent} agent of session {sessionId} has no pane of its own flume can type into; nothing was typed.', fix: 'Type into it where it runs, or start the stage again with flume retry.' },
      printed: { message: 'An agent started as a printed command has no pane flume can type into.', fix: 'Type into the terminal where the command runs.' },
      printedKeys: { message: 'An agent started as a printed command has no pane flume can press keys in.', fix: 'Use the terminal where the command runs.' },
      paneEmpty: { message: 'The pane {pane} has no running program.', fix: 'Read the pane with `flume status`; start the agent again with `flume retry`.' },
      herdrPaneEmpty: { message: 'The herdr pane {pane} has no running program.', fix: 'Read the place with `flume status`; start the agent again with `flume retry`.' },
      starting: { message: 'The agent of {place} is still starting; nothing was typed.', fix: 'Wait until it accepts input, then tell again.' },
      unreachable: { message: '{place} has no agent flume can reach (driver {driver}); nothing was typed.', fix: 'Start its stage with flume retry.' },
      noAgent: { message: '{place} has no agent started; nothing was typed.', fix: 'Start its stage with flume retry.' },
      notTypablePane: { message: 'The agent of session {sessionId} is not in a pane flume can type into ({host} pane {pane}); nothing was typed.', fix: 'Start the stage again with flume retry, or type into it where it runs.' },
      notTypable: { message: 'The agent of session {sessionId} is not in a pane flume can type into ({host}); nothing was typed.', fix: 'Start the stage again with flume retry, or type into it where it runs.' },
    },
  },
  AGENT_ASKING: {
    exit: 1,
    message: 'The agent of {place} has a question open; text typed now would go into the dialog, so nothing was typed.',
    fix: 'Answer the dialog in its pane, then tell again.',
    variants: {
      questionNeeds: { message: 'The agent of {place} has a question open ({needs}); text typed now would go into the dialog, so nothing was typed.' },
      permission: { message: 'The agent of {place} has a permission prompt open; text typed now would go into the dialog, so nothing was typed.' },
      permissionNeeds: { message: 'The agent of {place} has a permission prompt open ({needs}); text typed now would go into the dialog, so nothing was typed.' },
    },
  },
  AGENT_WORKING: {
    exit: 1,
    message: 'The agent of {place} is working; stopping it now would lose what it is doing.',
    fix: 'Wait for its turn to end (flume status shows it idle or waiting), then stop it.',
    variants: {
      notConcluded: { message: "{place}'s {stage} has neither concluded nor stopped short.", fix: 'Wait for its conclusion or its note, then go on.' },
    },
  },
  AGENT_BUSY: {
    exit: 1,
    message: "The input box of {place}'s agent holds a draft someone typed; it would be sent with the tell, so nothing was typed.",
    fix: 'Submit or clear the draft in its pane, then tell again.',
    variants: {
      session: { message: 'The input box of session {sessionId} holds other text; flume will not send its text along with it.', fix: 'Clear the input box in its pane, then try again.' },
      driver: { message: 'The input box holds other text; flume will not send its text along with it.', fix: 'Clear the input box in its pane, then try again.' },
    },
  },
  AGENT_RUNNING: {
    exit: 1,
    message: 'The agent of {place} is still working; a fresh agent never starts over a running one.',
    fix: 'Wait for its turn to end, or stop it (flume stop --force), then run this again.',
  },
  AGENT_DID_NOT_EXIT: {
    exit: 1,
    message: 'The agent of {place} did not exit (it reads {state}).',
    fix: 'Look at its pane; end the process by hand if it hangs.',
    variants: {
      afterPaneClosed: { message: 'The agent of session {sessionId} (pid {pid}) still runs after its pane was closed.', fix: 'Look at it with `ps -p {pid}`; end it with `kill {pid}`.' },
      session: { message: 'The agent of session {sessionId} (pid {pid}) did not exit.', fix: 'Look at it with `ps -p {pid}`; it may be ending a tool call.' },
      driver: { message: 'The {agent} agent of session {sessionId} (pid {pids}) did not exit.', fix: 'Look at it with `ps -p {pidList}`; it may be ending a tool call.' },
      pane: { message: 'The program in pane {pane} (pid {pid}) did not exit.', fix: 'Look at the process with `ps -p {pid}` and end it by hand.' },
      herdrPane: { message: 'The program in herdr pane {pane} (pid {pid}) did not exit.', fix: 'Look at the process with `ps -p {pid}` and end it by hand.' },
    },
  },
  AGENT_START_FAILED: {
    exit: 1,
    message: 'The agent of {place} did not start: {needs}.',
    fix: 'Mend what it says, then start the stage again with flume retry {place}.',
    variants: {
      noAnswer: { message: '[{plugin}] The agent "{agent}" did not start: no tap of startAgent({agent}) answered.', fix: 'Check the plugin "{plugin}": its driver\'s start must return the agent\'s handle.' },
      codexSandbox: { message: 'git could not name the folders a commit in {place} writes: {message}', fix: 'Check the place with `git -C {place} status`; then flume retry the place.' },
      tmuxPane: { message: 'tmux pane {pane} did not start its program in {cwd}.', fix: 'Check that /bin/sh runs here and that the machine is not overloaded, then start the agent again.' },
      herdr: { message: 'herdr could not start the agent in {cwd}: {message}', fix: 'Check that herdr runs here (`herdr status server`) and that a new pane gets a working shell.' },
      herdrStateFolder: { message: "flume's state folder cannot be named in a herdr pane's shell: {script}.", fix: 'Set FLUME_STATE_DIR (or XDG_STATE_HOME) to a folder whose path has no quote, backslash or control character.' },
      tmux: { message: 'tmux could not {what}: {message}', fix: 'Check that tmux runs here (`tmux -V`) and that the socket folder is writable.' },
      claudeNotExecutable: { message: "The agent's program {program} could not start: it is not an executable file.", fix: 'Install Claude Code (npm install -g @anthropic-ai/claude-code) so {program} is on PATH, or name its program in the config (agents.claude-code.binary); then flume retry the place.' },
      claudeNotThere: { message: "The agent's program {program} is not found where its pane runs it ({where}: `command -v {program}` there finds nothing).", fix: 'Put {program} in the image (or mount the folder that holds it with agent.container.mounts), or name its path there in agents.claude-code.binary; then flume retry the place.' },
      claudeNoFile: { message: "The agent's program {program} could not start: there is no such file.", fix: 'Install Claude Code (npm install -g @anthropic-ai/claude-code) so {program} is on PATH, or name its program in the config (agents.claude-code.binary); then flume retry the place.' },
      claudeNotOnPath: { message: "The agent's program {program} could not start: it is not on the agent's PATH ({count} folders searched).", fix: 'Install Claude Code (npm install -g @anthropic-ai/claude-code) so {program} is on PATH, or name its program in the config (agents.claude-code.binary); then flume retry the place.' },
      claudeNotOnPathOne: { message: "The agent's program {program} could not start: it is not on the agent's PATH (1 folder searched).", fix: 'Install Claude Code (npm install -g @anthropic-ai/claude-code) so {program} is on PATH, or name its program in the config (agents.claude-code.binary); then flume retry the place.' },
      programNotExecutable: { message: "The agent's program {program} could not start: it is not an executable file.", fix: '{install} so {program} is on PATH, or name its program in the config (agents.{driver}.binary); then flume retry the place.' },
      programNotOnPath: { message: "The agent's program {program} could not start: it is not on the agent's PATH.", fix: '{install} so {program} is on PATH, or name its program in the config (agents.{driver}.binary); then flume retry the place.' },
    },
  },
  PROMPT_NOT_TAKEN: {
    exit: 1,
    message: "The tell to {place} was sent twice and its agent's transcript does not hold it; its input box holds nothing of it.",
    fix: 'Look at its pane (flume status names it); the agent may be hung. flume stop, then flume retry, starts it afresh.',
    variants: {
      left: { message: "The tell to {place} was sent twice and its agent's transcript does not hold it; its input box still holds text flume could not take back.", fix: 'Look at its pane (flume attach) before anything submits what is typed there; clear it, or flume stop and flume retry.' },
    },
  },
  CANNOT_ATTACH: {
    exit: 1,
    message: "{place}'s agent has no pane this terminal can be put on ({where}).",
    fix: 'Start its stage again with flume retry, then attach.',
    variants: {
      elsewhere: { message: "{place}'s agent has no pane this terminal can be put on ({where}).", fix: 'Its command runs where the operator started it (flume status shows it).' },
      noAgent: { message: "{place}'s agent has no pane this terminal can be put on (no agent)." },
    },
  },
  CANNOT_GO_ON: {
    exit: 1,
    message: "{place}'s {stage} ends on {deliverable}, not a conclusion; go-on runs another round only of a question's session.",
    fix: 'Give its agent notes with flume tell, or start the stage afresh with flume retry (or another with flume stage).',
  },
  NO_PANE_HOST: {
    exit: 1,
    message: 'The pane host "{host}" the config names is not available here.',
    fix: 'Start {host}, or set agent.host to "auto" so flume picks what runs.',
    variants: {
      none: { message: 'No pane host is available to run an agent.', fix: 'Install or start a pane host a plugin provides (`flume doctor` lists them), or add one that hands the command to you.' },
      driverHost: { message: 'The agent "{agent}" runs only on the pane host "{host}", which no plugin provides.', fix: 'Add the plugin that provides the host "{host}", or name another agent.' },
    },
  },
  CONTAINER_UNUSABLE: {
    exit: 1,
    message: 'The container engine {engine} cannot run this place\'s agent: {said}',
    fix: 'Put the engine right (`flume doctor` checks it), or launch without a container.',
    variants: {
      remote: { message: '{variable} is set ({value}): {engine} would run the container on another machine, where the place\'s folders are not.', fix: 'Unset {variable} so {engine} runs containers on this machine, or launch on that machine with --host.' },
      missing: { message: 'The container engine {engine} is not installed here (not on PATH).', fix: 'Install {engine} (Debian: apt-get install {engine}), or name the engine that is installed in agent.container.engine.' },
      silent: { message: 'The container engine {engine} does not answer: {said}', fix: 'Run `{engine} version` and put right what it says, then launch again.' },
      noImage: { message: 'The image {image} is not on this machine ({engine} has no image of that name).', fix: 'Make or pull the image first (`{engine} pull {image}`, or `{engine} build`), then launch again; flume never pulls one itself.' },
      gitFolder: { message: 'In a container of {image}, git cannot read the repository at {folder}: {said}', fix: 'Use an image that has a shell (sh) and git on its PATH, and mount nothing over that folder\'s objects: the agent commits through a repository that borrows them.' },
      home: { message: 'A file written in {folder} inside a container of {image} is not seen on this machine.', fix: 'Use an engine whose mounts write through to this machine (not a remote one or a virtual machine without that folder shared).' },
      driver: { message: 'The stage {stage} of the kind {kind} runs the agent {agent}, whose driver does not run its agents in containers (it keeps their files outside the agent\'s home).', fix: 'Launch this kind without a container, or name an agent whose driver runs in containers (claude-code) for its stages.' },
      notMade: { message: 'The container for this place could not be made from {image}: {said}', fix: 'Run the image by hand with {engine} to see why, put it right, then retry.' },
      mount: { message: 'The mount {mount} in agent.container.mounts names no folder on this machine.', fix: 'Name an absolute path that exists here (`PATH`, or `PATH:ro` for read-only), or remove the entry, then launch again.' },
      user: { message: 'A container of {image} runs as the user {user}, which cannot write in the agent\'s home {folder} (made by this machine\'s user, mapped to root inside).', fix: 'Run the image as root (`USER root`, or no USER line): inside it is this machine\'s user, not the real root.' },
      identity: { message: 'git finds no identity to commit with in {repo}: an agent in a container commits as this machine\'s user, and its commits would fail.', fix: 'Set one (`git config --global user.name NAME` and `git config --global user.email EMAIL`), then launch again.' },
      proxy: { message: 'A container of {image} has no `node` on its PATH: under an allowlist (agent.container.network, by default the agents\' own endpoints) the way out of the container is a bridge to flume\'s proxy that node runs inside.', fix: 'Use an image with node (an image with Claude Code from npm has it), or set agent.container.network to `none` (nothing reached) or to an engine network by name, then launch again.' },
      diverged: { message: 'The container\'s repository holds commits of {branch} that the branch here cannot take ({said}); nothing was taken, and they are kept in {folder}.', fix: 'They are the agent\'s: look at them in its container (`{engine} exec -it {name} git log {branch}`), take what you want as a patch you have read, then remove {folder} and retry.' },
    },
  },
  NO_TARGET: {
    exit: 1,
    message: 'The main checkout of {repo} is on no branch, and nothing in the repository names the branch work lands on.',
    fix: 'Set `target` (the branch work lands on) in {config}, or check out that branch in the main checkout, then launch again.',
  },
  WATCH_RUNNING: {
    exit: 1,
    message: 'A flume watch already runs on this host.',
    fix: 'Nothing to do: it moves every place on. Stop it (kill its pid in the lock file) before starting another.',
  },
  BRIEF_MISSING: {
    exit: 1,
    message: 'The launch has no brief.',
    fix: 'Say what the work is with --brief TEXT or --brief-file FILE.',
    variants: {
      unreadable: { message: 'The brief file {file} cannot be read.', fix: 'Pass --brief-file a readable text file, or the brief itself with --brief.' },
    },
  },
  BAD_TEXT: {
    exit: 1,
    message: '{what} holds the control character {character} at line {line}, column {column}; it would be typed to the agent as a keystroke.',
    fix: 'Remove the control character (only newlines and tabs may stand in text sent to an agent), then run the command again.',
    variants: {
      command: { message: 'The text starts with {start}, which {agent} reads as its own command, never as words for its model; nothing was typed.', fix: 'Start the text with a word (a {start} later in it is words), then run the command again.' },
    },
  },
  UNKNOWN_HOST: {
    exit: 1,
    message: 'There is no host {host}.',
    fix: '`flume hosts` lists the hosts this flume knows; add one with flume hosts add NAME SSH-TARGET.',
    variants: {
      badName: { message: 'The host name {host} is not a safe name.', fix: 'Use 1 to 64 lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (not "local", which names this host).' },
      badTarget: { message: 'The ssh target {target} starts with "-".', fix: 'Name the target as ssh takes it (user@host or a ~/.ssh/config alias); put options such as -p in the alias.' },
      exists: { message: 'There is a host {host} already ({target}).', fix: 'Remove it first (flume hosts remove {host}), or add this one under another name.' },
      allHostsAlone: { message: '--all-hosts reads every host at once: only `flume status` takes it.', fix: 'Run flume status --all-hosts, or name one host with --host NAME.' },
      manyHosts: { message: 'Name one host for {command}: only `flume status` reads several at once.', fix: 'Give --host once (or HOST:kind/name), or run flume status --host A --host B.' },
    },
  },
  HOST_UNREACHABLE: {
    exit: 1,
    message: 'The host {host} ({target}) cannot be reached: {words}',
    fix: 'Check that `ssh -o BatchMode=yes {target} true` works from here (key authentication, the host key in known_hosts, the host up); nothing ran on this host instead.',
    variants: {
      dropped: { message: 'The connection to {host} ({target}) dropped before its flume answered: {words}', fix: 'The remote flume converges as after any crash; see where it stands with flume status --host {host}.' },
      timedOut: { message: 'The host {host} ({target}) did not answer within {seconds} s.', fix: 'Check that `ssh -o BatchMode=yes {target} true` answers from here; nothing ran on this host instead.' },
      noSsh: { message: 'ssh cannot be run here: {words}', fix: 'Install the OpenSSH client (ssh) on this host.' },
    },
  },
  HOST_VERSION_MISMATCH: {
    exit: 1,
    message: 'The host {host} runs flume {remote}; this host runs flume {local}.',
    fix: 'Install flume {local} on {host} (npm install -g flume@{local} there), or name the command that runs it with flume hosts add {host} {target} --flume COMMAND.',
    variants: {
      missing: { message: 'The host {host} ({target}) has no flume that answers `{command} --version --json`: {words}', fix: 'Install flume {local} on {host} (npm install -g flume@{local} there), or name the command that runs it with flume hosts add {host} {target} --flume COMMAND.' },
      relayed: { message: 'The other host runs flume {remote}; this command came from flume {local}, another minor version, and nothing ran there.', fix: 'Install flume {local} on that host (npm install -g flume@{local} there), or the same minor version of flume on both hosts.' },
    },
  },
  IO_FAILED: {
    exit: 1,
    message: "flume's state folder {dir} is open to others (mode {mode}) and cannot be made private.",
    fix: 'Make it yours and private (`chmod 700 {dir}`), or point FLUME_STATE_DIR at a folder of your own.',
    variants: {
      unexpected: { message: '{message}', fix: 'This is unexpected; run again, and report it with the command that failed if it persists.' },
      sluiceSchema: { message: "sluice-record.schema.json could not be read or written: it is not in the schemas folder beside flume's package.json.", fix: 'Reinstall flume: the schema ships with the package.' },
      herdr: { message: 'herdr could not {what}: {message}', fix: 'Check that herdr runs here (`herdr status server`).' },
      tmux: { message: 'tmux could not {what}: {message}', fix: 'Check that tmux runs here (`tmux -V`) and that the socket folder is writable.' },
    },
  },
} as const satisfies Record<string, CatalogueEntry>;

/** A code from the catalogue. */
export type CatalogueCode = keyof typeof ERROR_CATALOGUE;

/** The named wordings of a code besides its default. */
export type CatalogueVariant<C extends CatalogueCode> = C extends CatalogueCode ? ((typeof ERROR_CATALOGUE)[C] extends { variants: infer V } ? keyof V & string : never) : never;

/** What a `{word}` may be filled with. */
export type CatalogueValue = string | number | undefined;

/** The values a wording of a code needs: one for each `{word}` in its message and its fix. */
export type CatalogueValues<C extends CatalogueCode, V extends string> = { [K in WordsOf<C, V>]: CatalogueValue };

/** A code's wording: its default, or the named variant (a variant without a fix has the entry's). */
export function catalogueWording(code: CatalogueCode, variant = 'default'): CatalogueWording {
  const entry: CatalogueEntry = ERROR_CATALOGUE[code];
  if (variant === 'default') return { message: entry.message, fix: entry.fix };
  const named = entry.variants?.[variant];
  if (!named) throw new Error(`The error catalogue has no wording "${variant}" of ${code}.`);
  return { message: named.message, fix: named.fix ?? entry.fix };
}

/** The `{words}` of a shape, in order of first appearance. */
export function shapeWords(shape: string): string[] {
  return [...new Set([...shape.matchAll(/\{(\w+)\}/g)].map((match) => match[1]))];
}

/** A shape with every `{word}` filled from `values`; a word without a value is a mistake in the caller, and throws. */
export function fillShape(shape: string, values: Record<string, unknown>, code: string): string {
  return shape.replace(/\{(\w+)\}/g, (_whole, word: string) => {
    if (!(word in values)) throw new Error(`${code}: no value for {${word}} in "${shape}".`);
    return String(values[word]);
  });
}

/**
 * A catalogue message with its `{words}` filled from `values` (a word without a value stays as
 * written, so a missing value shows rather than vanishes).
 */
export function catalogueMessage(code: CatalogueCode, values: Record<string, string | number> = {}): string {
  return ERROR_CATALOGUE[code].message.replace(/\{(\w+)\}/g, (whole, word: string) => (word in values ? String(values[word]) : whole));
}

type Entry<C extends CatalogueCode> = (typeof ERROR_CATALOGUE)[C];
type Named<C extends CatalogueCode, V extends string> = Entry<C> extends { variants: infer Vs } ? (V extends keyof Vs ? Vs[V] : never) : never;
type MessageOf<C extends CatalogueCode, V extends string> = (V extends 'default' ? Entry<C> : Named<C, V>) extends { message: infer M extends string } ? M : never;
type FixOf<C extends CatalogueCode, V extends string> = V extends 'default' ? EntryFix<C> : Named<C, V> extends { fix: infer F extends string } ? F : EntryFix<C>;
type EntryFix<C extends CatalogueCode> = Entry<C> extends { fix: infer F extends string } ? F : never;
type WordsOf<C extends CatalogueCode, V extends string> = C extends CatalogueCode ? (V extends string ? Words<MessageOf<C, V>> | Words<FixOf<C, V>> : never) : never;
/** The `{word}`s of a string literal type; a brace holding anything but a word (`{ replace: true }`) is text. */
type Words<S extends string> = S extends `${string}{${infer W}}${infer R}` ? (W extends '' | `${string}${' ' | '{' | '"' | ':' | '.'}${string}` ? Words<R> : W | Words<R>) : never;
