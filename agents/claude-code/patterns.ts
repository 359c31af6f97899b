/**
 * Everything flume recognises in Claude Code's screen and transcript, as data, in a table keyed by
 * version range. Claude Code's formats are internal and change between versions: when one changes,
 * this file gets a row and the readers (screen.ts, transcript.ts) do not change. The driver picks
 * the row by the version the agent's program reports (`claude --version`, once per binary).
 * Checked against Claude Code 2.1.332, 2.1.300 and 2.1.250 (scripted runs, test/fixtures/claude-<v>/),
 * 2.1.332's own bundled code, real 2.1.29x screen captures, and real 2.1.38/2.1.39 and 1.0.98 transcripts.
 */

/** The shape of the pattern table, so a test or a plugin can pass its own. */
export interface ClaudeCodePatterns {
  /** The Claude Code version these were checked against. */
  version: string;
  screen: {
    /** Terminal escape sequences (a capture taken with `capture-pane -e`); removed before reading. */
    ansi: RegExp;
    /** A horizontal rule of `─` around the input box (a label may sit inside it). */
    rule: RegExp;
    /** The input line: `❯` then the draft (group 1). */
    input: RegExp;
    /** An input line that is really a highlighted menu option (`❯ 1. Yes`): never the input box. */
    menuOption: RegExp;
    /**
     * The footer's second render, under the box: only then does an Enter reach the agent (2.1.332
     * draws the box 70–200 ms before it, and loses an Enter sent in between). An empty box shows it.
     */
    readyFooter?: RegExp;
    /** Where the footer never shows `readyFooter` (a draft in the box hides it): wait this long, then look again. */
    readySettleMs: number;
    /** How many lines a draft may span before the box's bottom rule. */
    maxDraftLines: number;
    /** Dim hints shown in an empty input box; capture-pane without -e cannot tell them from text. */
    placeholders: RegExp[];
    /** The spinner line of a working agent: `✻ Cogitating… (12s · ↓ 928 tokens)`. */
    spinner: RegExp;
    /**
     * Optional: a line above the box that says a sent prompt, echoed above it, is held before the
     * transcript has it: a `UserPromptSubmit` hook running (`(running UserPromptSubmit hook · 12s)`),
     * or the prompt queued behind a turn (`⎿  Queued · ctrl+x ctrl+s to send now`).
     */
    held?: RegExp;
    /** A long paste stands in the input box as this placeholder, not as its text. */
    pastedDraft: RegExp;
    /** Older builds print this in the footer while working. */
    interruptHint: RegExp;
    /** How far above the input box the spinner may sit (a todo list can stand between them). */
    spinnerLookback: number;
    /** Markers that decide a dialog: the lowest marker on screen names the open dialog. */
    trust: RegExp[];
    question: RegExp[];
    /** A permission prompt needs both its question line and a numbered `Yes` option. */
    permissionAsk: RegExp;
    permissionOption: RegExp;
    /**
     * The header a permission dialog opens with, and the tool it names: the dialog is drawn in one
     * frame, header first, so the screen names the tool as soon as it shows the dialog (the
     * transcript's tool_use line can come later).
     */
    permissionTools?: Array<[RegExp, string]>;
  };
  transcript: {
    /** The tool whose open call is a question to the operator. */
    askTool: string;
    /** `system` subtypes written when a turn has ended. */
    turnEnd: string[];
    /** The stop reason of an assistant line that ended its turn (newer builds write it). */
    endStop: string;
    /** The user line written when the operator interrupts a turn (Esc, or a rejected tool). */
    interrupted: RegExp;
    /** User lines that are a local command's echo or output, not a prompt. */
    localOutput: RegExp;
    /** The echo of a slash command; a prompt unless its local output follows. */
    commandEcho: RegExp;
    /** A long paste as the transcript keeps it: `<pasted_content id="ab12">\n…\n</pasted_content …>`. */
    pasteBlock: RegExp;
    /** Queue operations that take a queued prompt back out (edited, dropped): its enqueue no longer counts. */
    queueRevoke: string[];
    /**
     * What a TAB in a pasted prompt is recorded as (and sent to the model as). A typed TAB is a key,
     * not text, so the driver sends this in its place: what is sent is then what is recorded.
     */
    tab: string;
    /**
     * What a prompt must not start with: at the start of its input box these make it something else
     * than a prompt, pasted or typed (`!` a shell command it runs, `@` a file's menu, `#` a memory in
     * older builds). The driver sends such a text with one space before it, which the box and the
     * transcript keep: the words reach the model, and nothing runs.
     */
    keyStart: RegExp;
    /**
     * The user line of a prompt can be written after its reply and turn end (2.1.250 and 2.1.300 do
     * so for a session's first prompt when the reply is quick; 2.1.332 was never seen to): read
     * backwards, a prompt older than a turn end already read belongs to that turn, not to a new one.
     */
    latePrompt?: boolean;
  };
}

