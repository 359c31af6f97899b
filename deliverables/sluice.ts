/**
 * The sluice reader: a `landing` deliverable read from sluice's own record of the place's branch,
 * where sluice is installed in the repository (DESIGN "Ruling (landing record)"; README "The sluice
 * record"). sluice lands; flume only reads what it recorded:
 * `<git-common-dir>/sluice/landings/<branch>.json`, shaped by `sluice-record.schema.json`.
 *
 * - It takes over the `landing` reader registered before it (`replace`) and defers to it: sluice is
 *   installed when its folder `<git-common-dir>/sluice/` exists; elsewhere the reader it replaced
 *   (the git reader, `landing.ts`) judges.
 * - No record of the branch (not submitted yet, or landed by another road): git's judgement, with
 *   the record's path to watch, so its first writing is seen.
 * - `landed` at the branch's head on the place's target: present. `queued`/`checking`: absent.
 *   `refused` at the head: absent, and the stage stops short on sluice's reasons (`needs`).
 * - A record that fails the schema, or names another branch, is BAD_RECORD naming this reader.
 */
import { readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineDeliverable, definePlugin, FlumeError, flumeError, schemaCheck, type DeliverableReader, type DeliverableReading, type DeliverableRequest, type FlumePlugin, type SchemaCheck } from '../core/index.js';
import { gitLanding } from './landing.js';

const NAME = 'flume:deliverable:sluice';

/** sluice's record of one branch (`sluice-record.schema.json`, version 1). */
export interface SluiceRecord {
  version: 1;
  branch: string;
  target: string;
  head: string;
  state: 'queued' | 'checking' | 'landed' | 'refused';
  submittedAt: string;
  updatedAt: string;
  checks?: Array<{ name: string; state: 'pending' | 'running' | 'passed' | 'failed'; summary?: string }>;
  landed?: { commit: string; at: string };
  refused?: { reasons: string[]; at: string };
}

/** Where sluice keeps its record of `branch` in a repository whose git common dir is `commonDir`. */
export function sluiceRecordPath(commonDir: string, branch: string): string {
  return join(commonDir, 'sluice', 'landings', `${branch}.json`);
}

/**
 * Reads `landing` from sluice's record where sluice is installed: it replaces the `landing` reader
 * registered before it, and hands the reading to that one where sluice is not installed.
 */
export function sluiceLandingDeliverable(): FlumePlugin {
  return definePlugin({
    name: NAME,
    apply(flume) {
      const replaced = flume.deliverables.get('landing');
      flume.deliverables.add(defineDeliverable({ type: 'landing', landing: true, read: (request) => readSluice(request, replaced) }), { replace: true });
    },
  });
}

async function readSluice(request: DeliverableRequest, replaced: DeliverableReader | undefined): Promise<DeliverableReading | undefined> {
  if (!existsSync(join(request.commonDir, 'sluice'))) return replaced?.read(request);
  const file = sluiceRecordPath(request.commonDir, request.place.branch);
  const readFrom = [file];
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw bad(file, [`unreadable (${error.code ?? error.message})`]);
  });
  if (text === undefined) {
    const git = await gitLanding(request);
    return { ...git, facts: { ...git.facts, sluice: 'no record' }, readFrom };
  }
  const record = await parse(file, text, request.place.branch);
  return { ...judge(record, request), readFrom };
}

/** What the record says of the branch as it stands at `request.head`. */
function judge(record: SluiceRecord, request: DeliverableRequest): Omit<DeliverableReading, 'readFrom'> {
  const { place, head } = request;
  const short = (sha: string) => sha.slice(0, 7);
  const facts = { by: 'sluice', sluice: record.state, target: record.target, head: record.head, ...(record.landed ? { commit: record.landed.commit } : {}) };
  if (record.target !== place.target) {
    return { present: false, what: `sluice: ${record.state} on ${record.target}`, facts, problem: `sluice's record is for ${record.target}, but the place's work lands on ${place.target}: submit it to ${place.target}` };
  }
  const moved = record.head !== head;
  if (record.state === 'landed') {
    if (!moved) return { present: true, what: `landed on ${record.target} by sluice (${short(record.landed!.commit)})`, facts };
    return { present: false, what: `sluice landed ${short(record.head)}; the branch moved on to ${short(head)}`, facts, problem: `the branch has commits sluice did not land (it landed ${short(record.head)}, the head is ${short(head)}): submit it again` };
  }
  if (record.state === 'refused') {
    const reasons = record.refused!.reasons.join('; ');
    if (moved) return { present: false, what: `sluice refused ${short(record.head)}; the branch moved on to ${short(head)}`, facts, problem: `sluice refused ${short(record.head)} (${reasons}); the branch has moved on since: submit it again` };
    return { present: false, what: `refused by sluice`, facts: { ...facts, reasons: record.refused!.reasons }, needs: `sluice refused to land ${place.branch}: ${reasons}` };
  }
  const words = record.state === 'queued' ? 'queued in sluice' : 'sluice is checking it';
  return { present: false, what: moved ? `${words} at ${short(record.head)}; the head is ${short(head)}` : words, facts };
}

async function parse(file: string, text: string, branch: string): Promise<SluiceRecord> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad(file, [`not JSON (${(error as Error).message})`]);
  }
  const problems = await check(value);
  if (problems.length) throw bad(file, problems);
  const record = value as SluiceRecord;
  if (record.branch !== branch) throw bad(file, [`/branch is ${record.branch}, but the file is the record of ${branch}`]);
  return record;
}

function bad(file: string, problems: string[]): FlumeError {
  return flumeError('BAD_RECORD', { file, reader: NAME, problems: problems.join('; ') }, {
    details: { file, reader: NAME, problems },
  });
}

let checker: SchemaCheck | undefined;
/** The record's problems by the published schema, compiled on the first record read. */
const check = (value: unknown) => (checker ??= schemaCheck(sluiceRecordSchema()))(value);

/** The published schema, `schemas/sluice-record.schema.json` in flume's package. */
export function sluiceRecordSchema(): Record<string, unknown> {
  // From the source (deliverables/) and from the build (dist/deliverables/) alike.
  for (const up of ['..', '../..']) {
    const path = fileURLToPath(new URL(`${up}/schemas/sluice-record.schema.json`, import.meta.url));
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8'));
  }
  throw flumeError('IO_FAILED', {}, {
    variant: 'sluiceSchema',
  });
}
