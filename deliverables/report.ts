/**
 * The `report` deliverable: verify's report, committed at the head, with its verdict.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type FlumePlugin } from '../core/index.js';
import { createHash } from 'node:crypto';
import { fileOption } from './file-option.js';
import { changeFolder, changeId } from './openspec.js';

const NAME = 'flume:deliverable:report';

/** A verify report's verdict: `pass` moves on, `fix` sends the place back to code. */
export type Verdict = 'pass' | 'fix';

/** The one line a report must end with, as the verify prompt shows it. */
export const VERDICT_LINES = ['Verdict: pass', 'Verdict: fix'] as const;

/**
 * What a report's verdict reads as: a verdict, or why there is none. `line` is the verdict line read
 * (as written, trimmed); `reason` says in a person's words why no verdict could be read.
 */
export type VerdictReading =
  | { verdict: Verdict; line: string }
  | { problem: 'no-verdict' | 'ambiguous-verdict' | 'unreadable-verdict'; line?: string; reason: string };

/**
 * Reads a report's verdict. How forgiving it is:
 *
 * - A verdict line is a line whose first word is `verdict` followed by a colon, in any case,
 *   optionally as a heading, a list item or a quote, with bold, italic or code marks anywhere on it.
 * - Its verdict is the first word after the colon (emoji and other marks before it are skipped):
 *   `pass` or `fix`, any case. Words, numbers and emoji may follow: `Verdict: pass (2 of 2 tasks
 *   verified)` and `**Verdict: PASS** ✅` both read `pass`.
 * - The LAST verdict line is the verdict (the prompt asks for it as the last line; an earlier
 *   summary or a first draft above it does not count). Lines in code fences are skipped: a report
 *   that shows the format in an example has not given a verdict by it.
 * - Refused, with a reason, rather than guessed: a last verdict line that names both `pass` and
 *   `fix` as words (a template's `Verdict: pass | fix`, or `Verdict: pass, nothing to fix`), or one
 *   whose word is neither (`Verdict: passed`, `Verdict: pending`, `Verdict:`); and a report with no
 *   verdict line at all. `Verdict — pass`, `The verdict: pass` and a `## Verdict` heading with the
 *   word on the next line are no verdict lines.
 */
export function readVerdict(text: string): VerdictReading {
  const line = verdictLines(text).at(-1);
  if (line === undefined) {
    return { problem: 'no-verdict', reason: `it has no verdict line; its last line must be "${VERDICT_LINES[0]}" or "${VERDICT_LINES[1]}"` };
  }
  return judge(line);
}

/**
 * The verdicts of a report, in order, one per verdict line that reads as one (see `readVerdict` for
 * what a verdict line is). The report's verdict is the last of them, and only when its line is the
 * last verdict line.
 */
export function readVerdicts(text: string): Verdict[] {
  return verdictLines(text).flatMap((line) => {
    const reading = judge(line);
    return 'verdict' in reading ? [reading.verdict] : [];
  });
}

/**
 * Reads verify's deliverable: `openspec/changes/<id>/verify.md` at the head (the stage option
 * `path` names another file, relative to the repository root). Present when the file's last verdict
 * line reads (see `readVerdict`); `facts.verdict` is `pass` or `fix`, `what` is `verify.md: pass`.
 * Absent otherwise, with `facts.problem` (`missing`, `no-verdict`, `ambiguous-verdict`,
 * `unreadable-verdict`) and, when the file is there, `problem` saying why in a person's words, which
 * status shows beside the stage.
 */
export function reportDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        defineDeliverable({
          type: 'report',
          variables: (context) => ({ change: changeId(context, NAME) }),
          async read(request): Promise<DeliverableReading> {
            const path = fileOption(request, NAME, () => `${changeFolder(changeId(request, NAME))}/verify.md`);
            const text = await request.file(path);
            if (text === undefined) return { present: false, facts: { path, problem: 'missing' } };
            const reading = readVerdict(text);
            const file = path.split('/').pop();
            if (!('verdict' in reading)) {
              return { present: false, problem: `${file} has no verdict flume can read: ${reading.reason}`, facts: { path, problem: reading.problem, ...(reading.line ? { line: reading.line } : {}) } };
            }
            // The digest tells a new report from one a stage found already there when it began.
            const digest = createHash('sha1').update(text).digest('hex');
            return { present: true, what: `${file}: ${reading.verdict}`, facts: { path, verdict: reading.verdict, digest }, ...(reading.verdict === 'fix' ? { sendBack: true } : {}) };
          },
        }),
      );
    },
  });
}

/** The verdict lines outside code fences, in order: each as written, and what follows its colon. */
function verdictLines(text: string): VerdictLine[] {
  const lines: VerdictLine[] = [];
  let fence: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (opener && (!fence || (opener[0] === fence[0] && opener.length >= fence.length))) {
      fence = fence ? undefined : opener;
      continue;
    }
    if (fence) continue;
    // Emphasis and code marks may sit anywhere around the words; dropping them first keeps one pattern.
    const plain = raw.replace(/\*\*|__|`|(?<![\p{L}\p{N}])[*_]|[*_](?![\p{L}\p{N}])/gu, '');
    const match = /^ {0,3}(?:(?:#{1,6}|[-+>]|\d{1,3}[.)])[ \t]*)*verdict\s*:(.*)$/i.exec(plain);
    if (match) lines.push({ written: clip(raw.trim()), after: match[1] });
  }
  return lines;
}

function judge({ written, after }: VerdictLine): VerdictReading {
  const word = /^[^\p{L}\p{N}]*([\p{L}\p{N}]+)/u.exec(after)?.[1]?.toLowerCase();
  if (word !== 'pass' && word !== 'fix') {
    return { problem: 'unreadable-verdict', line: written, reason: `its last verdict line "${written}" says neither pass nor fix; write "${VERDICT_LINES[0]}" or "${VERDICT_LINES[1]}"` };
  }
  const other = word === 'pass' ? 'fix' : 'pass';
  const rest = after.slice(after.toLowerCase().indexOf(word) + word.length);
  if (new RegExp(`(?<![\\p{L}\\p{N}])${other}(?![\\p{L}\\p{N}])`, 'iu').test(rest)) {
    return { problem: 'ambiguous-verdict', line: written, reason: `its last verdict line "${written}" names both pass and fix; write "${VERDICT_LINES[0]}" or "${VERDICT_LINES[1]}" alone` };
  }
  return { verdict: word, line: written };
}

interface VerdictLine {
  written: string;
  after: string;
}

function clip(line: string): string {
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