/** The patterns for Claude Code 2.1.332, the newest version checked (and the default for an unknown one). */
export const claudeCodePatterns: ClaudeCodePatterns = {
  version: '2.1.332',
  screen: {
    // CSI (colours, cursor) and OSC (titles, hyperlinks) sequences.
    ansi: /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]/g,
    rule: /^\s*─{3,}(?:.*─{3,})?\s*$/,
    // 2.1.332 draws the box's `❯` with a no-break space after it; echoes of sent prompts use a plain one.
    input: /^\s*❯(?:[ \u00a0](.*))?$/,
    menuOption: /^\s*❯\s*\d+\.\s/,
    maxDraftLines: 60,
    readyFooter: /← for agents/,
    readySettleMs: 300,
    // 2.1.332 builds the hint as `Try "<example>"` (its examples end in "?" or "…" too).
    placeholders: [/^Try ".*"$/, /^Press up to edit queued messages$/],
    // Glyphs of the spinner frames in 2.1.332: · ✢ ✳ ✶ ✻ ✽ and `*` where the font lacks them. A
    // finished turn's `✻ Worked for 2m 3s` has no ellipsis, so it does not match.
    spinner: /^\s*[·✢✳✶✻✽*]\s+\p{Lu}[\p{L}'-]*(?:\s[\p{L}'-]+)*…/u,
    pastedDraft: /^\[Pasted text #\d+(?: \+\d+ lines)?\]/,
    // 2.1.332, with a UserPromptSubmit hook slower than flume's prompt timeout (the hostile pass).
    held: /\(running \S+ hooks?\b|^\s*⎿\s+Queued\b/,
    interruptHint: /\besc to interrupt\b/i,
    spinnerLookback: 12,
    trust: [/Quick safety check/, /Yes, I trust this folder/],
    question: [
      // The header: `☐ Fruit`, or the tab row `←  ☐ Fruit  ✔ Submit  →` of several questions.
      /^\s*(?:←\s+)?[☐☒]\s+\S/,
      // The free-answer and chat entries every question menu ends with.
      /^\s*(?:❯\s*)?\d+\.\s+(?:\[[ x×]\]\s+)?Type something\.?\s*$/,
      /^\s*(?:❯\s*)?\d+\.\s+Chat about this\s*$/,
      /\bTab\/Arrow keys to navigate\b/,
    ],
    // `Do you want to proceed?`, `Do you want to create notes.md?`; a plan review's `… Would you like to proceed?`.
    permissionAsk: /^\s*(?:Do you want to .+\?|.*\bWould you like to proceed\?)\s*$/,
    permissionOption: /^\s*(?:❯\s*)?1\.\s+Yes\b/,
    // `Bash command` as 2.1.250, 2.1.300 and 2.1.332 draw it (test/fixtures/claude-<v>/screens/permission-bash.txt);
    // `Create file`, a Write, from 2.1.332's strings.
    permissionTools: [
      [/^\s*Bash command\s*$/, 'Bash'],
      [/^\s*Create file\s*$/, 'Write'],
    ],
  },
  transcript: {
    askTool: 'AskUserQuestion',
    turnEnd: ['turn_duration', 'stop_hook_summary'],
    endStop: 'end_turn',
    interrupted: /^\[Request interrupted by user[^\]]*\]/,
    localOutput: /^\s*<(?:local-command-stdout|local-command-stderr|local-command-caveat)>/,
    commandEcho: /^\s*<command-(?:name|message)>/,
    pasteBlock: /\n{0,2}<pasted_content\b[^>\n]*>\n?([\s\S]*?)\n?<\/pasted_content\b[^>\n]*>\n{0,2}/g,
    queueRevoke: ['remove', 'popAll', 'popOne'],
    // 2.1.332: four spaces wherever the TAB stands (not to a tab stop); a typed TAB is dropped (it
    // shows `Use alt+t to toggle thinking`). test/fixtures/claude-2.1.332/transcripts/tabs.jsonl.
    tab: '    ',
    // 2.1.332: a pasted `!touch x` ran `touch x` (its transcript a `<bash-input>`), `@touch …` was
    // left in the box; each with a space before it reached the model as sent, the space kept (the
    // conformance kit's `characters` check). `/` is refused instead (driver.ts): ` /init …` ran `/init`.
    keyStart: /^[!#@?]/,
  },
};

/** One row of the table: the patterns for versions from `from` up to the next row's `from`. */
export interface PatternRange {
  /** The oldest version of the range (inclusive); the oldest row also takes every older version. */
  from: string;
  patterns: ClaudeCodePatterns;
}

/**
 * The table, newest range first. A row starts at the version it was checked on; a version between
 * two checked ones takes the older row's patterns (the last one known to precede it). Where a
 * version's screens and records match the next row's, its row repeats that row's patterns under
 * its own version, so the table still says it was checked.
 */
export const claudeCodePatternTable: PatternRange[] = [
  { from: '2.1.332', patterns: claudeCodePatterns },
  {
    from: '2.1.300',
    patterns: { ...claudeCodePatterns, version: '2.1.300', transcript: { ...claudeCodePatterns.transcript, latePrompt: true } },
  },
  {
    from: '2.1.250',
    // 2.1.250 names no hook and no queue: while a prompt hook runs on the text it shows only its
    // spinner under the echo, and a second sending stands echoed, indented, under it.
    patterns: { ...claudeCodePatterns, version: '2.1.250', screen: { ...claudeCodePatterns.screen, held: claudeCodePatterns.screen.spinner }, transcript: { ...claudeCodePatterns.transcript, latePrompt: true } },
  },
];

/**
 * The patterns for the version an agent's program reports (`2.1.300`, or `--version`'s whole line
 * `2.1.300 (Claude Code)`). An unknown or unreadable version gets the newest patterns.
 */
export function patternsFor(version: string | undefined, table: PatternRange[] = claudeCodePatternTable): ClaudeCodePatterns {
  const wanted = parseVersion(version);
  const newest = table[0]!.patterns;
  if (!wanted) return newest;
  for (const row of table) if (compareVersions(wanted, parseVersion(row.from)!) >= 0) return row.patterns;
  return table[table.length - 1]!.patterns;
}

/** The leading `major.minor.patch` of a version string, as numbers; undefined when there is none. */
export function parseVersion(version: string | undefined): [number, number, number] | undefined {
  const match = /^\s*v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Orders two parsed versions: negative, zero or positive as `a` is older, the same or newer. */
export function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}
