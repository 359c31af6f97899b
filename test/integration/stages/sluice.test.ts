/**
 * A fix whose submission goes through sluice (the fake, test/helpers/fake-sluice), driven by the
 * supervisor: the submission's agent submits; sluice refuses, and the stage stops short on sluice's
 * reasons (status at once, the place's record by the supervisor's step, though no ref moved); a new
 * submission lifts it; sluice lands it as a squash (git cannot see it landed), the stage ends on
 * sluice's record, and tidying removes the place and keeps its branch.
 */
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { FAKE_SLUICE_DIR, withFakeSluice } from '../../helpers/fake-sluice/index.js';
import { LONG, repoFor } from './helpers.js';

describe('a fix submitted to sluice', { timeout: LONG }, () => {
  it('stops short when sluice refuses it, and ends and is tidied when sluice lands it', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({
      onPrompt: [
        // Two commits: a squash of them matches neither patch, so git cannot see the branch landed.
        { match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt'] }, { run: [t.commit, 'two.txt'] }, { say: 'Committed one.txt and two.txt.' }] },
        { match: 'Submit the branch for landing', actions: [{ run: [join(FAKE_SLUICE_DIR, 'sluice'), 'submit'] }, { say: 'Submitted to sluice.' }] },
      ],
    });
    const sluice = (...args: string[]) => execFileSync('sluice', args, { cwd: t.repo, env: withFakeSluice(t.env), encoding: 'utf8' });
    sluice('install');
    const record = join(t.repo, '.git', 'sluice', 'landings', 'fix', 'one.json');
    const place = await t.launch('fix', 'one', 'Add one.txt.');
    t.watch();

    await t.until('fix/one', (p) => p?.stage?.name === 'submission' && existsSync(record) && p.stage.state === 'waiting', 'the submission to be queued in sluice');
    expect((await t.view('fix/one')).landing.state).toBe('not-landed');

    sluice('refuse', 'fix/one', 'test failed: one.test.ts');
    const needs = 'sluice refused to land fix/one: test failed: one.test.ts';
    await t.until('fix/one', (p) => p?.stage?.needs === needs && p.stage.state === 'waiting' && p, 'status to show the refusal');
    // The supervisor's step recorded it too: a record changed, no ref moved, and the place was read afresh.
    await t.until('fix/one', () => t.record('fix--one')?.stage?.waiting?.needs === needs, 'the step to record the refusal');
    expect(t.events('fix--one').some((e) => e.event === 'mark-waiting')).toBe(true);

    sluice('submit', 'fix/one');
    await t.until('fix/one', (p) => p?.stage?.needs !== needs && p, 'a new submission to lift it');
    // Landed as a squash, which git cannot tie to the branch: sluice's record ends the stage, and
    // tidying (asked by the supervisor because the landing reader says landed) removes the place and
    // keeps the branch, whose patches git does not find on main.
    sluice('land', '--squash', 'fix/one');
    const kept = await t.until('fix/one', (p) => p?.state === 'kept' && p, 'the place to be tidied, its branch kept', { timeoutMs: 40_000 });
    expect(kept.kept).toMatchObject({ branchKept: true });
    expect(t.record('fix--one').stage).toMatchObject({ name: 'submission', delivered: { what: expect.stringMatching(/^landed on main by sluice \([0-9a-f]{7}\)$/) } });
    expect(existsSync(place.path)).toBe(false);
  });
});
