/**
 * Issue "Stages", end to end: ONE `change` run with the REAL Claude Code 2.1.332, driven by the
 * supervisor (`flume watch --poll 1s --linger 0` in the background). The scripted Messages API plays
 * each stage from the prompt the real program sends it (its first user text), one Bash tool call at
 * a time; the real program runs the commands in the place, and flume ends each stage on its
 * deliverable as it reads it in git, starts the next stage with a fresh agent, and tidies the place
 * once the branch has landed.
 *
 * The fake-agent twin of this test is test/integration/stages/change.test.ts.
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e/flume-change.test.ts'
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bash, type ContentBlock, type MessagesBody, type MessagesRequest, type ReplyLike } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { git, PROJECT } from '../helpers/repo.js';
import { prompts, realRepo, waitFor, type RealRepo } from './real-repo.js';

const OPENSPEC = join(PROJECT, 'node_modules', '.bin', 'openspec');
const CHANGE = 'openspec/changes/widget';

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The shell commands each stage's model runs, one Bash tool call each (in the place, its cwd). */
const COMMANDS = {
  construct: `set -e
c=${CHANGE}
mkdir -p "$c/specs/widget"
printf '## Why\\nEvery page that draws a widget needs one, and the project has none to draw yet.\\n\\n## What Changes\\n- Add the widget.\\n' > "$c/proposal.md"
printf '## 1. Widget\\n- [ ] 1.1 Draw it\\n- [ ] 1.2 Size it\\n- [ ] 1.3 Test it\\n' > "$c/tasks.md"
printf '## Context\\nA small widget.\\n' > "$c/design.md"
printf '## ADDED Requirements\\n### Requirement: Widget\\nThe system SHALL draw a widget.\\n\\n#### Scenario: Drawn\\n- **WHEN** a page is drawn\\n- **THEN** the widget shows\\n' > "$c/specs/widget/spec.md"
git add -A
git commit -qm "Add the OpenSpec change widget"`,
  tick: (n: number) => `set -e
sed -i 's/^- \\[ \\] 1\\.${n} /- [x] 1.${n} /' ${CHANGE}/tasks.md
echo "task 1.${n}" >> widget.txt
git add -A
git commit -qm "Task 1.${n}"`,
  verify: `set -e
printf 'Checked every task and scenario against the code.\\n\\nVerdict: pass\\n' > ${CHANGE}/verify.md
git add -A
git commit -qm "Verify widget: pass"`,
  submission: `set -e
OPENSPEC_TELEMETRY=0 ${OPENSPEC} archive widget --yes
git add -A
git commit -qm "Archive widget"
git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." merge -q --no-edit "$(git branch --show-current)"`,
};

type Stage = 'construct' | 'code' | 'verify' | 'submission';

/** Which stage's prompt opened the conversation (the first user message's own text). */
function stageOf(body: MessagesBody): Stage | undefined {
  const first = body.messages.find((m) => m.role === 'user');
  const content = typeof first?.content === 'string' ? first.content : (first?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
  if (content.includes('Write an OpenSpec change')) return 'construct';
  if (content.includes('Work its tasks in order')) return 'code';
  if (content.includes('Check the code against the change')) return 'verify';
  if (content.includes('First archive the change')) return 'submission';
  return undefined;
}

/** How many tool results the conversation holds: the step the stage is at. */
function stepOf(body: MessagesBody): number {
  return body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as ContentBlock[]) : [])).filter((b) => b.type === 'tool_result').length;
}

/** The model: each stage from its prompt, one Bash call per step, then a closing line. */
function play(request: MessagesRequest): ReplyLike | undefined {
  const stage = stageOf(request.body);
  const step = stepOf(request.body);
  switch (stage) {
    case 'construct':
      return step === 0 ? bash(COMMANDS.construct, 'Write and commit the OpenSpec change', { delayMs: 300 }) : 'The change is committed.';
    case 'code':
      // A pause before each task, so status can be seen between the ticks.
      return step < 3 ? bash(COMMANDS.tick(step + 1), `Do task 1.${step + 1} and tick it`, { delayMs: step === 0 ? 300 : 3000 }) : 'All tasks are done.';
    case 'verify':
      return step === 0 ? bash(COMMANDS.verify, 'Write and commit the verify report', { delayMs: 300 }) : 'Verdict: pass.';
    case 'submission':
      return step === 0 ? bash(COMMANDS.submission, 'Archive the change and land the branch', { delayMs: 300 }) : 'Archived and landed.';
    default:
      // A conversation no stage opened: unscripted, so the API records it and the test fails.
      return undefined;
  }
}

