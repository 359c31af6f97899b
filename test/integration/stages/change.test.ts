import { describe, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/fake-claude/index.js';
import { LAND, PROJECT, promptsOf, repoFor, running, type StageRepo, tip } from './helpers.js';

// Each test has its own repository, state, tmux server and supervisor: they run at once.

const OPENSPEC = join(PROJECT, 'node_modules', '.bin', 'openspec');

/** The scripts a change's agents run, each taking the change id first. */
function changeScripts(t: StageRepo) {
  return {
    construct: t.bin(
      'construct.sh',
      `${t.gate('construct')}
c=openspec/changes/$1
mkdir -p "$c/specs/widget"
cat > "$c/proposal.md" <<'EOF'
## Why
Every page that draws a widget needs one, and the project has none to draw yet.

## What Changes
- Add the widget.
EOF
printf '## 1. Widget\\n- [ ] 1.1 Draw it\\n- [ ] 1.2 Size it\\n- [ ] 1.3 Test it\\n' > "$c/tasks.md"
printf '## Context\\nA small widget.\\n' > "$c/design.md"
cat > "$c/specs/widget/spec.md" <<'EOF'
## ADDED Requirements
### Requirement: Widget
The system SHALL draw a widget.

#### Scenario: Drawn
- **WHEN** a page is drawn
- **THEN** the widget shows
EOF
git add -A
git commit -qm "Add the change $1"`,
    ),
    // Task N waits until the test has seen N-1 ticked in status: the reading is paced, never raced.
    tick: t.bin('tick.sh', `if [ "$2" -gt 1 ]; then ${t.gate('seen-$(($2 - 1))')}; fi
sed -i "s/^- \\[ \\] 1\\.$2 /- [x] 1.$2 /" "openspec/changes/$1/tasks.md"
echo "task 1.$2" >> widget.txt
git add -A
git commit -qm "Task 1.$2"`),
    // Verdict "once-fix": fix the first time verify runs on the branch, pass after (each agent is a
    // fresh process, so the fake's own "once" cannot count across them).
    verify: t.bin('verify.sh', `v="$2"
if [ "$v" = once-fix ]; then if git log --format=%s | grep -q "^Verify $1: fix"; then v=pass; ${t.gate('verify-again')}; else v=fix; fi; fi
set -- "$1" "$v"
printf 'Checked every task and scenario.\\n\\nVerdict: %s\\n' "$2" > "openspec/changes/$1/verify.md"
git add -A
git commit -qm "Verify $1: $2"`),
    mend: t.bin('mend.sh', `${t.gate('mend')}
echo "mended" >> widget.txt
git rm -q "openspec/changes/$1/verify.md"
git add -A
git commit -qm "Mend the findings of verify"`),
    // Writes verify.md with the line "$2" as its verdict, as an agent wrote it, once the gate "$3" (if named) opens.
    report: t.bin('report.sh', `if [ -n "$3" ]; then ${t.gate('$3')}; fi
printf 'Checked every task and scenario.\\n\\n%s\\n' "$2" > "openspec/changes/$1/verify.md"
git add -A
git commit -qm "Verify $1"`),
    // Archives and lands once the test has seen submission begin (a quick supervisor could otherwise
    // land and tidy the place between two of its readings).
    submit: t.bin('submit.sh', `${t.gate('submit')}
OPENSPEC_TELEMETRY=0 ${OPENSPEC} archive "$1" --yes >/dev/null
git add -A
git commit -qm "Archive $1"
${LAND}`),
  };
}

/**
 * Polls until the place is gone (or `stop` holds), keeping every view and every record and event log
 * read; `onView` sees each view first (to open the gates the agents wait on).
 */
async function follow(t: StageRepo, id: string, key: string, options: { stop?: (place: any) => boolean; onView?: (place: any) => void; timeoutMs: number }) {
  const seen: any[] = [];
  const last: { record?: any; events: any[] } = { events: [] };
  const records: any[] = [];
  await t.until(
    id,
    (place) => {
      if (place) options.onView?.(place);
      const record = t.record(key);
      if (record) {
        last.record = record;
        records.push(record);
      }
      const events = t.events(key);
      if (events.length) last.events = events;
      return place === undefined || options.stop?.(place);
    },
    `${id} to go through its stages`,
    { timeoutMs: options.timeoutMs, seen },
  );
  return { seen, last, records };
}

describe.concurrent('a change, driven by the supervisor', { timeout: 300_000 }, () => {
  it('runs construct, code (its ticks shown as they land), verify and submission, then tidies the landed place', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    const s = changeScripts(t);
    t.script({
      onPrompt: [
        { match: 'Write an OpenSpec change', actions: [{ run: [s.construct, 'widget'] }, { say: 'The change is committed.' }] },
        {
          match: 'Work its tasks in order',
          actions: [{ run: [s.tick, 'widget', '1'] }, { sleepMs: 300 }, { run: [s.tick, 'widget', '2'] }, { sleepMs: 300 }, { run: [s.tick, 'widget', '3'] }, { say: 'All tasks done.' }],
        },
        { match: 'Check the code against the change', actions: [{ run: [s.verify, 'widget', 'pass'] }, { say: 'Verdict: pass.' }] },
        { match: 'First archive the change', actions: [{ run: [s.submit, 'widget'] }, { say: 'Archived and landed.' }] },
      ],
    });
    const place = await t.launch('change', 'widget', 'Add a widget.');
    expect(place.stage).toMatchObject({ name: 'construct', delivery: 'taken' });
    const watch = t.watch();
    const { seen, last } = await follow(t, 'change/widget', 'change--widget', {
      // Generous: on CI's loaded machine (the 200 tidy histories beside it) a whole change took 85 s.
      timeoutMs: 180_000,
      onView(p) {
        if (p.stage?.name === 'construct' && p.stage.state === 'working') t.open('construct');
        if (p.stage?.name === 'code' && p.stage.progress?.done > 0) t.open(`seen-${p.stage.progress.done}`);
        if (p.stage?.name === 'submission') t.open('submit');
      },
    });

    // Status showed code's progress as each tick landed, never ahead of the commits, never backwards.
    const progress = seen.filter((p) => p?.stage?.name === 'code' && p.stage.progress).map((p) => `${p.stage.progress.done} of ${p.stage.progress.total}`);
    const steps = progress.filter((value, i) => value !== progress[i - 1]);
    expect(steps).toEqual(expect.arrayContaining(['1 of 3', '2 of 3']));
    expect(steps.indexOf('1 of 3')).toBeLessThan(steps.indexOf('2 of 3'));
    expect(['0 of 3', '1 of 3', '2 of 3', '3 of 3'].filter((v) => steps.includes(v))).toEqual(steps);
    // Each stage ended on its deliverable, in order, each with one fresh agent.
    expect(last.record.history.map((h: any) => [h.name, h.delivered])).toEqual([
      ['construct', 'change widget (3 tasks)'],
      ['code', '3 of 3 tasks'],
      ['verify', 'verify.md: pass'],
    ]);
    const started = last.events.filter((e) => e.event === 'stage-started');
    expect(started.map((e) => e.stage)).toEqual(['construct', 'code', 'verify', 'submission']);
    expect(new Set(started.map((e) => e.sessionId)).size).toBe(4);
    const stagesSeen = seen.filter(Boolean).map((p) => p.stage.name).filter((n, i, all) => n !== all[i - 1]);
    expect(stagesSeen).toEqual(['construct', 'code', 'verify', 'submission'].filter((n) => stagesSeen.includes(n)));

    // The change was archived on the branch, which landed; the place is gone.
    expect(existsSync(join(t.repo, 'openspec', 'specs', 'widget', 'spec.md'))).toBe(true);
    expect(existsSync(join(t.repo, 'openspec', 'changes', 'widget'))).toBe(false);
    expect(git(t.repo, 'log', '--format=%s', 'main')).toContain('Archive widget');
    expect(existsSync(place.path)).toBe(false);
    expect(tip(t.repo, 'change/widget')).toBeUndefined();
    expect(t.livePanes()).toEqual([]);
    // The supervisor prints its line once the removal is done: a moment after the record is gone.
    await waitFor(() => watch.output().includes('change/widget: tidy removed'), 'the supervisor to say the place was tidied');
  });

  it('sends code back for a fix round when verify says fix, then verify passes and submission starts', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    const s = changeScripts(t);
    t.script({
      onPrompt: [
        { match: 'Write an OpenSpec change', actions: [{ run: [s.construct, 'gadget'] }, { say: 'Committed.' }] },
        { match: 'Verify found problems', actions: [{ run: [s.mend, 'gadget'] }, { say: 'Mended.' }] },
        { match: 'Work its tasks in order', actions: [{ run: ['sh', '-c', `sed -i 's/- \\[ \\]/- [x]/' openspec/changes/gadget/tasks.md && git commit -qam 'All tasks'`] }, { say: 'Done.' }] },
        { match: 'Check the code against the change', actions: [{ run: [s.verify, 'gadget', 'once-fix'] }, { say: 'Verify is written.' }] },
        { match: 'First archive the change', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    const place = await t.launch('change', 'gadget', 'Add a gadget.');
    t.watch();
    const { seen, last, records } = await follow(t, 'change/gadget', 'change--gadget', {
      timeoutMs: 180_000,
      stop: (p) => p.stage?.name === 'submission' && p.stage.delivery === 'taken',
      onView(p) {
        if (p.stage?.name === 'construct' && p.stage.state === 'working') t.open('construct');
        // The fix round mends once the test has seen it in status.
        if (p.stage?.name === 'code' && p.stage.deliverable === 'commit' && p.stage.state === 'working') t.open('mend');
        // The second verify passes once the test has seen its record (attempt 2), which a quick pass could skip.
        if (p.stage?.name === 'verify' && p.stage.attempt === 2) t.open('verify-again');
      },
    });

    expect(last.record.history.map((h: any) => h.name)).toEqual(['construct', 'code', 'verify', 'code', 'verify']);
    const [, , firstVerify, fixRound, secondVerify] = last.record.history;
    expect(firstVerify.delivered).toBe('verify.md: fix');
    expect(fixRound.delivered).toMatch(/^commit [0-9a-f]{7}$/);
    expect(secondVerify.delivered).toBe('verify.md: pass');
    expect(git(place.path, 'log', '-1', '--format=%s', fixRound.delivered.slice('commit '.length))).toBe('Mend the findings of verify');
    const started = last.events.filter((e) => e.event === 'stage-started');
    expect(started.map((e) => e.stage)).toEqual(['construct', 'code', 'verify', 'code', 'verify', 'submission']);
    expect(new Set(started.map((e) => e.sessionId)).size).toBe(6);
    // The fix round ran with its own prompt, in a fresh agent, ending on a commit (status says so).
    const round = records.filter((r) => r.stage?.name === 'code' && r.stage.fixRounds === 1).at(-1);
    expect(round.stage).toMatchObject({ attempt: 2, deliverable: { type: 'commit' } });
    expect(promptsOf(round.stage.agent.transcriptPath)[0]).toContain('Verify found problems');
    const roundViews = seen.filter((p) => p?.stage?.name === 'code' && p.stage.startedAt === round.stage.startedAt);
    expect(roundViews.length).toBeGreaterThan(0);
    for (const view of roundViews) expect(view.stage.deliverable).toBe('commit');
    expect(last.record.stage).toMatchObject({ name: 'submission', attempt: 1, fixRounds: 1 });
    expect(records.find((r) => r.stage?.name === 'verify' && r.stage.fixRounds === 1)?.stage.attempt).toBe(2);
    expect(t.livePanes()).toHaveLength(1);
    expect(running(round.stage.agent.pid)).toBe(false);
  });

  it('shows why a verify report it cannot read does not end verify, and reads one with trailing words and emoji', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    const s = changeScripts(t);
    t.script({
      onPrompt: [
        { match: 'Write an OpenSpec change', actions: [{ run: [s.construct, 'report'] }, { say: 'Committed.' }] },
        { match: 'Work its tasks in order', actions: [{ run: ['sh', '-c', `sed -i 's/- \\[ \\]/- [x]/' openspec/changes/report/tasks.md && git commit -qam 'All tasks'`] }, { say: 'Done.' }] },
        {
          match: 'Check the code against the change',
          actions: [{ run: [s.report, 'report', 'Verdict: passed'] }, { run: [s.report, 'report', '**Verdict: PASS** ✅ (3 of 3 tasks verified)', 'reworded'] }, { say: 'Verified.' }],
        },
        { match: 'First archive the change', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    await t.launch('change', 'report', 'Add a report.');
    t.watch();
    const stuck = await t.until(
      'change/report',
      (p) => {
        if (p?.stage?.name === 'construct' && p.stage.state === 'working') t.open('construct');
        // Between the agent taking the prompt (and writing its report) and the step recording it taken,
        // status rightly reads the stage as starting: wait for the reading after that.
        return p?.stage?.name === 'verify' && p.stage.deliverableProblem && p.stage.state !== 'starting' ? p : undefined;
      },
      'verify to show why its report is no verdict',
      { timeoutMs: 180_000 },
    );
    // The verify prompt showed the exact line to write.
    expect(promptsOf(stuck.stage.agent.transcript)[0]).toMatch(/\nVerdict: pass\n[^]*\nVerdict: fix\n/);
    expect(stuck.stage).toMatchObject({ state: 'working' });
    expect(stuck.stage.deliverableProblem).toBe(
      'verify.md has no verdict flume can read: its last verdict line "Verdict: passed" says neither pass nor fix; write "Verdict: pass" or "Verdict: fix"',
    );
    const text = await t.flume(['status', '--repo', t.repo, 'change/report']);
    expect(text.stdout).toContain('  deliverable: verify.md has no verdict flume can read: its last verdict line "Verdict: passed"');

    t.open('reworded');
    const next = await t.until('change/report', (p) => (p?.stage?.name === 'submission' ? p : undefined), 'submission to start', { timeoutMs: 180_000 });
    expect(next.stage.deliverableProblem).toBeUndefined();
    expect(t.record('change--report').history.map((h: any) => [h.name, h.delivered])).toEqual([
      ['construct', 'change report (3 tasks)'],
      ['code', '3 of 3 tasks'],
      ['verify', 'verify.md: pass'],
    ]);
  });
});
