import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../helpers/repo.js';
import { LAND, PROJECT, promptsOf, running, stageRepo, tip, type StageRepo } from './helpers.js';

let current: StageRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const OPENSPEC = join(PROJECT, 'node_modules', '.bin', 'openspec');

/** The scripts a change's agents run, each taking the change id first. */
function changeScripts(t: StageRepo) {
  return {
    construct: t.bin(
      'construct.sh',
      `c=openspec/changes/$1
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
    tick: t.bin('tick.sh', `sed -i "s/^- \\[ \\] 1\\.$2 /- [x] 1.$2 /" "openspec/changes/$1/tasks.md"
echo "task 1.$2" >> widget.txt
git add -A
git commit -qm "Task 1.$2"`),
    // Verdict "once-fix": fix the first time verify runs on the branch, pass after (each agent is a
    // fresh process, so the fake's own \`once\` cannot count across them).
    verify: t.bin('verify.sh', `v="$2"
if [ "$v" = once-fix ]; then if git log --format=%s | grep -q "^Verify $1: fix"; then v=pass; else v=fix; fi; fi
set -- "$1" "$v"
printf 'Checked every task and scenario.\\n\\nVerdict: %s\\n' "$2" > "openspec/changes/$1/verify.md"
git add -A
git commit -qm "Verify $1: $2"`),
    mend: t.bin('mend.sh', `echo "mended" >> widget.txt
git rm -q "openspec/changes/$1/verify.md"
git add -A
git commit -qm "Mend the findings of verify"`),
    submit: t.bin('submit.sh', `OPENSPEC_TELEMETRY=0 ${OPENSPEC} archive "$1" --yes >/dev/null
git add -A
git commit -qm "Archive $1"
${LAND}`),
  };
}

/** Polls until the place is gone (or `stop` holds), keeping every view and the last record and events read. */
async function follow(t: StageRepo, id: string, key: string, stop: (place: any) => boolean, timeoutMs: number) {
  const seen: any[] = [];
  const last: { record?: any; events: any[] } = { events: [] };
  const records: any[] = [];
  await t.until(
    id,
    (place) => {
      const record = t.record(key);
      if (record) {
        last.record = record;
        records.push(record);
      }
      const events = t.events(key);
      if (events.length) last.events = events;
      return place === undefined || stop(place);
    },
    `${id} to go through its stages`,
    { timeoutMs, seen },
  );
  return { seen, last, records };
}

describe('a change, driven by the supervisor', () => {
  it('runs construct, code (its ticks shown as they land), verify and submission, then tidies the landed place', async () => {
    current = stageRepo({});
    const t = current;
    const s = changeScripts(t);
    t.script({
      onPrompt: [
        { match: 'Write an OpenSpec change', actions: [{ sleepMs: 800 }, { run: [s.construct, 'widget'] }, { say: 'The change is committed.' }] },
        {
          match: 'Work its tasks in order',
          actions: [{ sleepMs: 1500 }, { run: [s.tick, 'widget', '1'] }, { sleepMs: 2500 }, { run: [s.tick, 'widget', '2'] }, { sleepMs: 2500 }, { run: [s.tick, 'widget', '3'] }, { say: 'All tasks done.' }],
        },
        { match: 'Check the code against the change', actions: [{ sleepMs: 500 }, { run: [s.verify, 'widget', 'pass'] }, { say: 'Verdict: pass.' }] },
        { match: 'First archive the change', actions: [{ sleepMs: 500 }, { run: [s.submit, 'widget'] }, { say: 'Archived and landed.' }] },
      ],
    });
    const place = await t.launch('change', 'widget', 'Add a widget.');
    expect(place.stage).toMatchObject({ name: 'construct', delivery: 'taken' });
    const watch = t.watch();
    const { seen, last } = await follow(t, 'change/widget', 'change--widget', () => false, 90_000);

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
    expect(watch.output()).toContain('change/widget: tidy removed');
  });

  it('sends code back for a fix round when verify says fix, then verify passes and submission starts', async () => {
    current = stageRepo({});
    const t = current;
    const s = changeScripts(t);
    t.script({
      onPrompt: [
        { match: 'Write an OpenSpec change', actions: [{ sleepMs: 500 }, { run: [s.construct, 'gadget'] }, { say: 'Committed.' }] },
        { match: 'Verify found problems', actions: [{ sleepMs: 1500 }, { run: [s.mend, 'gadget'] }, { say: 'Mended.' }] },
        { match: 'Work its tasks in order', actions: [{ run: [s.tick, 'gadget', '1'] }, { run: [s.tick, 'gadget', '2'] }, { run: [s.tick, 'gadget', '3'] }, { say: 'Done.' }] },
        { match: 'Check the code against the change', actions: [{ sleepMs: 300 }, { run: [s.verify, 'gadget', 'once-fix'] }, { say: 'Verify is written.' }] },
        { match: 'First archive the change', actions: [{ say: 'Submitting.' }, { sleepMs: 60_000 }] },
      ],
    });
    const place = await t.launch('change', 'gadget', 'Add a gadget.');
    t.watch();
    const { seen, last, records } = await follow(t, 'change/gadget', 'change--gadget', (p) => p.stage?.name === 'submission' && p.stage.delivery === 'taken', 45_000);

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
    const round = records.find((r) => r.stage?.name === 'code' && r.stage.fixRounds === 1);
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
});
