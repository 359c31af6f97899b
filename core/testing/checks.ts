/**
 * The driver conformance checks: what flume relies on a driver for, each judged against what the
 * harness sees of the real agent without the driver (its scripted backend, its own record), through
 * the engine functions flume itself runs (a stage's start and step, tell, stop).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isFlumeError } from '../api/errors.js';
import { processRunning } from '../support/process.js';
import { awaitPrompt } from '../engine/stage/deliver.js';
import { stopAgent, tell } from '../engine/stage/operate.js';
import type { AgentHandle, AgentReading } from '../api/agent.js';
import type { PlaceRecord } from '../api/record.js';
import { pidOf, type Bench, type Place } from './bench.js';
import { timeoutsOf, type ConformanceHarness } from './harness.js';

/**
 * What the `characters` check's tells start with: each a key to some agent when typed (`!` shell
 * mode, `#` memory, `/` a command (`/init` one every agent flume drives has), `?` shortcuts, `@` a
 * file, a TAB completion), or text a reader could mangle (a backslash, a bracket, a letter outside
 * ASCII).
 */
export const CHARACTER_STARTS = ['!', '?', '#', '/', '/init ', '@', '\\', '\t', '[', 'é'] as const;

/** Throws the check's ConformanceFailure with what was seen. */
type Fail = (seen: string) => never;

/** One check: a name that says what it proves, and a run that throws a ConformanceFailure when it does not hold. */
export interface ConformanceCheck {
  /** Short and stable (`taken`, `resend`, …), for picking one check to run. */
  id: string;
  /** `<id>: <what it proves>`. */
  name: string;
  run(): Promise<void>;
}

/** A check that did not hold: names the check and what was seen. */
export class ConformanceFailure extends Error {
  constructor(readonly check: string, seen: string) {
    super(`driver conformance, ${check}: ${seen}`);
    this.name = 'ConformanceFailure';
  }
}

