/**
 * The fake agent behaves as the real Claude Code where flume relies on it. Each
 * scenario runs against the REAL Claude Code (scripted Messages API) and against the fake, and what
 * flume reports of the place must be the same for both: the stage's state and needs, the agent's
 * state, whether flume's prompt check (the driver's confirm) finds the prompt taken, and the shape
 * of Claude Code's state file.
 *
 * - Esc before the first reply: 2.1.332 keeps the prompt's line as a dead branch and puts the prompt
 *   back in the input box (no interrupted line); the prompt was not taken.
 * - A permission prompt open: the stage waits on permission, read from the screen.
 * - A prompt told while the agent is busy: queued, taken at the first sending, answered in turn.
 *
 * Run inside a loopback-only network namespace (root):
 *     sh scripts/test.sh --project claude-2.1.332 test/e2e/fake-and-real.test.ts
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentRepo, type AgentRepo } from '../helpers/agent-repo.js';
import type { FakeScript } from '../helpers/fake-claude/index.js';
import { bash, text, type ReplyLike } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { tmuxHost } from '../../agents/panes/tmux.js';
import { draftText } from '../../agents/claude-code/screen.js';
import type { PaneHost } from '../../core/api/pane-host.js';
import { prompts, realRepo, transcript, waitFor, type RealRepoOptions } from './real-repo.js';
import { launchedRecord } from '../helpers/result-schema.js';

beforeAll(() => assertIsolated());

/** One run of a scenario: a repository, the pane host flume uses, and what releases a held reply. */
interface Run {
  t: AgentRepo;
  host: PaneHost;
  /** Claude Code's config dir (its sessions/ folder). */
  configDir: string;
  /** Lets the held first reply go. */
  release(): void;
  /** Resolves once the agent's first turn is under way (for the real one: its request came in). */
  busy(): Promise<void>;
}

let current: Run | undefined;
afterEach(async () => {
  current?.release();
  await current?.t.cleanup();
  current = undefined;
});

/** A kind whose one stage's prompt is the brief alone. */
const KINDS = { kinds: [{ name: 'note', stages: [{ name: 'code', prompt: '{brief}', deliverable: 'commit' }] }] };

/** The real Claude Code with `script`; a reply given as `'HELD'` waits until release(). */
async function real(script: Array<ReplyLike | 'HELD'>, options: Partial<RealRepoOptions> = {}): Promise<Run> {
  let release!: () => void;
  const held = new Promise<void>((done) => (release = done));
  const replies = script.map((reply) => (reply === 'HELD' ? text('The slow answer.', { until: held }) : reply));
  const t = await realRepo({ script: replies, config: KINDS, ...options });
  return { t, host: t.host, configDir: t.claude.configDir, release, busy: () => t.api.waitForRequest(1, 30_000).then(() => undefined) };
}

/** The fake with `script(held)`; a `{ waitFile: held }` action in it waits until release(). */
function fake(script: (held: string) => FakeScript): Run {
  const t = agentRepo({}, KINDS);
  const held = join(t.state, 'release');
  t.script(script(held));
  return { t, host: tmuxHost({ socket: join(t.state, 'tmux', 'flume.sock') }), configDir: t.configDir, release: () => writeFileSync(held, ''), busy: async () => undefined };
}

/** `launch --no-watch --json`; the place. */
async function launch(run: Run, name: string, brief: string): Promise<any> {
  const result = await run.t.flume(['launch', '--kind', 'note', '--name', name, '--brief', brief, '--no-watch', '--json']);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return launchedRecord(result.stdout);
}

/** What status says of the place: the stage's state and needs, the recorded delivery, the agent's state. */
async function seen(run: Run, id: string): Promise<{ state: string; needs?: string; delivery: string; agent: string }> {
  const { stage } = await run.t.place(id);
  return { state: stage.state, ...(stage.needs ? { needs: stage.needs } : {}), delivery: stage.delivery, agent: stage.agent.state };
}

