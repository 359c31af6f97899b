/**
 * The `conclusion` deliverable: a question's session ends on `conclusion.md` in its place.
 */
import { defineDeliverable, definePlugin, type DeliverableReading, type FlumePlugin } from '../core/index.js';
import { createHash } from 'node:crypto';
import { fileOption } from './file-option.js';

const NAME = 'flume:deliverable:conclusion';

/**
 * Reads a question session's deliverable: `conclusion.md` (the stage option `path` names another
 * file), present when it holds more than whitespace. The committed file at the head is read first;
 * `sounding conclude` writes the file without necessarily committing it, so the working tree is read
 * when the head has none. That is the one reading off the head, and it can only find a file that
 * is there now. Facts: `path`, `committed` (whether the file read was the committed one), `digest` (of
 * its content) and `written` (when the working tree's file holding that content was last written).
 * `written` is what tells a new round's conclusion from the last round's when both say the same: a
 * round that writes the file again has concluded, though its digest is the same.
 */
export function conclusionDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      flume.deliverables.add(
        defineDeliverable({
          type: 'conclusion',
          // A conclusion is what another round adds to: flume go-on runs one in the same place.
          rounds: true,
          async read(request): Promise<DeliverableReading> {
            const path = fileOption(request, NAME, () => 'conclusion.md');
            const [committed, working] = await Promise.all([request.file(path), request.workingFile(path)]);
            const read = hasText(committed) ? committed : hasText(working) ? working : undefined;
            if (read === undefined) {
              const empty = committed !== undefined || working !== undefined;
              return { present: false, facts: { path, ...(empty ? { problem: 'empty' } : {}) } };
            }
            // The working file is the one a round writes (committed or not); it dates the content read
            // only while it holds that content.
            const written = working === read ? await request.workingFileWritten(path) : undefined;
            const isCommitted = read === committed;
            return {
              present: true,
              what: isCommitted ? `${path} (committed)` : path,
              facts: { path, committed: isCommitted, digest: digest(read), ...(written ? { written } : {}) },
            };
          },
        }),
      );
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
