import { defineKind, definePlugin } from '../core/index.js';
import { QUESTION_SESSION } from './prompts.js';

/** A question: one session that ends on conclusion.md; nothing lands from it. */
export const questionKind = defineKind({
  name: 'question',
  description: 'One question worked in one session; ends on conclusion.md.',
  whenNotReady: 'refuse',
  stages: [{ name: 'session', prompt: QUESTION_SESSION, deliverable: 'conclusion' }],
});

/** Registers the kind `question`. */
export const questionKindPlugin = () =>
  definePlugin({ name: 'flume:kind:question', apply: (flume) => flume.kinds.add(questionKind) });
