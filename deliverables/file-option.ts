/**
 * The `path` option a file deliverable may take, shared by the readers that read one file.
 */
import { FlumeError, type DeliverableRequest } from '../core/index.js';

/**
 * The file a reader reads: the stage's `path` option, else `fallback()`. The path is relative to the
 * place (its repository root at the head); one that leaves it is BAD_CONFIG, since git would read
 * it nowhere and the stage could never end.
 */
export function fileOption(request: DeliverableRequest, plugin: string, fallback: () => string): string {
  const option = request.options.path;
  if (option === undefined) return fallback();
  if (typeof option === 'string' && option.trim() !== '' && !option.startsWith('/') && !option.split('/').includes('..')) {
    return option.replace(/^(\.\/)+/, '');
  }
  throw new FlumeError('BAD_CONFIG', `The deliverable path ${JSON.stringify(option)} is not a file inside the place.`, {
    fix: 'Give the stage\'s deliverable a "path" relative to the place, such as "docs/verify.md".',
    details: { path: option, place: request.place.id, stage: request.stage.name },
    plugin,
    hook: 'readDeliverable',
  });
}