/** Polls status until `probe` holds. */
async function until(run: Run, id: string, probe: (view: Awaited<ReturnType<typeof seen>>) => boolean, what: string, timeoutMs = 40_000) {
  let last: unknown;
  return waitFor(async () => {
    const view = await seen(run, id);
    last = view;
    return probe(view) ? view : undefined;
  }, `${what} (last: ${JSON.stringify(last)})`, timeoutMs);
}

/** flume's own prompt check (the driver's confirm hook, in process), as a supervisor pass runs it. */
async function confirm(run: Run, key: string, text: string): Promise<string> {
  const { openRepository } = await import('../../core/config/repository.js');
  const { defaultPreset } = await import('../../plugins/defaults.js');
  const { readRecord } = await import('../../core/state/store.js');
  const { callHook } = await import('../../core/api/hooks.js');
  process.env.FLUME_STATE_DIR = run.t.state;
  const repository = await openRepository(run.t.repo, await defaultPreset());
  const record = (await readRecord(repository.info.commonDir, key))!;
  const handle = record.stage!.agent!;
  const hook = repository.flume.hooks.confirmPrompt.get(handle.driver)!;
  return callHook('confirmPrompt', hook, { handle, text, since: record.stage!.startedAt });
}

/** `status` and `waitingFor` of Claude Code's state file(s). */
function stateFiles(run: Run): Array<{ status: string; waitingFor?: string }> {
  const dir = join(run.configDir, 'sessions');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+\.json$/.test(name))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')))
    .map((file) => ({ status: file.status, ...(file.waitingFor ? { waitingFor: file.waitingFor } : {}) }));
}

const CANCELLED = 'its prompt was cancelled before any reply (Esc) and is back in its input box, unsent: press Enter in its pane to send it, or clear it';
const ESC_BRIEF = 'Take your time with this one.';

/** Esc before the first reply; then the box is cleared and another prompt told. */
async function escBeforeReply(run: Run) {
  const place = await launch(run, 'esc', ESC_BRIEF);
  const pane = place.stage.agent.pane;
  await run.busy();
  await until(run, 'note/esc', (v) => v.agent === 'working', 'the agent at work');
  await run.host.keys(pane, ['Escape']);
  const afterEsc = await until(run, 'note/esc', (v) => v.state === 'waiting', 'the stage to wait after Esc');
  const confirmAfterEsc = await confirm(run, 'note--esc', ESC_BRIEF);
  // The operator clears the box and tells it something else: the cancelled prompt is a dead branch.
  await run.host.keys(pane, ['C-u']);
  await waitFor(async () => draftText((await run.host.capture(pane)) ?? 'x') === '', 'an empty input box');
  const told = JSON.parse((await run.t.flume(['tell', 'note/esc', 'Say something short.', '--json'])).stdout);
  await until(run, 'note/esc', (v) => v.needs === 'Short.', 'the told prompt answered');
  const path = place.stage.agent.transcriptPath;
  const line = (content: string) => transcript(path).find((l: any) => l.type === 'user' && l.message?.content === content) as any;
  return {
    afterEsc,
    confirmAfterEsc,
    told: { taken: told.taken, sends: told.sends },
    confirmAfterNext: await confirm(run, 'note--esc', ESC_BRIEF),
    prompts: prompts(path),
    // The record itself: the next prompt takes the cancelled one's parent (null: it was the first),
    // and nothing says "interrupted".
    fork: line('Say something short.').parentUuid === line(ESC_BRIEF).parentUuid,
    interrupted: JSON.stringify(transcript(path)).includes('[Request interrupted by user'),
  };
}

const ESC_EXPECTED = {
  // The stage waits, saying why: its prompt is back in the box, unsent. (The record keeps the
  // delivery flume saw at launch, when the prompt's line was written: a cancel does not make flume
  // send again what the operator cancelled.)
  afterEsc: { state: 'waiting', needs: CANCELLED, delivery: 'taken', agent: 'idle' },
  confirmAfterEsc: 'not-yet',
  told: { taken: true, sends: 1 },
  confirmAfterNext: 'not-yet',
  // Both lines stay in the transcript; only the second is on the live chain.
  prompts: [ESC_BRIEF, 'Say something short.'],
  fork: true,
  interrupted: false,
};

