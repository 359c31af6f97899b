/**
 * The sluice reader against a fake `sluice` (test/helpers/fake-sluice) on PATH, run in real places
 * of real repositories: every record it writes passes the published schema; landed is present,
 * queued and checking are absent, refused stops the stage short with sluice's reasons, a malformed
 * record is BAD_RECORD naming the reader, and with sluice absent (or holding no record of the
 * branch) git judges. The built-in readers are applied as the default preset applies them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import AjvModule from 'ajv';
import { createFlume, type Flume } from '../../../core/api/plugin.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import type { PlaceRecord } from '../../../core/api/record.js';
import { decide } from '../../../core/engine/stage/decide.js';
import { deliverablePlugins, sluiceRecordPath } from '../../../deliverables/index.js';
import { deliverableRequest, makePlace, makeRepo, type TestRepo } from '../../helpers/deliverable-request.js';
import { withFakeSluice } from '../../helpers/fake-sluice/index.js';
import { PROJECT } from '../../helpers/repo.js';

let repo: TestRepo;
let flume: Flume;
const env = withFakeSluice();
const schema = JSON.parse(readFileSync(join(PROJECT, 'schemas', 'sluice-record.schema.json'), 'utf8'));
// The published schema checked by ajv of the test's own (date-time as anything Date.parse takes with a time).
const validate = new AjvModule.default({ allErrors: true, formats: { 'date-time': (v: string) => v.includes('T') && !Number.isNaN(Date.parse(v)) } }).compile(schema);

/** Runs the fake sluice in `cwd` (found on PATH, as an agent in a place finds it). */
const sluice = (cwd: string, ...args: string[]) => execFileSync('sluice', args, { cwd, env, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const sluiceWith = (cwd: string, input: string, ...args: string[]) => execFileSync('sluice', args, { cwd, env, input, encoding: 'utf8' });
const landing = async (place: PlaceRecord) => flume.hooks.readDeliverable.for('landing').promise(await deliverableRequest(place, { type: 'landing' }));
/** The record the fake wrote, checked against the published schema. */
function record(place: PlaceRecord): Record<string, any> {
  const value = JSON.parse(readFileSync(sluiceRecordPath(join(repo.root, '.git'), place.branch), 'utf8'));
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  return value;
}

beforeAll(async () => {
  repo = await makeRepo();
  flume = await createFlume({ plugins: deliverablePlugins() });
});
afterAll(() => repo.remove());

describe('with sluice absent', () => {
  it('is git\'s judgement, untouched: the sluice reader answers nothing', async () => {
    const place = await makePlace(repo, 'fix', 'no-sluice');
    await repo.commit(place.path, { 'a.txt': 'a\n' }, 'a');
    expect(await landing(place)).toEqual({ present: false, what: '1 patch not on main', facts: { target: 'main', unlanded: 1, by: 'patch' } });
    await repo.git(['merge', '--quiet', '--no-ff', '-m', 'by hand', place.branch]);
    expect(await landing(place)).toEqual({ present: true, what: 'landed on main', facts: { target: 'main', unlanded: 0, by: 'patch-and-content' } });
  });
});

describe('with sluice installed', () => {
  beforeAll(() => void sluice(repo.root, 'install'));

  it('holding no record of the branch: git judges, and the record\'s path is named to watch', async () => {
    const place = await makePlace(repo, 'fix', 'unsubmitted');
    await repo.commit(place.path, { 'b.txt': 'b\n' }, 'b');
    const file = sluiceRecordPath(join(repo.root, '.git'), place.branch);
    expect(await landing(place)).toEqual({ present: false, what: '1 patch not on main', facts: { target: 'main', unlanded: 1, by: 'patch', sluice: 'no record' }, readFrom: [file] });
  });

  it('queued, then checking: not landed yet; landed: present, naming the target\'s commit', async () => {
    const place = await makePlace(repo, 'fix', 'lands');
    const head = await repo.commit(place.path, { 'c.txt': 'c\n' }, 'c');
    expect(sluice(place.path, 'submit')).toBe('submitted fix/lands to main\n');
    expect(record(place)).toMatchObject({ state: 'queued', head, branch: 'fix/lands', target: 'main' });
    expect(await landing(place)).toMatchObject({ present: false, what: 'queued in sluice', facts: { sluice: 'queued', head } });
    sluice(place.path, 'check', 'fix/lands');
    expect(record(place).state).toBe('checking');
    expect(await landing(place)).toMatchObject({ present: false, what: 'sluice is checking it', facts: { sluice: 'checking' } });
    sluice(place.path, 'land', 'fix/lands');
    const landed = record(place);
    const commit = await repo.git(['rev-parse', 'main']);
    expect(landed).toMatchObject({ state: 'landed', landed: { commit } });
    const reading = await landing(place);
    expect(reading).toMatchObject({ present: true, what: `landed on main by sluice (${commit.slice(0, 7)})`, facts: { sluice: 'landed', commit, head } });
    expect(reading?.needs).toBeUndefined();
    expect(JSON.parse(sluice(place.path, 'status', '--json', 'fix/lands'))).toEqual(landed);
  });

  it('landed, but the branch moved on since: not landed, and says to submit again', async () => {
    const place = await makePlace(repo, 'fix', 'moved');
    await repo.commit(place.path, { 'd.txt': 'd\n' }, 'd');
    sluice(place.path, 'submit');
    sluice(place.path, 'land', 'fix/moved');
    await repo.commit(place.path, { 'e.txt': 'e\n' }, 'e after landing');
    const reading = await landing(place);
    expect(reading).toMatchObject({ present: false, facts: { sluice: 'landed' } });
    expect(reading?.problem).toMatch(/commits sluice did not land .*submit it again/);
  });

  it('squashed by sluice (git cherry cannot see it): landed, by sluice\'s word', async () => {
    const place = await makePlace(repo, 'fix', 'squashed');
    await repo.commit(place.path, { 'f.txt': 'f\n' }, 'f');
    await repo.commit(place.path, { 'g.txt': 'g\n' }, 'g');
    sluice(place.path, 'submit');
    // What a squashing sluice does: one commit of the branch's work on the target, then its record.
    await repo.git(['merge', '--quiet', '--squash', place.branch]);
    await repo.git(['commit', '--quiet', '-m', 'squash']);
    const landed = JSON.stringify({ ...record(place), state: 'landed', landed: { commit: await repo.git(['rev-parse', 'main']), at: new Date().toISOString() } });
    sluiceWith(place.path, landed, 'write', 'fix/squashed');
    expect((await (await deliverableRequest(place, { type: 'landing' })).unlanded())).toBe(2);
    expect(await landing(place)).toMatchObject({ present: true });
  });

  it('refused: absent, and the stage stops short on sluice\'s reasons', async () => {
    const place = await makePlace(repo, 'fix', 'refused');
    await repo.commit(place.path, { 'h.txt': 'h\n' }, 'h');
    sluice(place.path, 'submit');
    sluice(place.path, 'refuse', 'fix/refused', 'test failed: h.test.ts', 'conflicts with main in h.txt');
    expect(record(place)).toMatchObject({ state: 'refused', refused: { reasons: ['test failed: h.test.ts', 'conflicts with main in h.txt'] } });
    const reading = await landing(place);
    const needs = 'sluice refused to land fix/refused: test failed: h.test.ts; conflicts with main in h.txt';
    expect(reading).toMatchObject({ present: false, what: 'refused by sluice', needs });
    // What the engine does with it: the stage stops short on those words, whatever its agent does.
    const kind = { name: 'fix', stages: [{ name: 'code', prompt: 'p', deliverable: 'commit' as const }, { name: 'submission', prompt: 'p', deliverable: 'landing' as const }] };
    const stage = { ...place.stage!, index: 1, name: 'submission', prompt: 'p' };
    const limits = { stuckAfterMs: 60_000, promptTimeoutMs: 3_000, fixRounds: 2 };
    const facts = { now: Date.now(), deliverable: reading, agent: { state: 'working' as const, lastActivity: new Date().toISOString() }, prompt: 'taken' as const };
    expect(decide(kind, { ...place, stage }, facts, limits)).toEqual({ type: 'mark-waiting', needs });
    expect(decide(kind, { ...place, stage: { ...stage, waiting: { needs, at: 'now' } } }, facts, limits)).toMatchObject({ type: 'wait' });
    // Submitted again after a fix: queued, and no longer short.
    await repo.commit(place.path, { 'h.txt': 'h fixed\n' }, 'fix h');
    expect((await landing(place))?.needs).toBeUndefined();
    sluice(place.path, 'submit');
    expect(await landing(place)).toMatchObject({ present: false, what: 'queued in sluice' });
  });

  it('a record that fails the schema, is not JSON, or names another branch: BAD_RECORD naming the reader', async () => {
    const place = await makePlace(repo, 'fix', 'malformed');
    const head = await repo.commit(place.path, { 'i.txt': 'i\n' }, 'i');
    const good = { version: 1, branch: 'fix/malformed', target: 'main', head, state: 'queued', submittedAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' };
    expect(validate(good)).toBe(true);
    const cases: Array<[string, string]> = [
      [JSON.stringify({ ...good, state: 'merged' }), '/state must be equal to one of the allowed values'],
      [JSON.stringify({ ...good, state: 'landed' }), "must have required property 'landed'"],
      [JSON.stringify({ ...good, state: 'refused', refused: { reasons: [], at: '2026-01-01T00:00:00Z' } }), '/refused/reasons must NOT have fewer than 1 items'],
      [JSON.stringify({ ...good, head: 'HEAD' }), '/head must match pattern'],
      [JSON.stringify({ ...good, updatedAt: 'yesterday' }), '/updatedAt must match format "date-time"'],
      [JSON.stringify({ ...good, branch: 'fix/other' }), '/branch is fix/other, but the file is the record of fix/malformed'],
      ['{ "version": 1, ', 'not JSON'],
    ];
    for (const [content, problem] of cases) {
      // The schema alone refuses all but the wrong branch (which only the file's name tells) and the broken JSON.
      if (problem !== 'not JSON') expect(validate(JSON.parse(content)), content).toBe(problem.startsWith('/branch is'));
      sluiceWith(place.path, content, 'write', 'fix/malformed');
      const error = await landing(place).then(() => undefined, (e: unknown) => e as { code: string; plugin: string; message: string });
      expect(error, content).toMatchObject({ code: 'BAD_RECORD', plugin: 'flume:deliverable:sluice' });
      expect(error!.message).toContain(problem);
      expect(error!.message).toContain(sluiceRecordPath(join(repo.root, '.git'), 'fix/malformed'));
    }
  });
});

describe('the published schema', () => {
  it('is in the package: listed in files and exports', () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'));
    expect(pkg.files).toContain('schemas');
    expect(pkg.exports['./sluice-record.schema.json']).toBe('./schemas/sluice-record.schema.json');
  });
});
