import { describe, it, expect } from 'vitest';
import { describe as words } from '../../../core/cli/commands/launch.js';
import type { Action } from '../../../core/engine/stage/decide.js';

describe("launch's progress words", () => {
  const actions: Action[] = [
    { type: 'wait', reason: 'the agent is working' },
    { type: 'start-stage', index: 0, reason: 'the place is made' },
    { type: 'start-stage', index: 1, reason: 'verify asks for fixes', fixRound: true },
    { type: 'stop-agent', reason: 'code delivered commit 1a2b3c4' },
    { type: 'mark-delivered', what: 'commit 1a2b3c4' },
    { type: 'mark-taken' },
    { type: 'send-again' },
    { type: 'note-held' },
    { type: 'mark-delivery', delivery: 'unknown' },
    { type: 'mark-delivery', delivery: 'never-started' },
    { type: 'mark-waiting', needs: 'I need the API key.' },
    { type: 'clear-waiting' },
    { type: 'mark-stuck', since: '2026-11-30T11:00:00.000Z' },
    { type: 'mark-over-budget', tokens: 1_200_000, limit: 1_000_000 },
    { type: 'stop-over-budget', reason: 'code used 1200000 tokens, over its budget of 1000000' },
    { type: 'mark-not-ready' },
    { type: 'finish' },
  ];
  it.each(actions)('say $type in words, with what it carries', (action) => {
    const line = words(action);
    expect(line).not.toContain(action.type);
    expect(line.split(' ').length).toBeGreaterThan(1);
    for (const value of Object.entries(action).filter(([key]) => ['what', 'needs', 'reason', 'since'].includes(key)).map(([, v]) => v)) {
      // A start's reason is the supervisor's; the rest say what they carry.
      if (action.type !== 'start-stage' && action.type !== 'wait') expect(line).toContain(value);
    }
  });
});