/** The checks, in the order they share agents (each starts what it needs when run alone). */
export function conformanceChecks(harness: ConformanceHarness, bench: Bench): ConformanceCheck[] {
  const t = timeoutsOf(harness);
  const check = (id: string, proves: string, run: (fail: Fail) => Promise<void>): ConformanceCheck => ({
    id,
    name: `${id}: ${proves}`,
    run: () => run((seen) => { throw new ConformanceFailure(id, seen); }),
  });
  const truth = async (place: Place) => [...(await place.setup.taken())];
  /** What the harness sees the agent took, once `until` holds of it or the time is up. */
  const truthUntil = async (place: Place, until: (taken: string[]) => boolean, ms = t.promptMs) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const taken = await truth(place);
      if (until(taken) || Date.now() >= deadline) return taken;
      await sleep(200);
    }
  };
  /** The driver's reading once `until` holds of it, or the last one when the time is up. */
  const readingUntil = async (place: Place, handle: AgentHandle, until: (reading: AgentReading) => boolean): Promise<AgentReading> => {
    const deadline = Date.now() + t.settleMs;
    for (;;) {
      const reading = await place.driver.read(handle);
      if (until(reading) || Date.now() >= deadline) return reading;
      await sleep(250);
    }
  };
  /** The place's handle once its prompt was taken, as the agent's own turn ended (`idle`) when asked. */
  const takenAgent = async (place: Place, fail: Fail, idle: boolean) => {
    const record = await place.record();
    const handle = record.stage?.agent;
    if (record.stage?.delivery !== 'taken' || !handle?.pane) fail(`this check needs the "${place.scenario}" agent up with its first prompt taken, and its stage reads ${stageOf(record, place)}`);
    if (idle) {
      const reading = await readingUntil(place, handle, (r) => r.state === 'idle');
      if (reading.state !== 'idle') fail(`the "${place.scenario}" agent answered its prompt and ended its turn, yet driver.read says ${JSON.stringify(reading)} after ${t.settleMs} ms`);
    }
    return handle;
  };

  return [
    check('taken', "a prompt counts as taken once the agent's own record holds it, and only then", async (fail: Fail) => {
      const place = await bench.place('answers');
      const record = await place.record();
      const stage = record.stage;
      if (stage?.delivery !== 'taken') fail(`the agent takes every prompt, yet flume's stage start did not confirm it: the stage reads ${stageOf(record, place)}; the agent took ${JSON.stringify(await truth(place))}`);
      const taken = await truthUntil(place, (seen) => has(seen, place.prompt));
      if (!has(taken, place.prompt)) fail(`the driver confirmed the prompt, but the agent has not taken it (it took ${JSON.stringify(taken)}): a prompt is taken only when the agent's own record holds it`);
      if (count(taken, place.prompt) !== 1) fail(`the agent took the prompt ${count(taken, place.prompt)} times from ${stage.sends} sending(s); it must take it once`);
      const never = `Never sent ${letters()}`;
      const state = await place.driver.confirm({ handle: stage.agent!, text: never, since: stage.startedAt });
      if (state === 'taken') fail(`driver.confirm says "taken" for a text nobody sent (${JSON.stringify(never)})`);
    }),

    check('screen', 'text typed into the input box but never submitted is not taken; resend then submits it, once', async (fail: Fail) => {
      const place = await bench.place('answers');
      const handle = await takenAgent(place, fail, true);
      const text = `Typed not sent ${letters()}`;
      const since = new Date().toISOString();
      await bench.harness.host.type(handle.pane!, text);
      const shown = await screenUntil(bench, handle, (screen) => screen.includes(text), t.promptMs);
      if (!shown) fail(`the host typed ${JSON.stringify(text)} into the pane, but its screen never showed it; the check needs a host that types and reads screens`);
      for (const until = Date.now() + t.draftMs; Date.now() < until; await sleep(200)) {
        const state = await place.driver.confirm({ handle, text, since });
        if (state === 'taken') fail(`driver.confirm says "taken" for text that sits in the input box, never submitted (the agent took ${JSON.stringify(await truth(place))}): the screen alone never makes a prompt taken`);
      }
      if (has(await truth(place), text)) fail(`the harness says the agent took ${JSON.stringify(text)}, which was typed and never submitted: check the scenario`);
      await place.driver.resend(handle, text);
      const state = await awaitPrompt(place.repository.flume, handle, text, since, t.promptMs);
      const taken = await truthUntil(place, (seen) => has(seen, text));
      if (state !== 'taken') fail(`driver.resend did not get the text sitting in the input box taken: confirm reads "${state}" ${t.promptMs} ms later, and the agent took ${JSON.stringify(taken)}`);
      if (count(taken, text) !== 1) fail(`after driver.resend the agent took ${JSON.stringify(taken)}: the text in the box must be submitted as it is, once (not typed again beside itself)`);
    }),

    check('characters', 'a tell reaches the agent as the text sent, whatever characters it starts with or holds, or is refused (BAD_TEXT) with nothing typed', async (fail: Fail) => {
      // Typed key by key, some characters are keys to an agent: `!` its shell mode (the words after it
      // run as a command), `?` its shortcuts, `#`, `/` and `@` its menus, a TAB its completion.
      const place = await bench.place('answers');
      await takenAgent(place, fail, true);
      const wrong: string[] = [];
      for (const start of CHARACTER_STARTS) {
        const marker = `conformance-bang-${letters()}`;
        // No control character but where the TAB is tried: a host may type text without one another way.
        // A TAB goes inside (a tell is sent trimmed, so one at the start would not be sent).
        // It ends with `@`, where a menu opens at the cursor.
        const text = `${start === '\t' ? 'A\tTAB: ' : start}touch ${marker} ? # / @ \\ [x] {y} (z) é日本 ${letters()} @`;
        const handle = await takenAgent(place, fail, true);
        const before = count(await truth(place), text);
        const told = await tell(place.repository, place.key, text).then((result) => result.sends, (error: unknown) => error);
        const taken = await truthUntil(place, (seen) => count(seen, text) > before);
        const shown = JSON.stringify(text);
        const refused = isFlumeError(told) && told.code === 'BAD_TEXT';
        if (existsSync(join((await place.record()).path, marker))) wrong.push(`the tell ${shown} ran as a shell command in the place (it made ${marker}): a caller's words must never become a command`);
        // A text the agent would take as its own command may be refused instead, with nothing typed.
        else if (refused && (count(taken, text) !== before || (await place.driver.hasDraft(handle)))) wrong.push(`the tell ${shown} was refused (${describe(told)}), yet it reached the agent or was left typed`);
        else if (refused) continue;
        else if (typeof told !== 'number') wrong.push(`the tell ${shown} failed with ${describe(told)}; the agent took ${JSON.stringify(taken.slice(-2))}`);
        else if (count(taken, text) !== before + 1) wrong.push(`the tell ${shown} was reported taken after ${told} sending(s), but the agent took ${JSON.stringify(taken.slice(-2))}: it must reach the agent once, as the text sent`);
        const reading = await readingUntil(place, handle, (r) => r.state === 'idle');
        if (reading.state !== 'idle') {
          wrong.push(`after the tell ${shown} the agent did not end its turn: driver.read says ${JSON.stringify(reading)}`);
          break;
        }
      }
      if (wrong.length) fail(`${wrong.join('\n')}${await screenOf(bench, await place.record())}`);
    }),

    check('resend', 'a prompt the agent did not take is sent once more, and then taken', async (fail: Fail) => {
      const place = await bench.place('drops-first');
      const record = await place.record();
      const taken = await truthUntil(place, (seen) => has(seen, place.prompt));
      if (record.stage?.delivery === 'taken' && !has(taken, place.prompt)) fail(`flume was told the prompt was taken, but the agent never took it (it took ${JSON.stringify(taken)}): confirm must read the agent's own record`);
      if (record.stage?.delivery !== 'taken') fail(`the agent drops only the first sending, so flume's second sending should be taken; the stage reads ${stageOf(record, place)}, and the agent took ${JSON.stringify(taken)}${await screenOf(bench, record)}`);
      if (record.stage.sends !== 2) fail(`the agent dropped the first sending, yet the stage reads taken after ${record.stage.sends} sending(s)`);
      if (count(taken, place.prompt) !== 1) fail(`the agent took the prompt ${count(taken, place.prompt)} times (${JSON.stringify(taken)}); the second sending must be taken once`);
    }),

    check('never-started', 'a prompt not taken after two sendings is reported never started', async (fail: Fail) => {
      const place = await bench.place('drops-all');
      const record = await place.record();
      const taken = await truth(place);
      if (record.stage?.delivery === 'taken') fail(`flume was told the prompt was taken, but the agent drops every prompt (it took ${JSON.stringify(taken)})`);
      if (taken.length) fail(`the harness says the agent took ${JSON.stringify(taken)} though it drops every prompt: check the scenario`);
      if (record.stage?.delivery !== 'never-started' || record.stage.sends !== 2) fail(`an agent that is up and took neither of two sendings is never started; the stage reads ${stageOf(record, place)}${await screenOf(bench, record)}`);
      // Never started means nothing is left typed, one Enter away from work behind the record; a tell
      // given up on likewise.
      const handle = record.stage.agent!;
      if (await place.driver.hasDraft(handle)) fail(`the stage was given up as never started, yet its agent's input box still holds text${await screenOf(bench, record)}`);
      const text = `Conformance tell ${letters()}`;
      const error = await tell(place.repository, place.key, text).then(() => undefined, (e: unknown) => e);
      if (!isFlumeError(error) || error.code !== 'PROMPT_NOT_TAKEN') fail(`a tell to an agent that takes nothing must fail with PROMPT_NOT_TAKEN, and it ${error ? `failed with ${describe(error)}` : 'was reported taken'}`);
      if (await place.driver.hasDraft(handle)) fail(`the tell was given up on (PROMPT_NOT_TAKEN), yet its text is left in the agent's input box${await screenOf(bench, record)}`);
    }),

    check('never-up', 'an agent that does not come up is reported never started, not confirmed', async (fail: Fail) => {
      const place = await bench.place('never-up');
      const record = await place.record();
      const stage = record.stage;
      if (stage?.delivery === 'taken') fail('flume was told the prompt was taken by an agent whose program exited before it took input');
      if (stage?.delivery !== 'never-started') fail(`the agent's program exits before it takes input, so its stage is never started; it reads ${stageOf(record, place)}`);
      if (stage.sends !== 0) fail(`flume sent the prompt ${stage.sends} time(s) to an agent that never came up`);
      const handle = stage.agent;
      if (handle?.pane) {
        const reading = await place.driver.read(handle);
        if (reading.state !== 'exited' && reading.state !== 'not-up') fail(`the agent's program exited, yet driver.read says ${JSON.stringify(reading)}`);
      }
      const pid = handle && (await pidOf(bench.harness, handle));
      if (pid !== undefined && processRunning(pid)) fail(`the agent's process ${pid} still runs after its stage was given up as never started`);
    }),

    check('tell', 'a tell is refused, with nothing typed, while the agent shows a dialog', async (fail: Fail) => {
      const place = await bench.place('asks');
      const handle = await takenAgent(place, fail, false);
      const reading = await readingUntil(place, handle, (r) => r.state === 'asking');
      const before = await truth(place);
      const text = `Conformance tell ${letters()}`;
      const error = await tell(place.repository, place.key, text).then(() => undefined, (e: unknown) => e);
      const screen = (await bench.harness.host.capture(handle.pane!).catch(() => undefined)) ?? '';
      const after = await truth(place);
      const typed = screen.includes(text) || after.length !== before.length;
      const read = `driver.read said ${JSON.stringify(reading)}`;
      if (!error) fail(`the agent opened a dialog and the tell was taken all the same (${read}); text typed now goes into the dialog`);
      if (!isFlumeError(error) || error.code !== 'AGENT_ASKING') fail(`while a dialog is open a tell must be refused with AGENT_ASKING, and it failed with ${describe(error)}${typed ? ' after typing into the agent' : ''} (${read})`);
      if (typed) fail(`the tell was refused, but its text reached the agent (screen or record); nothing may be typed`);
    }),

    check('stop', 'stop resolves only once the process is gone, and the agent then reads exited', async (fail: Fail) => {
      // The operator's stop (flume stop) of an idle agent, then the hang-up flume gives the agent of
      // a delivered stage, here while a dialog is open.
      for (const [scenario, how] of [['answers', 'flume stop'], ['asks', 'driver.stop with hangUp']] as const) {
        const place = await bench.place(scenario);
        const handle = await takenAgent(place, fail, scenario === 'answers');
        const pid = await pidOf(bench.harness, handle);
        if (pid === undefined) fail(`the "${scenario}" agent's handle carries no pid and the harness gives none (pidOf): the check cannot see its process`);
        if (!processRunning(pid)) fail(`the "${scenario}" agent's process ${pid} had ended before it was stopped`);
        const error = await (scenario === 'answers' ? stopAgent(place.repository, place.key, true) : place.driver.stop(handle, { hangUp: true })).then(() => undefined, (e: unknown) => e);
        const running = processRunning(pid);
        if (error) fail(`${how} of the "${scenario}" agent failed with ${describe(error)}${running ? `, its process ${pid} still running` : ''}`);
        if (running) fail(`${how} of the "${scenario}" agent resolved while its process ${pid} still ran: stop must resolve only once the process is gone`);
        const reading = await place.driver.read(handle);
        if (reading.state !== 'exited' && reading.state !== 'not-up') fail(`the "${scenario}" agent was stopped and its process is gone, yet driver.read says ${JSON.stringify(reading)}`);
        const again = await place.driver.stop(handle).then(() => undefined, (e: unknown) => e);
        if (again) fail(`stopping the "${scenario}" agent again, once gone, failed with ${describe(again)}; it must resolve`);
      }
    }),
  ];
}

