/**
 * Counting a tasks.md as the `openspec` CLI counts it. flume reads a change at one commit and so
 * parses the committed file itself; what it reports must agree with `openspec list` on the same
 * content (DESIGN.md "Deliverables"), so this is a copy of the CLI's grammar, not a reading of ours.
 */

/**
 * `TASK_LINE_PATTERN` of @fission-ai/openspec 1.13.2 (`dist/utils/task-progress.js`), byte for byte.
 * Older grammars (`[-*]` only, column 0, `[ xX]` only) disagree with it on ordinary files. Kept
 * without the `u` flag on purpose: the CLI's box holds one UTF-16 code unit, so `[😀]` is no task.
 * Unanchored at the end because `.` stops at `\r`: a CRLF file still counts.
 */
const TASK_LINE = /^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)/;

/**
 * Counts the tasks of a tasks.md exactly as `openspec` 1.13.2 does (`openspec list`, `status`,
 * `archive`): every `\n`-separated line is tested on its own, inside code fences and HTML comments
 * too; any list marker (`-`, `*`, `+`, `1.`, `1)`) at any indent; a box holds at most one mark
 * (`[ ]`, `[x]`, `[]`, `[~]`, `[ x ]`); only `x`/`X` is done; a box followed by `(` or `[` is a
 * link, unless the box holds only whitespace (`- [ ](…)` is an open task, as the CLI has it).
 *
 * @param text The content of a tasks.md (a missing file is 0 of 0: pass `''`).
 * @returns How many tasks are ticked, of how many.
 * @example countTasks('- [x] a\n- [ ] b\n') // { done: 1, total: 2 }
 */
export function countTasks(text: string): { done: number; total: number } {
  let done = 0;
  let total = 0;
  for (const line of text.split('\n')) {
    const match = TASK_LINE.exec(line);
    if (!match) continue;
    total++;
    // The CLI lower-cases the mark and compares with "x"; only X lower-cases to x.
    if ((match[1] ?? '').toLowerCase() === 'x') done++;
  }
  return { done, total };
}
