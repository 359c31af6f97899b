/**
 * The `report` deliverable: verify's report, committed at the head, with its verdict.
 */
import type { DeliverableReading } from '../core/hooks.js';
import { definePlugin, type FlumePlugin } from '../core/plugin.js';
import { createHash } from 'node:crypto';
import { fileOption } from './file-option.js';
import { changeFolder, changeId } from './openspec.js';

const NAME = 'flume:deliverable:report';

/** A verify report's verdict: `pass` moves on, `fix` sends the place back to code. */
export type Verdict = 'pass' | 'fix';

/**
 * A verdict line: `Verdict: pass` or `Verdict: fix`, any case, optionally as a heading, a list item
 * or a quote, with bold or italic around the word, the colon or the verdict. Nothing may follow
 * but punctuation, so a template's `Verdict: pass | fix` is no verdict.
 */
const VERDICT_LINE = /^ {0,3}(?:#{1,6}\s+|[-*+>]\s+)?verdict\s*:\s*(pass|fix)\s*[.!]?$/i;

/**
 * The verdicts of a report, in order, one per verdict line. Lines inside code fences are skipped:
 * a report that shows the format in an example has not given a verdict by it.
 */
export function readVerdicts(text: string): Verdict[] {
  const verdicts: Verdict[] = [];
  let fence: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (opener && (!fence || (opener[0] === fence[0] && opener.length >= fence.length))) {
      fence = fence ? undefined : opener;
      continue;
    }
    if (fence) continue;
    // Emphasis may sit anywhere around the words; dropping its markers first keeps one pattern.
    const match = VERDICT_LINE.exec(raw.replace(/\*\*|__|(?<![\w])[*_]|[*_](?![\w])/g, '').trimEnd());
    if (match) verdicts.push(match[1].toLowerCase() as Verdict);
  }
  return verdicts;
}

/**
 * Reads verify's deliverable: `openspec/changes/<id>/verify.md` at the head (the stage option
 * `path` names another file, relative to the repository root). Present when the file holds a
 * verdict; `facts.verdict` is `pass` or `fix`, `what` is `verify.md: pass`. A report with no verdict
 * line, or with lines that disagree, is absent with `facts.problem` naming which.
 */
export function reportDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.hooks.readDeliverable.for('report').tapPromise(NAME, async (request): Promise<DeliverableReading> => {
        const path = fileOption(request, NAME, () => `${changeFolder(changeId(request, NAME))}/verify.md`);
        const text = await request.file(path);
        if (text === undefined) return { present: false, facts: { path, problem: 'missing' } };
        const verdicts = [...new Set(readVerdicts(text))];
        if (verdicts.length === 0) return { present: false, facts: { path, problem: 'no-verdict' } };
        // Two verdicts that disagree tell flume neither to move on nor to send back: the operator reads it.
        if (verdicts.length > 1) return { present: false, facts: { path, problem: 'verdicts-disagree', verdicts } };
        const verdict = verdicts[0];
        // The digest tells a new report from one a stage found already there when it began.
        const digest = createHash('sha1').update(text).digest('hex');
        return { present: true, what: `${path.split('/').pop()}: ${verdict}`, facts: { path, verdict, digest } };
      });
    },
  });
}
