import { describe, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentDriver, AgentHandle } from '../../../core/api/agent.js';
import type { DeliverableRequest } from '../../../core/api/hooks.js';
import type { FlumePlugin } from '../../../core/api/plugin.js';
import { defineDeliverable } from '../../../core/api/deliverable.js';
import { commit, git } from '../../helpers/repo.js';
import { prng } from '../../helpers/prng.js';
import { HANG_MS } from '../../helpers/wait.js';
import { repoFor } from './helpers.js';

// A property test of where a stage's deliverable appears against what flume reads. Each place's agent
// ends every turn at once without its deliverable ("Done.": a stage stopped short), and the test makes
// the deliverable itself (the code stage's commit, then the submission's landing on main) at a
// moment its schedule names: just before or just after one of the engine's own readings (the n-th
// reading of that stage's deliverable, the n-th reading of its agent, its agent's start). Steps run
// in this process, as the supervisor's passes run them, with the real engine, drivers and readers;
// only the moment of each deliverable is the test's. Whatever the moment, every stage whose
// deliverable exists ends delivered and the launch finishes; no stage is recorded delivered before
// its deliverable exists. Each run is seeded; FLUME_INTERLEAVING_SEED=<seed> replays one alone.

type Point = 'deliverable' | 'agent' | 'start';
type When = 'before' | 'after';
/** When the test makes one deliverable: at the n-th call of `point` once the stage runs, before or after it. */
interface Moment {
  point: Point;
  n: number;
  when: When;
}
interface Schedule {
  commit: Moment;
  land: Moment;
}

const POINTS: Point[] = ['deliverable', 'agent', 'start'];
const SEEDS = process.env.FLUME_INTERLEAVING_SEED ? [Number(process.env.FLUME_INTERLEAVING_SEED)] : [1, 2];
/** Places per seed, each with a schedule of its own; the first ones of the first seed are the sharp edges. */
const PLACES = 4;
/** Steps of a stage after which its deliverable is made whatever its moment (one that never came). */
const LATE = 6;
/** A launch that took every moment and has not finished after this many steps is stuck. */
const STEPS_AFTER = 12;

/** The moments that broke flume before: a landing made just before, or just after, its stage's start reads it. */
const EDGES: Schedule[] = [
  { commit: { point: 'agent', n: 1, when: 'after' }, land: { point: 'deliverable', n: 1, when: 'before' } },
  { commit: { point: 'deliverable', n: 1, when: 'after' }, land: { point: 'start', n: 1, when: 'before' } },
  { commit: { point: 'start', n: 1, when: 'after' }, land: { point: 'deliverable', n: 1, when: 'after' } },
];

function schedules(seed: number): Schedule[] {
  const random = prng(seed);
  const moment = (): Moment => ({ point: POINTS[Math.floor(random() * POINTS.length)]!, n: 1 + Math.floor(random() * 3), when: random() < 0.5 ? 'before' : 'after' });
  const drawn = Array.from({ length: PLACES }, () => ({ commit: moment(), land: moment() }));
  return seed === SEEDS[0] ? [...EDGES, ...drawn].slice(0, PLACES) : drawn;
}

const describeMoment = (m: Moment) => `${m.when} the ${m.point === 'start' ? 'agent start' : `${m.point} reading`} #${m.n}`;

