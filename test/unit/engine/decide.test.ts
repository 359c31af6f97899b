import { describe, expect, it } from 'vitest';
import { decide, fingerprint, type Facts } from '../../../core/engine/stage/decide.js';
import type { KindDef } from '../../../core/api/config.js';
import type { PlaceRecord, StageRecord } from '../../../core/api/record.js';

const kind: KindDef = {
  name: 'change',
  stages: [
    { name: 'construct', prompt: 'p', deliverable: 'openspec-change' },
    { name: 'code', prompt: 'p', deliverable: 'openspec-tasks' },
    { name: 'verify', prompt: 'p', deliverable: 'report' },
    { name: 'submission', prompt: 'p', deliverable: 'landing' },
  ],
};
const limits = { stuckAfterMs: 60_000, promptTimeoutMs: 10_000, fixRounds: 2 };
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function place(stage?: Partial<StageRecord>, extra: Partial<PlaceRecord> = {}): PlaceRecord {
  return {
    version: 1,
    id: 'change/x',
    kind: 'change',
    name: 'x',
    repo: '/r',
    path: '/r/places/change--x',
    branch: 'change/x',
    target: 'main',
    base: 'b',
    brief: 'do',
    createdAt: at(0),
    phase: 'made',
    ready: { state: 'none', at: at(0) },
    history: [],
    ...(stage
      ? {
          stage: {
            name: 'construct',
            index: 0,
            startedAt: at(0),
            startHead: 'b',
            attempt: 1,
            delivery: 'taken',
            sends: 1,
            prompt: 'p',
            lastSentAt: at(0),
            agent: { driver: 'claude-code', sessionId: 's', host: 'tmux', pane: '%1', cwd: '/r', startedAt: at(0) },
            ...stage,
          },
        }
      : {}),
    ...extra,
  };
}

const working = { state: 'working' as const, lastActivity: at(1000) };
const facts = (f: Partial<Facts> = {}): Facts => ({ now: T0 + 2000, agent: working, ...f });