describe('a change with the real Claude Code, driven by the supervisor', () => {
  it('runs construct, code (its ticks shown as they land), verify and submission, then tidies the landed place', async () => {
    current = await realRepo({
      script: play,
      // Bash runs without a dialog: bypassPermissions, which as root needs IS_SANDBOX=1.
      permissionMode: 'bypassPermissions',
      env: { IS_SANDBOX: '1' },
    });
    const t = current;
    const started = Date.now();
    const place = await t.launch('change', 'widget', 'Add a widget that every page can draw.');
    expect(place.stage).toMatchObject({ name: 'construct', delivery: 'taken' });
    const watch = t.watch(['--poll', '1s', '--linger', '0']);

    // Follow status until the place is gone, keeping every view and when it was seen.
    // The place's record and event log go when it is tidied: keep the last ones read.
    const seen: Array<{ at: number; place: any }> = [];
    let events: Array<Record<string, any>> = [];
    let record: any;
    const recordFile = join(t.repo, '.git', 'flume', 'places', 'change--widget.json');
    const keep = setInterval(() => {
      try {
        const read = t.events('change--widget');
        if (read.length) events = read;
        record = JSON.parse(readFileSync(recordFile, 'utf8'));
      } catch {
        // gone, or being replaced this moment
      }
    }, 50);
    try {
      await t.until('change/widget', (p) => {
        seen.push({ at: Date.now() - started, place: p });
        return p === undefined;
      }, 'the change to go through its stages and be tidied', { timeoutMs: 150_000, intervalMs: 100 });
    } finally {
      clearInterval(keep);
    }
    const totalMs = Date.now() - started;

    // What status showed, in order, without repeats (stage, state, progress).
    const shown = seen
      .filter((s) => s.place)
      .map((s) => `${s.place.state}: ${s.place.stage.name} ${s.place.stage.state}${s.place.stage.progress ? ` ${s.place.stage.progress.done} of ${s.place.stage.progress.total}` : ''} (landing ${s.place.landing.state})`)
      .filter((line, i, all) => line !== all[i - 1]);
    const firstSeen = ['construct', 'code', 'verify', 'submission'].map((n) => `${n} ${seen.find((s) => s.place?.stage.name === n)?.at ?? '-'} ms`);
    console.log(`flume-change: ${totalMs} ms from launch to tidied (stages first seen: ${firstSeen.join(', ')}); status showed:\n  ${shown.join('\n  ')}`);

    // Code's progress showed each tick as it landed, in order, never backwards.
    const progress = seen.filter((s) => s.place?.stage.name === 'code' && s.place.stage.progress).map((s) => `${s.place.stage.progress.done} of ${s.place.stage.progress.total}`);
    const steps = progress.filter((value, i) => value !== progress[i - 1]);
    expect(steps).toEqual(expect.arrayContaining(['1 of 3', '2 of 3']));
    expect(['0 of 3', '1 of 3', '2 of 3', '3 of 3'].filter((v) => steps.includes(v))).toEqual(steps);
    // The stages came one after another, in the kind's order.
    const stagesSeen = seen.filter((s) => s.place).map((s) => s.place.stage.name).filter((n, i, all) => n !== all[i - 1]);
    expect(stagesSeen).toEqual(['construct', 'code', 'verify', 'submission'].filter((n) => stagesSeen.includes(n)));
    expect(stagesSeen[0]).toBe('construct');

    // Status showed the place landed (submission delivered) before tidying took it.
    expect(seen.some((s) => s.place?.state === 'landed' && s.place.landing.state === 'landed' && s.place.stage.name === 'submission')).toBe(true);

    // Each stage ended on its deliverable and was one fresh real agent, whose own transcript took its prompt.
    expect(record.history.map((h: any) => [h.name, h.delivered])).toEqual([
      ['construct', 'change widget (3 tasks)'],
      ['code', '3 of 3 tasks'],
      ['verify', 'verify.md: pass'],
    ]);
    expect(record.stage).toMatchObject({ name: 'submission', delivered: { what: 'landed on main' } });
    const starts = events.filter((e) => e.event === 'stage-started');
    expect(starts.map((e) => e.stage)).toEqual(['construct', 'code', 'verify', 'submission']);
    expect(new Set(starts.map((e) => e.sessionId)).size).toBe(4);
    expect(events.filter((e) => e.event === 'prompt-taken' || e.event === 'mark-taken').length).toBeGreaterThanOrEqual(4);
    for (const start of starts) {
      const path = t.claude.findTranscript(start.sessionId);
      expect(path, `the ${start.stage} agent's transcript`).toBeDefined();
      expect(prompts(path!)).toHaveLength(1);
      expect(stageOfPrompt(prompts(path!)[0]!)).toBe(start.stage);
    }

    // The change was archived on the branch, which landed on main; the place and its branch are gone.
    expect(git(t.repo, 'log', '--format=%s', 'main')).toContain('Archive widget');
    expect(git(t.repo, 'log', '--format=%s', 'main').split('\n').slice(0, 6)).toEqual(['Archive widget', 'Verify widget: pass', 'Task 1.3', 'Task 1.2', 'Task 1.1', 'Add the OpenSpec change widget']);
    expect(existsSync(join(t.repo, 'openspec', 'specs', 'widget', 'spec.md'))).toBe(true);
    expect(existsSync(join(t.repo, CHANGE))).toBe(false);
    expect(readFileSync(join(t.repo, 'widget.txt'), 'utf8')).toBe('task 1.1\ntask 1.2\ntask 1.3\n');
    expect(existsSync(place.path)).toBe(false);
    expect(git(t.repo, 'branch', '--list', 'change/widget')).toBe('');
    // The supervisor prints its line once the removal is done: a moment after the folder is gone.
    await waitFor(() => watch.output().includes('change/widget: tidy removed'), 'the supervisor to say the place was tidied');
    // No agent is left running.
    expect(t.claude.sessionStates()).toEqual([]);
  }, 240_000);
});

/** The stage whose prompt this is. */
function stageOfPrompt(prompt: string): Stage | undefined {
  return stageOf({ messages: [{ role: 'user', content: prompt }] });
}
