import type { FlumePlugin } from '../core/index.js';
import { changeKindPlugin } from './change.js';
import { declaredKindsPlugin } from './declared.js';
import { fixKindPlugin } from './fix.js';
import { questionKindPlugin } from './question.js';

export { changeKind } from './change.js';
export { fixKind } from './fix.js';
export { questionKind } from './question.js';

/** The built-in kinds, then the repository's own (which come last so they may replace a built-in). */
export function kindPlugins(): FlumePlugin[] {
  return [fixKindPlugin(), changeKindPlugin(), questionKindPlugin(), declaredKindsPlugin()];
}
