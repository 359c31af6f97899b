/**
 * The `conclusion` deliverable: a question's session ends on `conclusion.md` in its place.
 */
import type { DeliverableReading } from '../core/hooks.js';
import { definePlugin, type FlumePlugin } from '../core/plugin.js';
import { createHash } from 'node:crypto';
import { fileOption } from './file-option.js';

const NAME = 'flume:deliverable:conclusion';

/**
 * Reads a question session's deliverable: `conclusion.md` (the stage option `path` names another
 * file), present when it holds more than whitespace. The committed file at the head is read first;
 * `sounding conclude` writes the file without necessarily committing it, so the working tree is read
 * when the head has none. That is the one reading off the head, and it can only find a file that
 * is there now. Facts: `path`, `committed` (whether the file read was the committed one), `digest` (of its content).
 */
export function conclusionDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.hooks.readDeliverable.for('conclusion').tapPromise(NAME, async (request): Promise<DeliverableReading> => {
        const path = fileOption(request, NAME, () => 'conclusion.md');
        const committed = await request.file(path);
        if (hasText(committed)) return { present: true, what: `${path} (committed)`, facts: { path, committed: true, digest: digest(committed) } };
        const working = await request.workingFile(path);
        if (hasText(working)) return { present: true, what: path, facts: { path, committed: false, digest: digest(working) } };
        const empty = committed !== undefined || working !== undefined;
        return { present: false, facts: { path, ...(empty ? { problem: 'empty' } : {}) } };
      });
    },
  });
}

/** A digest of the content, so a new round's conclusion is told from the last round's. */
function digest(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function hasText(text: string | undefined): text is string {
  return text !== undefined && text.trim() !== '';
}