/** A permission prompt opened by the first turn. */
async function permissionOpen(run: Run) {
  const place = await launch(run, 'perm', 'Create a file.');
  await waitFor(async () => /Do you want to proceed\?/.test((await run.host.capture(place.stage.agent.pane)) ?? ''), 'the dialog on screen');
  const view = await until(run, 'note/perm', (v) => v.state === 'waiting', 'the stage to wait on the dialog');
  const file = await waitFor(() => stateFiles(run).find((f) => f.status === 'waiting'), 'the state file to say waiting');
  const refused = JSON.parse((await run.t.flume(['tell', 'note/perm', 'go ahead', '--json'])).stdout);
  return { view, file, tell: refused.error?.code, allowed: existsSync(join(place.path, 'allowed.txt')) };
}

const PERMISSION_EXPECTED = {
  view: { state: 'waiting', needs: 'permission to use Bash', delivery: 'taken', agent: 'asking' },
  file: { status: 'waiting', waitingFor: 'permission prompt' },
  tell: 'AGENT_ASKING',
  allowed: false,
};

/** A prompt told while the first turn is still under way. */
async function queuedWhileBusy(run: Run) {
  const place = await launch(run, 'queue', 'First, a slow one.');
  await run.busy();
  await until(run, 'note/queue', (v) => v.agent === 'working', 'the agent at work');
  const told = JSON.parse((await run.t.flume(['tell', 'note/queue', 'Queued while busy.', '--json'])).stdout);
  const whileQueued = await seen(run, 'note/queue');
  run.release();
  const end = await until(run, 'note/queue', (v) => v.needs === 'Answer to the queued prompt.', 'the queued prompt answered');
  return { told: { taken: told.taken, sends: told.sends }, whileQueued, end, prompts: prompts(place.stage.agent.transcriptPath) };
}

const QUEUED_EXPECTED = {
  told: { taken: true, sends: 1 },
  whileQueued: { state: 'working', delivery: 'taken', agent: 'working' },
  end: { state: 'waiting', needs: 'Answer to the queued prompt.', delivery: 'taken', agent: 'idle' },
  prompts: ['First, a slow one.', 'Queued while busy.'],
};

describe('Esc before the first reply', () => {
  it('real Claude Code: the prompt is not taken, the stage waits saying so', async () => {
    current = await real(['HELD', 'Short.']);
    expect(await escBeforeReply(current)).toEqual(ESC_EXPECTED);
  }, 180_000);

  it('fake: flume reports the same', async () => {
    current = fake((held) => ({ onPrompt: [{ match: '^Say', actions: [{ say: 'Short.' }] }, { actions: [{ waitFile: held }, { say: 'never sent' }] }] }));
    expect(await escBeforeReply(current)).toEqual(ESC_EXPECTED);
  }, 120_000);
});

describe('a permission prompt open', () => {
  it('real Claude Code: the stage waits on permission', async () => {
    current = await real([bash('touch allowed.txt', 'Create allowed.txt'), 'Created it.'], { permissionMode: 'default' });
    expect(await permissionOpen(current)).toEqual(PERMISSION_EXPECTED);
  }, 180_000);

  it('fake: flume reports the same', async () => {
    current = fake(() => ({ onPrompt: [{ actions: [{ permission: { tool: 'Bash', command: 'touch allowed.txt', run: ['touch', 'allowed.txt'] } }, { say: 'Created it.' }] }] }));
    expect(await permissionOpen(current)).toEqual(PERMISSION_EXPECTED);
  }, 120_000);
});

describe('a prompt told while the agent is busy', () => {
  it('real Claude Code: queued, taken at the first sending, answered in turn', async () => {
    current = await real(['HELD', 'Answer to the queued prompt.']);
    expect(await queuedWhileBusy(current)).toEqual(QUEUED_EXPECTED);
  }, 180_000);

  it('fake: flume reports the same', async () => {
    current = fake((held) => ({ onPrompt: [{ match: '^Queued', actions: [{ say: 'Answer to the queued prompt.' }] }, { actions: [{ waitFile: held }, { say: 'The slow answer.' }] }] }));
    expect(await queuedWhileBusy(current)).toEqual(QUEUED_EXPECTED);
  }, 120_000);
});
