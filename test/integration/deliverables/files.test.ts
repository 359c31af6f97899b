import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fingerprint } from '../../../core/engine/stage/decide.js';
import { join } from 'node:path';
import { createFlume, type Flume } from '../../../core/api/plugin.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import { deliverablePlugins } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';

let repo: TestRepo;
let flume: Flume;
const read = (request: DeliverableRequest) => flume.hooks.readDeliverable.for(request.options.type).promise(request);

beforeAll(async () => {
  repo = await makeRepo();
  flume = await createFlume({ plugins: deliverablePlugins() });
});
afterAll(() => repo.remove());

describe('report', () => {
  const report = (name: string) => `openspec/changes/${name}/verify.md`;

  it('is absent until verify.md is committed with a verdict, then gives the verdict', async () => {
    const place = await makePlace(repo, 'change', 'verified', 'verify');
    const path = report('verified');
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toEqual({ present: false, facts: { path, problem: 'missing' } });
    await repo.commit(place.path, { [path]: '# Verify\n\nNothing yet.\n' });
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toEqual({
      present: false,
      problem: expect.stringMatching(/^verify\.md has no verdict .*"Verdict: pass" or "Verdict: fix"/),
      facts: { path, problem: 'no-verdict' },
    });
    await repo.commit(place.path, { [path]: '# Verify\n\nVerdict: pass | fix\n' });
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toEqual({
      present: false,
      problem: expect.stringContaining('"Verdict: pass | fix" names both pass and fix'),
      facts: { path, problem: 'ambiguous-verdict', line: 'Verdict: pass | fix' },
    });
    await repo.commit(place.path, { [path]: '# Verify\n\nAll tasks checked.\n\n**Verdict:** PASS\n' });
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toEqual({
      present: true,
      what: 'verify.md: pass',
      facts: { path, verdict: 'pass', digest: expect.stringMatching(/^[0-9a-f]{40}$/) },
    });
  });

  it('gives a fix verdict as delivered, for the engine to send code back', async () => {
    const place = await makePlace(repo, 'change', 'needs-fix', 'verify');
    await repo.commit(place.path, { [report('needs-fix')]: '## Verdict: fix\n\n- 2.3 is not done.\n' });
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toMatchObject({ present: true, what: 'verify.md: fix', facts: { verdict: 'fix' }, sendBack: true });
  });

  it('gives the last verdict line when earlier ones disagree', async () => {
    const place = await makePlace(repo, 'change', 'torn', 'verify');
    await repo.commit(place.path, { [report('torn')]: 'Verdict: pass\n\nVerdict: fix\n' });
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toMatchObject({ present: true, facts: { verdict: 'fix' } });
  });

  it('does not read a report written but not committed', async () => {
    const place = await makePlace(repo, 'change', 'unsaved', 'verify');
    await repo.commit(place.path, { [report('unsaved')]: '# Verify\n' });
    await writeFile(join(place.path, report('unsaved')), 'Verdict: pass\n');
    expect(await read(await deliverableRequest(place, { type: 'report' }))).toMatchObject({ present: false, facts: { problem: 'no-verdict' } });
  });

  it('reads the file a `path` option names, and refuses one outside the place', async () => {
    const place = await makePlace(repo, 'fix', 'own-report', 'verify');
    await repo.commit(place.path, { 'docs/review.md': 'verdict: fix\n' });
    expect(await read(await deliverableRequest(place, { type: 'report', path: './docs/review.md' }))).toEqual({
      present: true,
      what: 'review.md: fix',
      facts: { path: 'docs/review.md', verdict: 'fix', digest: expect.stringMatching(/^[0-9a-f]{40}$/) },
      // The capability decide reads: a verdict of fix sends the place back (decide names no verdict).
      sendBack: true,
    });
    await expect(read(await deliverableRequest(place, { type: 'report', path: '../outside.md' }))).rejects.toMatchObject({
      code: 'BAD_CONFIG',
      plugin: 'flume:deliverable:report',
    });
  });
});

describe('conclusion', () => {
  it('is absent with no conclusion.md, and absent when it is empty', async () => {
    const place = await makePlace(repo, 'question', 'open', 'session');
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toEqual({ present: false, facts: { path: 'conclusion.md' } });
    await writeFile(join(place.path, 'conclusion.md'), '\n  \n');
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toEqual({
      present: false,
      facts: { path: 'conclusion.md', problem: 'empty' },
    });
  });

  it('is present when written in the place but not committed (sounding conclude does not commit)', async () => {
    const place = await makePlace(repo, 'question', 'written', 'session');
    await writeFile(join(place.path, 'conclusion.md'), '# Conclusion\n\nUse the second design.\n');
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toEqual({
      present: true,
      what: 'conclusion.md',
      facts: { path: 'conclusion.md', committed: false, digest: expect.stringMatching(/^[0-9a-f]{40}$/), written: expect.any(String) },
    });
  });

  it('tells a conclusion written again with the same words from the one that stood (a next round that agrees)', async () => {
    const place = await makePlace(repo, 'question', 'again', 'session');
    await writeFile(join(place.path, 'conclusion.md'), 'Use x.\n');
    const first = await read(await deliverableRequest(place, { type: 'conclusion' }));
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toEqual(first);
    await sleep(20);
    await writeFile(join(place.path, 'conclusion.md'), 'Use x.\n');
    const second = await read(await deliverableRequest(place, { type: 'conclusion' }));
    expect(second.facts!.digest).toBe(first.facts!.digest);
    expect(fingerprint(second)).not.toBe(fingerprint(first));
    // Committed, the same: the working file that holds the committed words dates them.
    await repo.commit(place.path, { 'conclusion.md': 'Use x.\n' });
    const committed = await read(await deliverableRequest(place, { type: 'conclusion' }));
    expect(committed.facts).toMatchObject({ committed: true, written: expect.any(String) });
    await sleep(20);
    await writeFile(join(place.path, 'conclusion.md'), 'Use x.\n');
    expect(fingerprint(await read(await deliverableRequest(place, { type: 'conclusion' })))).not.toBe(fingerprint(committed));
  });

  it('reads the committed file first, and the working one when the committed one is empty', async () => {
    const place = await makePlace(repo, 'question', 'committed', 'session');
    await repo.commit(place.path, { 'conclusion.md': 'Settled.\n' });
    await writeFile(join(place.path, 'conclusion.md'), '');
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toMatchObject({ present: true, facts: { committed: true } });
    await repo.commit(place.path, { 'conclusion.md': '' });
    await writeFile(join(place.path, 'conclusion.md'), 'Settled again.\n');
    expect(await read(await deliverableRequest(place, { type: 'conclusion' }))).toMatchObject({ present: true, facts: { committed: false } });
  });
});
