/**
 * A prompt or a tell holding a TAB is taken once. Claude Code
 * 2.1.332 records a pasted TAB as four spaces and drops a typed one (it is the Tab key), so the
 * driver sends four spaces where a TAB stands (patterns `transcript.tab`) and looks for the same in
 * the transcript. The same scenario runs against the REAL Claude Code and against the fake agent,
 * and flume must report the same of both: taken at the first sending, the transcript holding each
 * prompt once, as sent. See test/fixtures/claude-2.1.332/README.md, "TAB".
 *
 * Run inside a loopback-only network namespace (root): `sh scripts/test.sh test/e2e/tabs.test.ts`.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentRepo, type AgentRepo } from '../helpers/agent-repo.js';
import { assertIsolated } from '../helpers/netns.js';
import { prompts, realRepo } from './real-repo.js';
import { launchedRecord } from '../helpers/result-schema.js';
import { HANG_MS } from '../helpers/wait.js';

beforeAll(() => assertIsolated());

let current: AgentRepo | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** A declared kind whose one stage's prompt is the brief alone: a one-line brief is a one-line prompt. */
const KINDS = { kinds: [{ name: 'note', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit' }] }] };

/**
 * A TAB after one, two, three and four characters, in the middle of a word, and two in a row. (One
 * at the very start would not reach the agent: flume trims a rendered prompt, and a tell.)
 */
const BRIEF = 'Note\tthe table: a\tb, ab\tc, abc\td, abcd\te, mid\tword, two\t\ttabs.';
/** A one-line tell, a TAB first (trimmed off, as the agents would drop it), and a three-line one, each with TABs. */
const TELL_LINE = '\tAlso:\tcolumn\ttwo.';
const TELL_LINES = 'Then:\n\tindented\nab\tc';

/** As Claude Code 2.1.332 records a TAB: four spaces, wherever it stands. */
const recorded = (text: string) => text.replace(/\t/g, '    ');

/** What flume reports of the scenario, and what the transcript holds. */
interface Seen {
  launch: { delivery: string; sends: number; prompt: string };
  /** Each tell's `--json` answer: `taken` and `sends`, or the error's code. */
  tells: Array<{ taken?: boolean; sends?: number; error?: string }>;
  prompts: string[];
}

/** Launches a `note` with the brief, waits for its turn to end, tells it twice; what flume says. */
async function scenario(t: AgentRepo): Promise<Seen> {
  const launched = await t.flume(['launch', '--kind', 'note', '--name', 'tabs', '--brief', BRIEF, '--no-watch', '--json']);
  expect(launched.code, launched.stdout + launched.stderr).toBe(0);
  const place = launchedRecord(launched.stdout);
  const tells: Seen['tells'] = [];
  for (const text of [TELL_LINE, TELL_LINES]) {
    await until(async () => (await t.place('note/tabs')).stage.agent.state === 'idle', 'the agent to end its turn');
    const told = JSON.parse((await t.flume(['tell', 'note/tabs', text, '--json'])).stdout);
    tells.push(told.error ? { error: told.error.code } : { taken: told.taken, sends: told.sends });
  }
  await until(async () => prompts(place.stage.agent.transcriptPath).length >= 3, 'the third prompt in the transcript');
  return { launch: { delivery: place.stage.delivery, sends: place.stage.sends, prompt: place.stage.prompt }, tells, prompts: prompts(place.stage.agent.transcriptPath) };
}

/** What both agents must give: taken at once, each prompt once, TABs as four spaces (flume's record keeps them). */
const EXPECTED: Seen = {
  launch: { delivery: 'taken', sends: 1, prompt: BRIEF },
  tells: [
    { taken: true, sends: 1 },
    { taken: true, sends: 1 },
  ],
  prompts: [BRIEF, TELL_LINE.trim(), TELL_LINES].map(recorded),
};

describe('a prompt with TABs', () => {
  it('is taken once by the real Claude Code 2.1.332, which records each TAB as four spaces', async () => {
    const t = await realRepo({ script: ['Noted.', 'Noted again.', 'And that.'], config: KINDS });
    current = t;
    const seen = await scenario(t);
    expect(seen).toEqual(EXPECTED);
    // The model got each prompt once: one request a turn, the last asking about the last tell. The
    // transcript holds a prompt before Claude Code asks the model about it: the third request is
    // waited for, and the third turn's end, so a second asking of any prompt would be here too.
    await until(async () => t.api.requests.length >= 3 && (await t.place('note/tabs')).stage.agent.state === 'idle', 'the third turn to end');
    expect(t.api.requests).toHaveLength(3);
    expect(t.events('note--tabs').filter((e) => e.event === 'prompt-taken')).toEqual([expect.objectContaining({ sends: 1 })]);
    // Room for the broken case to finish and show its whole difference (two prompt timeouts a sending).
  }, 180_000);

  it('is taken once by the fake agent, which flume reports exactly as it reports the real one', async () => {
    current = agentRepo({ onPrompt: [{ actions: [{ say: 'Noted.' }] }] }, KINDS);
    expect(await scenario(current)).toEqual(EXPECTED);
  });
});

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + Math.max(timeoutMs, HANG_MS); // a hang guard (test/helpers/wait.ts)
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}
