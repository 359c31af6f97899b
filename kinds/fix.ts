import { defineKind, definePlugin } from '../core/index.js';
import { FIX_CODE, SUBMISSION } from './prompts.js';

/** A fix: work that needs no design of its own. Its code stage commits; its submission lands. */
export const fixKind = defineKind({
  name: 'fix',
  description: 'Work that needs no design of its own: code, then submission.',
  // A fix is how a broken branch is repaired, so its agent starts even when readying failed.
  whenNotReady: 'start',
  stages: [
    { name: 'code', prompt: FIX_CODE, deliverable: 'commit' },
    { name: 'submission', prompt: SUBMISSION, deliverable: 'landing' },
  ],
});

/** Registers the kind `fix`. */
export const fixKindPlugin = () =>
  definePlugin({ name: 'flume:kind:fix', apply: (flume) => flume.kinds.add(fixKind) });