/** The screen once `until` holds of it, or undefined when the time is up. */
async function screenUntil(bench: Bench, handle: AgentHandle, until: (screen: string) => boolean, ms: number): Promise<string | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const screen = await bench.harness.host.capture(handle.pane!).catch(() => undefined);
    if (screen !== undefined && until(screen)) return screen;
    if (Date.now() >= deadline) return undefined;
    await sleep(100);
  }
}

/** The last lines of the stage's agent's screen, for a failure's message ('' when there is none to read). */
async function screenOf(bench: Bench, record: PlaceRecord): Promise<string> {
  const pane = record.stage?.agent?.pane;
  const screen = pane ? await bench.harness.host.capture(pane).catch(() => undefined) : undefined;
  const lines = (screen ?? '').split('\n').map((line) => line.trimEnd()).filter(Boolean).slice(-12);
  return lines.length ? `; the agent's screen ends:\n${lines.join('\n')}` : '';
}

/** The stage as a sentence for a failure: its delivery, its sendings, and why it waits or failed. */
function stageOf(record: PlaceRecord, place: Place): string {
  const stage = record.stage;
  const error = place.error ? `; its start failed with ${describe(place.error)}` : '';
  if (!stage) return `no stage at all${error}${answered(place)}`;
  return `delivery "${stage.delivery}" after ${stage.sends} sending(s)${stage.waiting ? `, waiting: ${stage.waiting.needs}` : ''}${error}${answered(place)}`;
}

