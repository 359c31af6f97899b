/**
 * The `path` option a file deliverable may take, shared by the readers that read one file.
 */
import { flumeError, type DeliverableRequest } from '../core/index.js';

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
  throw flumeError('BAD_CONFIG', { path: JSON.stringify(option) }, {
    variant: 'deliverablePath',
    details: { path: option, place: request.place.id, stage: request.stage.name },
    plugin,
    hook: 'readDeliverable',
  });
}