describe('decide', () => {
  it('starts the first stage of a made place', () => {
    expect(decide(kind, place(), facts(), limits)).toMatchObject({ type: 'start-stage', index: 0 });
  });

  it('starts no stage in a place launched with --no-start, and nothing else changes once a stage runs', () => {
    const manual = { launched: { start: false, watch: true } };
    expect(decide(kind, place(undefined, manual), facts(), limits)).toMatchObject({ type: 'wait', reason: expect.stringContaining('--no-start') });
    expect(decide(kind, place(undefined, { launched: { start: true, watch: false } }), facts(), limits).type).toBe('start-stage');
    // Started by flume stage or retry: the choice was about the first start only.
    expect(decide(kind, place({ delivered: { at: at(0), head: 'h', what: 'x' } }, manual), facts({ agent: { state: 'exited' } }), limits)).toMatchObject({ type: 'start-stage', index: 1 });
  });

  it('does nothing for a place being made, tidied, or dropped', () => {
    expect(decide(kind, place(undefined, { phase: 'making' }), facts(), limits).type).toBe('wait');
    expect(decide(kind, place(undefined, { phase: 'gone' }), facts(), limits).type).toBe('wait');
    expect(decide(kind, place({}, { dropped: { at: at(0) } }), facts(), limits).type).toBe('wait');
  });

  it('holds a kind that refuses to start unready, and starts one that starts anyway', () => {
    const failed = { ready: { state: 'failed' as const, at: at(0), failed: { step: 'npm ci', exitCode: 1, tail: 'x' } } };
    expect(decide(kind, place(undefined, failed), facts(), limits).type).toBe('mark-not-ready');
    expect(decide(kind, place(undefined, { ...failed, held: { at: at(0), reason: 'r' } }), facts(), limits).type).toBe('wait');
    expect(decide({ ...kind, whenNotReady: 'start' }, place(undefined, failed), facts(), limits).type).toBe('start-stage');
  });

  it('marks the stage delivered when its deliverable appears, never on a quiet pane', () => {
    const quiet = facts({ now: T0 + 10 * 60_000, agent: { state: 'idle', lastActivity: at(0) } });
    expect(decide(kind, place({}), quiet, limits).type).not.toBe('mark-delivered');
    expect(decide(kind, place({}), facts({ deliverable: { present: true, what: '3 files' } }), limits)).toEqual({ type: 'mark-delivered', what: '3 files' });
  });

  it('ignores a deliverable that was already there when the stage began', () => {
    const reading = { present: true, what: 'conclusion.md', facts: { digest: 'a' } };
    const stage = { presentAtStart: fingerprint(reading) };
    expect(decide(kind, place(stage), facts({ deliverable: reading }), limits).type).not.toBe('mark-delivered');
    const changed = { ...reading, facts: { digest: 'b' } };
    expect(decide(kind, place(stage), facts({ deliverable: changed }), limits).type).toBe('mark-delivered');
  });

  it('ends a stage on a landing it found already there: a landing is never old, and the stage stops short of nothing', () => {
    const landed = { present: true, what: 'landed on main', facts: { target: 'main', unlanded: 0, by: 'patch-and-content' } };
    // A record written before this rule: the landing read at the stage's start, the agent at rest since.
    const stage = { index: 3, name: 'submission', presentAtStart: fingerprint(landed) };
    const idle = { state: 'idle' as const, turnEnded: true, needs: 'Merged into main.', lastActivity: at(1000) };
    expect(decide(kind, place(stage), facts({ deliverable: landed, lands: true, agent: idle }), limits)).toEqual({ type: 'mark-delivered', what: 'landed on main' });
    expect(decide(kind, place({ ...stage, waiting: { needs: 'Merged into main.', at: at(1500) } }), facts({ deliverable: landed, lands: true, agent: idle }), limits).type).toBe('mark-delivered');
  });

  it('ends a delivered stage\'s running agent before anything else, then starts the next stage', () => {
    const delivered = { delivered: { at: at(1), head: 'h', what: 'w' } };
    expect(decide(kind, place(delivered), facts(), limits).type).toBe('stop-agent');
    expect(decide(kind, place(delivered), facts({ agent: { state: 'exited' } }), limits)).toMatchObject({ type: 'start-stage', index: 1 });
  });

  it('finishes after the last stage delivered, once', () => {
    const last = { name: 'submission', index: 3, delivered: { at: at(1), head: 'h', what: 'landed' } };
    expect(decide(kind, place(last), facts({ agent: { state: 'exited' } }), limits).type).toBe('finish');
    expect(decide(kind, place(last, { finished: { at: at(2) } }), facts({ agent: { state: 'exited' } }), limits).type).toBe('wait');
  });

  it('sends the place back to the stage before when a reading says so (a verify verdict of fix), at most fixRounds times', () => {
    const verify = { name: 'verify', index: 2, delivered: { at: at(1), head: 'h', what: 'verify.md: fix' } };
    const fix = facts({ agent: { state: 'exited' }, deliverable: { present: true, what: 'verify.md: fix', facts: { verdict: 'fix' }, sendBack: true } });
    expect(decide(kind, place(verify), fix, limits)).toMatchObject({ type: 'start-stage', index: 1, fixRound: true });
    expect(decide(kind, place({ ...verify, fixRounds: 2 }), fix, limits).type).toBe('mark-waiting');
    const pass = facts({ agent: { state: 'exited' }, deliverable: { present: true, what: 'verify.md: pass', facts: { verdict: 'pass' } } });
    expect(decide(kind, place(verify), pass, limits)).toMatchObject({ type: 'start-stage', index: 3 });
  });

  describe('prompt delivery', () => {
    const sending = { delivery: 'sending' as const, sends: 1, lastSentAt: at(0) };
    it('marks the prompt taken as soon as the transcript holds it', () => {
      expect(decide(kind, place(sending), facts({ prompt: 'taken' }), limits).type).toBe('mark-taken');
      // Even a stage reported never started began, once its transcript holds the prompt.
      expect(decide(kind, place({ ...sending, delivery: 'never-started' }), facts({ prompt: 'taken' }), limits).type).toBe('mark-taken');
    });
    it('waits within the time, then sends once more, then reports never started', () => {
      expect(decide(kind, place(sending), facts({ prompt: 'not-yet', now: T0 + 5000 }), limits).type).toBe('wait');
      expect(decide(kind, place(sending), facts({ prompt: 'not-yet', now: T0 + 11_000, acceptsInput: true }), limits).type).toBe('send-again');
      const twice = { ...sending, sends: 2, lastSentAt: at(11_000) };
      expect(decide(kind, place(twice), facts({ prompt: 'not-yet', now: T0 + 15_000 }), limits).type).toBe('wait');
      expect(decide(kind, place(twice), facts({ prompt: 'not-yet', now: T0 + 22_000 }), limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
    });
    it('waits for a prompt the agent holds queued, past every time, never sending it again', () => {
      const twice = { ...sending, sends: 2, lastSentAt: at(11_000) };
      // The first sight is noted; then again only a quarter of the prompt's time (2.5 s of 10 s here) after the last note.
      expect(decide(kind, place(sending), facts({ prompt: 'held', now: T0 + 60_000, acceptsInput: true }), limits)).toEqual({ type: 'note-held' });
      expect(decide(kind, place({ ...sending, heldAt: at(58_000) }), facts({ prompt: 'held', now: T0 + 60_000, acceptsInput: true }), limits).type).toBe('wait');
      expect(decide(kind, place({ ...sending, heldAt: at(57_500) }), facts({ prompt: 'held', now: T0 + 60_000, acceptsInput: true }), limits)).toEqual({ type: 'note-held' });
      expect(decide(kind, place({ ...twice, heldAt: at(599_000) }), facts({ prompt: 'held', now: T0 + 600_000, acceptsInput: true }), limits).type).toBe('wait');
      expect(decide(kind, place(twice), facts({ prompt: 'held', now: T0 + 600_000, acceptsInput: true }), limits)).toEqual({ type: 'note-held' });
      // Submitted by the program a moment ago and not yet in its record: the time counts from the last sight of it held.
      expect(decide(kind, place({ ...sending, heldAt: at(55_000) }), facts({ prompt: 'not-yet', now: T0 + 60_000, acceptsInput: true }), limits).type).toBe('wait');
      expect(decide(kind, place({ ...sending, heldAt: at(55_000) }), facts({ prompt: 'not-yet', now: T0 + 66_000, acceptsInput: true }), limits).type).toBe('send-again');
      // Gone while it held it: it can take nothing now.
      expect(decide(kind, place(sending), facts({ prompt: 'held', agent: { state: 'exited' } }), limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
    });
    it('reports a start it cannot read as unknown, not as never started', () => {
      const twice = { ...sending, sends: 2, lastSentAt: at(11_000) };
      expect(decide(kind, place(twice), facts({ prompt: 'unknown', now: T0 + 22_000 }), limits)).toEqual({ type: 'mark-delivery', delivery: 'unknown' });
      expect(decide(kind, place({ ...twice, delivery: 'unknown' }), facts({ prompt: 'unknown', now: T0 + 30_000 }), limits).type).toBe('wait');
      // An agent whose input box is up and empty, with no transcript after two sendings, took neither.
      expect(decide(kind, place(twice), facts({ prompt: 'unknown', acceptsInput: true, now: T0 + 22_000 }), limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
    });
    it('treats a slow start as slow: sends once the agent accepts input', () => {
      const unsent = { delivery: 'unknown' as const, sends: 0, lastSentAt: undefined };
      expect(decide(kind, place(unsent), facts({ prompt: 'unknown', acceptsInput: false, agent: { state: 'starting' } }), limits).type).toBe('wait');
      expect(decide(kind, place(unsent), facts({ prompt: 'unknown', acceptsInput: true, agent: { state: 'idle' } }), limits).type).toBe('send-again');
    });
    it('never types into a printed command: it waits for the transcript', () => {
      const printed = { ...sending, agent: { driver: 'claude-code', sessionId: 's', host: 'printed', cwd: '/r', startedAt: at(0) } };
      // The host declares it cannot type (canType: false); the step reads that into the facts.
      const notRun = facts({ prompt: 'unknown', now: T0 + 60_000, agent: { state: 'not-up' }, paneless: true });
      expect(decide(kind, place(printed), notRun, limits)).toEqual({ type: 'mark-delivery', delivery: 'unknown' });
      expect(decide(kind, place({ ...printed, delivery: 'unknown' }), notRun, limits).type).toBe('wait');
    });
    it('reports never started when the agent died before taking the prompt', () => {
      expect(decide(kind, place(sending), facts({ prompt: 'not-yet', agent: { state: 'exited' } }), limits).type).toBe('mark-delivery');
    });
    it('reports never started when the agent died before the prompt was ever sent, not starting for ever', () => {
      // What a supervisor killed between starting the agent and sending to it finds once the agent died too.
      const unsent = { delivery: 'sending' as const, sends: 0, lastSentAt: undefined };
      const gone = facts({ prompt: 'unknown', acceptsInput: false, agent: { state: 'exited' } });
      expect(decide(kind, place(unsent), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      expect(decide(kind, place({ ...unsent, delivery: 'unknown' }), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      expect(decide(kind, place({ ...unsent, delivery: 'never-started' }), gone, limits).type).toBe('wait');
      // A printed command nobody has run yet is not gone.
      const printed = { ...unsent, agent: { driver: 'claude-code', sessionId: 's', host: 'printed', cwd: '/r', startedAt: at(0) } };
      expect(decide(kind, place(printed), facts({ prompt: 'unknown', agent: { state: 'not-up' }, paneless: true }), limits)).not.toEqual({ type: 'mark-delivery', delivery: 'never-started' });
    });
  });

  describe('a start cut before its agent was noted', () => {
    // What a flume killed between writing the stage's start and its agent's handle leaves: the intent alone.
    const intent = { driver: 'claude-code', sessionId: 's', host: 'tmux', cwd: '/r', startedAt: at(0) };
    const cut = { delivery: 'sending' as const, sends: 0, lastSentAt: undefined, agent: intent };
    it('ends the agent its session names, then starts the stage afresh, once', () => {
      // The driver found the agent by its session (Claude Code's session file): it is ended first.
      expect(decide(kind, place(cut), facts({ prompt: 'unknown', agent: { state: 'starting' } }), limits)).toEqual({ type: 'stop-agent', reason: 'its start was cut before its agent was noted' });
      const gone = facts({ prompt: 'unknown', agent: { state: 'exited' } });
      expect(decide(kind, place(cut), gone, limits)).toEqual({ type: 'start-stage', index: 0, reason: 'its start was cut before its agent was noted', afterCut: true });
      expect(decide(kind, place({ ...cut, delivery: 'unknown' }), gone, limits).type).toBe('start-stage');
      // A start that follows a cut one and is cut too is not started again.
      expect(decide(kind, place({ ...cut, afterCut: true }), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      expect(decide(kind, place({ ...cut, afterCut: true }), facts({ prompt: 'unknown', agent: { state: 'idle' } }), limits).type).toBe('stop-agent');
    });
    it('is not a start whose agent was noted, nor a printed command, nor one already sent or judged', () => {
      const gone = facts({ prompt: 'unknown', agent: { state: 'exited' } });
      expect(decide(kind, place({ ...cut, agent: { ...intent, pid: 42 } }), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      expect(decide(kind, place({ ...cut, agent: { ...intent, pane: '%1' } }), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      expect(decide(kind, place({ ...cut, delivery: 'never-started' }), gone, limits).type).toBe('wait');
      expect(decide(kind, place({ ...cut, sends: 1, lastSentAt: at(0) }), gone, limits)).toEqual({ type: 'mark-delivery', delivery: 'never-started' });
      const printed = { ...cut, agent: { ...intent, host: 'printed' } };
      expect(decide(kind, place(printed), facts({ prompt: 'unknown', agent: { state: 'not-up' }, paneless: true }), limits)).toEqual({ type: 'mark-delivery', delivery: 'unknown' });
    });
  });

  describe('stopping short and stuck', () => {
    it('shows an agent that ended its turn without the deliverable as waiting, in its own words', () => {
      const idle = facts({ agent: { state: 'idle', turnEnded: true, needs: 'Which database should I use?' } });
      expect(decide(kind, place({}), idle, limits)).toEqual({ type: 'mark-waiting', needs: 'Which database should I use?' });
      const already = place({ waiting: { needs: 'Which database should I use?', at: at(1) } });
      expect(decide(kind, already, idle, limits).type).toBe('wait');
    });
    it('shows an open question or permission prompt as waiting', () => {
      expect(decide(kind, place({}), facts({ agent: { state: 'asking', dialog: 'question', needs: 'Pick one' } }), limits)).toEqual({ type: 'mark-waiting', needs: 'Pick one' });
      expect(decide(kind, place({}), facts({ agent: { state: 'asking', dialog: 'permission' } }), limits).type).toBe('mark-waiting');
    });
    it('shows an agent held by its folder-trust question as waiting before any prompt is taken, and never sends into it', () => {
      const trust = facts({ prompt: 'not-yet', acceptsInput: false, agent: { state: 'asking', dialog: 'trust', needs: 'answer it with flume trust' } });
      for (const stage of [{ delivery: 'unknown' as const, sends: 0, lastSentAt: undefined }, { delivery: 'sending' as const, sends: 1, lastSentAt: at(0) }]) {
        expect(decide(kind, place(stage), { ...trust, now: T0 + 60_000 }, limits)).toEqual({ type: 'mark-waiting', needs: 'answer it with flume trust' });
        expect(decide(kind, place({ ...stage, waiting: { needs: 'answer it with flume trust', at: at(1) } }), trust, limits).type).toBe('wait');
      }
    });
    it('clears waiting when the agent works again', () => {
      expect(decide(kind, place({ waiting: { needs: 'x', at: at(1) } }), facts(), limits).type).toBe('clear-waiting');
    });
    it('reports a stage quiet past the limit as stuck, and ends nothing', () => {
      const quiet = facts({ now: T0 + 61_000, agent: { state: 'working', lastActivity: at(0) } });
      expect(decide(kind, place({}), quiet, limits)).toEqual({ type: 'mark-stuck', since: at(0) });
      expect(decide(kind, place({ stuck: { since: at(0), at: at(61_000) } }), quiet, limits).type).toBe('wait');
    });
    it('shows an agent that exited without the deliverable as waiting', () => {
      expect(decide(kind, place({}), facts({ agent: { state: 'exited' } }), limits).type).toBe('mark-waiting');
    });
  });

  describe('a token budget', () => {
    const budget = { ...limits, tokens: 1000 };
    it('reports a stage past its budget once, with its figures, and ends nothing', () => {
      expect(decide(kind, place({}), facts({ tokens: 1000 }), budget).type).toBe('wait');
      expect(decide(kind, place({}), facts({ tokens: 1001 }), budget)).toEqual({ type: 'mark-over-budget', tokens: 1001, limit: 1000 });
      const over = place({ overBudget: { at: at(1), tokens: 1001, limit: 1000 } });
      expect(decide(kind, over, facts({ tokens: 5000 }), budget)).toEqual({ type: 'wait', reason: expect.stringContaining('over its token budget') });
      // It goes on to wait on what the agent says, and a delivery still ends the stage.
      expect(decide(kind, over, facts({ tokens: 5000, agent: { state: 'idle', turnEnded: true, needs: 'Done?' } }), budget)).toEqual({ type: 'mark-waiting', needs: 'Done?' });
      expect(decide(kind, over, facts({ tokens: 5000, deliverable: { present: true, what: 'change x' } }), budget).type).toBe('mark-delivered');
    });
    it('reads no budget where none is set, whatever the tokens', () => {
      expect(decide(kind, place({}), facts({ tokens: 10 ** 9 }), limits).type).toBe('wait');
    });
    it("stops the agent past its budget when the kind says onBudget 'stop', once", () => {
      const stop = { ...budget, onBudget: 'stop' as const };
      const over = place({ overBudget: { at: at(1), tokens: 1001, limit: 1000 } });
      expect(decide(kind, place({}), facts({ tokens: 1001 }), stop).type).toBe('mark-over-budget');
      expect(decide(kind, over, facts({ tokens: 1200 }), stop)).toMatchObject({ type: 'stop-over-budget', reason: expect.stringContaining('1200 tokens, over its budget of 1000') });
      const stopped = place({ overBudget: { at: at(1), tokens: 1001, limit: 1000, stopped: true }, waiting: { needs: 'stopped', at: at(2) } });
      expect(decide(kind, stopped, facts({ tokens: 1200, agent: { state: 'exited' } }), stop).type).toBe('wait');
    });
  });
});

describe('decide, where its caller goes on', () => {
  const caller: KindDef = { ...kind, advance: 'caller' };
  const gated: KindDef = { ...kind, stages: kind.stages.map((s) => (s.name === 'code' ? { ...s, advance: 'caller' as const } : s)) };
  const delivered = (name: string, index: number) => ({ name, index, delivered: { at: at(500), head: 'h', what: 'commit abc1234' } });
  const gone = { agent: { state: 'exited' as const } };

  it('starts no stage of a caller kind, not even the first, and records once that it awaits its caller', () => {
    expect(decide(caller, place(), facts(), limits)).toEqual({ type: 'await-caller', gate: false });
    expect(decide(caller, place(undefined, { awaits: { at: at(0), gate: false } }), facts(), limits).type).toBe('wait');
  });

  it('ends a delivered stage\'s agent, then waits for the caller instead of starting the next', () => {
    expect(decide(caller, place(delivered('code', 1)), facts(), limits).type).toBe('stop-agent');
    expect(decide(caller, place(delivered('code', 1)), facts(gone), limits)).toEqual({ type: 'await-caller', after: 'code', what: 'commit abc1234', gate: false });
    expect(decide(caller, place(delivered('code', 1), { awaits: { at: at(600), after: 'code', gate: false } }), facts(gone), limits).type).toBe('wait');
  });

  it('starts no fix round where a report asks for one: the caller decides', () => {
    const verify = place(delivered('verify', 2));
    const fix = facts({ ...gone, deliverable: { present: true, what: 'verify.md: fix', sendBack: true } });
    expect(decide(kind, verify, fix, limits)).toMatchObject({ type: 'start-stage', index: 1, fixRound: true });
    expect(decide(caller, verify, fix, limits)).toMatchObject({ type: 'await-caller', after: 'verify' });
  });

  it('finishes where a caller kind\'s stage lands the work', () => {
    expect(decide(caller, place(delivered('submission', 3)), facts({ ...gone, lands: true }), limits)).toEqual({ type: 'finish' });
    expect(decide(caller, place(delivered('submission', 3), { finished: { at: at(700) } }), facts({ ...gone, lands: true }), limits).type).toBe('wait');
  });

  it('keeps a finished launch finished: no await, no stage, at a caller kind\'s last stage or a gate on the last', () => {
    const lastGated: KindDef = { ...kind, stages: kind.stages.map((s, i) => (i === kind.stages.length - 1 ? { ...s, advance: 'caller' as const } : s)) };
    const finished = { finished: { at: at(700) } };
    for (const k of [caller, lastGated]) {
      expect(decide(k, place(delivered('submission', 3), finished), facts(gone), limits)).toMatchObject({ type: 'wait', reason: 'the launch finished' });
      expect(decide(k, place(delivered('submission', 3), finished), facts({ ...gone, lands: true }), limits).type).toBe('wait');
    }
    // A report asking for fixes in a finished launch starts nothing either.
    const fix = facts({ ...gone, deliverable: { present: true, what: 'verify.md: fix', sendBack: true } });
    expect(decide(kind, place(delivered('verify', 2), finished), fix, limits).type).toBe('wait');
  });

  it('holds a gate after its stage only: the stages before it go on as flume\'s do', () => {
    expect(decide(gated, place(delivered('construct', 0)), facts(gone), limits)).toMatchObject({ type: 'start-stage', index: 1 });
    expect(decide(gated, place(delivered('code', 1)), facts(gone), limits)).toEqual({ type: 'await-caller', after: 'code', what: 'commit abc1234', gate: true });
  });
});