/**
 * What the driver answered while flume's step ran the place, method by method (a run of the same
 * answer once, with its count), and what flume made of an answer that stopped it short.
 */
function answered(place: Place): string {
  if (!place.calls.length) return '';
  const runs: Array<{ said: string; times: number }> = [];
  for (const call of place.calls) {
    const said = `${call.method}(${call.asked}) answered ${call.answer}`;
    const last = runs.at(-1);
    if (last?.said === said) last.times += 1;
    else runs.push({ said, times: 1 });
  }
  const shown = runs.length > 12 ? [...runs.slice(0, 4), { said: `… ${runs.length - 10} more …`, times: 1 }, ...runs.slice(-6)] : runs;
  const list = shown.map(({ said, times }) => (times > 1 ? `${said} (${times} times)` : said)).join('; ');
  const look = place.calls.find((call) => call.method === 'waitForInput' && call.asked === 'handle, 0' && call.answer !== '"ready"');
  const why = look
    ? `. flume sends a prompt again only to an agent whose waitForInput(handle, 0) answers "ready", and it answered ${look.answer}: a timeout of 0 means look once and answer what the agent shows now`
    : '';
  return `; while flume ran the stage, the driver's ${list}${why}`;
}

function describe(error: unknown): string {
  if (isFlumeError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whitespace runs as one space, trimmed: the agents trim a prompt, some make a TAB spaces (Claude
 * Code), OpenCode ends a paste it showed folded with a space; none of which changes its words.
 */
function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** How many times the agent took `item`, whitespace aside. */
function count(list: string[], item: string): number {
  return list.filter((entry) => squash(entry) === squash(item)).length;
}

function has(list: string[], item: string): boolean {
  return count(list, item) > 0;
}

/**
 * A random word of letters only: a tell typed by a broken driver into a dialog must not pick one
 * of its numbered options.
 */
function letters(): string {
  return [...randomBytes(8)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('');
}
