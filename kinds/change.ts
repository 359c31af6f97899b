import { defineKind, definePlugin } from '../core/index.js';
import { CHANGE_CODE, CHANGE_CONSTRUCT, CHANGE_FIX, CHANGE_SUBMISSION, CHANGE_VERIFY } from './prompts.js';

/** A change: work that needs an OpenSpec change first. construct → code → verify → submission. */
export const changeKind = defineKind({
  name: 'change',
  description: 'Work that needs an OpenSpec change first: construct, code, verify, submission.',
  whenNotReady: 'refuse',
  stages: [
    { name: 'construct', prompt: CHANGE_CONSTRUCT, deliverable: 'openspec-change' },
    { name: 'code', prompt: CHANGE_CODE, fixPrompt: CHANGE_FIX, deliverable: 'openspec-tasks' },
    { name: 'verify', prompt: CHANGE_VERIFY, deliverable: 'report' },
    { name: 'submission', prompt: CHANGE_SUBMISSION, deliverable: 'landing' },
  ],
});

/** Registers the kind `change`. */
export const changeKindPlugin = () =>
  definePlugin({ name: 'flume:kind:change', apply: (flume) => flume.kinds.add(changeKind) });