describe('a deliverable made around what flume reads', { timeout: HANG_MS * 10 }, () => {
  for (const seed of SEEDS) {
    it(`ends every stage whose deliverable exists, and none before it (seed ${seed})`, async ({ expect, onTestFinished }) => {
      const two = {
        name: 'two',
        stages: [
          { name: 'code', prompt: 'Make the change: {brief}', deliverable: 'commit' },
          { name: 'submission', prompt: 'Land {branch}.', deliverable: 'landing' },
        ],
      };
      const t = repoFor({ onTestFinished }, { onPrompt: [{ match: '.', actions: [{ say: 'Done.' }] }] }, { kinds: [two] });
      process.env.FLUME_STATE_DIR = t.state;
      const { openRepository } = await import('../../../core/config/repository.js');
      const { advance } = await import('../../../core/engine/stage/step.js');
      const { defaultPreset } = await import('../../../plugins/defaults.js');

      const plan = schedules(seed);
      const names = plan.map((_, i) => `p${i}`);
      const places = new Map<string, { path: string; branch: string; schedule: Schedule; calls: Record<string, number>; made: Partial<Record<'commit' | 'land', number>> }>();
      // The deliverable of a stage: the code stage's commit, the submission's landing.
      const deliverableOf = (stage: string | undefined): 'commit' | 'land' => (stage === 'submission' ? 'land' : 'commit');
      const recorded = (name: string) => t.record(`two--${name}`)?.stage?.name as string | undefined;
      const make = (name: string, what: 'commit' | 'land') => {
        const place = places.get(name)!;
        if (place.made[what] !== undefined) return;
        if (what === 'commit') commit(place.path, `${name}.txt`, name);
        else git(t.repo, 'merge', '-q', '--no-edit', place.branch);
        place.made[what] = Date.now();
      };
      /** Runs `call` at a point of the place's: its stage's deliverable is made before or after it when its schedule says so. */
      const at = async <T,>(name: string | undefined, stage: string | undefined, point: Point, call: () => Promise<T>): Promise<T> => {
        const place = name ? places.get(name) : undefined;
        if (!place) return call();
        const what = deliverableOf(stage);
        // The landing only once the commit is there: nothing else lands.
        if (what === 'land' && place.made.commit === undefined) return call();
        const key = `${what}:${point}`;
        place.calls[key] = (place.calls[key] ?? 0) + 1;
        const moment = place.schedule[what];
        const now = moment.point === point && moment.n === place.calls[key];
        if (now && moment.when === 'before') make(name!, what);
        const result = await call();
        if (now && moment.when === 'after') make(name!, what);
        return result;
      };
      const nameOfPath = (path: string) => names.find((name) => places.get(name)?.path === path);
      const around: FlumePlugin = {
        name: 'test:around',
        apply(flume) {
          const driver = flume.agents.get('claude-code')!;
          const of = (handle: AgentHandle) => nameOfPath(handle.cwd);
          const wrapped: AgentDriver = {
            ...driver,
            start: (request, host) => at(nameOfPath(request.place.path), request.stage.name, 'start', () => driver.start(request, host)),
            read: (handle) => at(of(handle), of(handle) && recorded(of(handle)!), 'agent', () => driver.read(handle)),
          };
          delete wrapped.readMany;
          flume.agents.add(wrapped, { replace: true });
          for (const type of ['commit', 'landing']) {
            const reader = flume.deliverables.get(type)!;
            flume.deliverables.add(defineDeliverable({ ...reader, read: (request: DeliverableRequest) => at(nameOfPath(request.place.path), request.stage.name, 'deliverable', () => reader.read(request)) }), { replace: true });
          }
        },
      };

      for (const [i, name] of names.entries()) {
        // The launch starts the code stage in its own process: the commit's moments are the readings
        // after it (one whose moment never comes is made late, as below).
        const record = await t.launch('two', name, `Add ${name}.txt.`);
        places.set(name, { path: record.path, branch: record.branch, schedule: plan[i]!, calls: {}, made: {} });
      }
      const repository = await openRepository(t.repo, [...(await defaultPreset()), around]);

      // Steps, as passes take them, until every launch finished; a launch that has had both its
      // deliverables for STEPS_AFTER steps and is not finished is stuck.
      const stepsSince = new Map<string, number>();
      // The steps bound the run (LATE, STEPS_AFTER); the clock only guards a hang, far above them.
      for (const deadline = Date.now() + HANG_MS * 8; ; ) {
        const open = names.filter((name) => !t.record(`two--${name}`)?.finished);
        if (open.length === 0) break;
        for (const name of open) {
          await advance(repository, `two--${name}`).catch((error) => {
            throw new Error(`seed ${seed}, ${name}: a step failed: ${error.message}`);
          });
          const place = places.get(name)!;
          // A moment that never comes (a reading the engine did not take again) comes late: the
          // deliverable is made after LATE steps of its stage, as an agent's late work would be.
          const stage = recorded(name);
          const steps = `${stage}:steps`;
          place.calls[steps] = (place.calls[steps] ?? 0) + 1;
          if (place.calls[steps]! > LATE && !t.record(`two--${name}`)?.stage?.delivered && (stage === 'code' || place.made.commit !== undefined)) make(name, deliverableOf(stage));
          if (place.made.land !== undefined) stepsSince.set(name, (stepsSince.get(name) ?? 0) + 1);
          if ((stepsSince.get(name) ?? 0) > STEPS_AFTER && !t.record(`two--${name}`)?.finished) {
            const record = t.record(`two--${name}`);
            throw new Error(`seed ${seed}, ${name} (commit ${describeMoment(place.schedule.commit)}, landing ${describeMoment(place.schedule.land)}): landed ${STEPS_AFTER} steps ago and not finished: ${record?.stage?.name} ${JSON.stringify({ delivered: record?.stage?.delivered, waiting: record?.stage?.waiting, presentAtStart: record?.stage?.presentAtStart })}`);
          }
        }
        if (Date.now() > deadline) throw new Error(`seed ${seed}: not every launch finished: ${open.join(', ')}`);
        // The agents' turns end in their own time: a moment between steps, as between passes.
        await sleep(200);
      }

      for (const name of names) {
        const place = places.get(name)!;
        const delivered = t.events(`two--${name}`).filter((e) => e.event === 'mark-delivered');
        const label = `seed ${seed}, ${name} (commit ${describeMoment(place.schedule.commit)}, landing ${describeMoment(place.schedule.land)})`;
        expect(delivered.map((e) => e.stage), label).toEqual(['code', 'submission']);
        expect(Date.parse(delivered[0]!.at), `${label}: code delivered before its commit`).toBeGreaterThanOrEqual(place.made.commit!);
        expect(Date.parse(delivered[1]!.at), `${label}: submission delivered before its landing`).toBeGreaterThanOrEqual(place.made.land!);
      }
    });
  }
});
