import type { Command } from '../command.js';
import { commandLine } from '../options.js';
import { repositoryFrom, statusPlace } from '../command.js';
import { printJson, printedLine, printedNote, progress } from '../output.js';
import { flumeError, isFlumeError } from '../../api/errors.js';
import { askYesNo, canAsk } from '../ask.js';
import { TRUST_MEANING } from './trust.js';
import { trustRepository } from '../../config/trust.js';
import type { CliContext } from '../command.js';
import { makePlace, type LaunchRequest } from '../../engine/launch/launch.js';
import { advance, limitsOf } from '../../engine/stage/step.js';
import { kindOf } from '../../config/repository.js';
import { ensureSupervisor } from './watch.js';
import { beforeActing, waitAndReport, waitOptions } from '../callers/wait.js';
import { keyOf } from '../../state/store.js';
import { hostNote } from '../../engine/supervisor/hosts.js';
import { canType } from '../../api/pane-host.js';
import type { Action } from '../../engine/stage/decide.js';
import type { AgentHandle } from '../../api/agent.js';
import type { DeliveryState, PlaceRecord } from '../../api/record.js';

/** `flume launch`: make a place for a launch, ready it, and start its first stage. */
export const launchCommand: Command = {
  ...commandLine('launch'),
  describe: 'Make a place for a launch (a worktree on <kind>/<name>), ready it, and start its first stage.',
  async run(args, context) {
    waitOptions(args);
    const { io } = context;
    const json = Boolean(args.json);
    const steps = progress(io);
    const say = (line: string) => {
      if (!json) steps.step(line);
    };
    if (args.name === undefined && !args['auto-name']) {
      throw flumeError('BAD_USAGE', {}, { variant: 'noName' });
    }
    const request: LaunchRequest = {
      kind: String(args.kind),
      name: args.name === undefined ? undefined : String(args.name),
      brief: args.brief === undefined ? undefined : String(args.brief),
      briefFile: args['brief-file'] === undefined ? undefined : String(args['brief-file']),
      from: args.from === undefined ? undefined : String(args.from),
      start: args.start !== false,
      watch: args.watch !== false,
      ...(args.container === undefined ? {} : { container: String(args.container) }),
    };
    if (args['dry-run']) {
      // A dry run asks nothing: an untrusted config is refused as it is where flume cannot ask.
      const { planLaunch } = await import('../../engine/launch/dry-run.js');
      const { printDryRun } = await import('./launch-dry-run.js');
      printDryRun(io, await planLaunch(await repositoryFrom(args, context), request), json);
      return;
    }
    const repository = await repositoryFrom(args, context).catch((error) => askTrust(error, json, () => repositoryFrom(args, context), io));
    const after = await beforeActing(args, repository, 'launched');
    let record = await makePlace(repository, request, say);
    // A failed readying step is marked failed where it stands (the step under way), what failed after it.
    let failed = record.ready.state === 'failed';
    if (failed) {
      const tail = record.ready.failed?.tail?.trimEnd();
      if (!json) steps.fail(`readying failed at ${record.ready.failed?.step} (exit ${record.ready.failed?.exitCode})${tail ? `\n${indent(tail)}` : ''}`);
    }
    say(`made ${record.id} at ${record.path} on ${record.branch} (from ${record.base.slice(0, 12)})`);
    if (!failed) say(`ready: ${record.ready.state === 'none' ? 'nothing declared' : 'done'}`);
    if (args.start !== false) {
      // The agent is named as soon as a step sees it, so what it does next reads after who it is.
      let named = false;
      const nameAgent = (agent: AgentHandle | undefined) => {
        if (named || !agent) return;
        named = true;
        say(`agent: ${agent.driver} session ${agent.sessionId}${agent.pane ? ` in pane ${agent.pane}` : ''} (${hostNote(repository.flume.hosts.get(agent.host) ?? { key: agent.host }, repository.flume.config.agent?.host)})`);
        if (!canType(repository.flume.hosts.get(agent.host)) && agent.command) {
          say(`run: ${printedLine(agent.command, agent.cwd)}`);
          const note = printedNote(agent.command);
          if (note) say(`note: ${note}`);
        }
      };
      const onAction = (action: Action, before: PlaceRecord) => {
        if (action.type !== 'start-stage') nameAgent(before.stage?.agent);
        say(describe(action));
      };
      // The host's supervisor may step the place first (it sees the record the moment it is made),
      // holding its lock while its agent starts and takes the prompt: the launch waits as long as
      // such a step may take, then reports the place as that step left it, never PLACE_BUSY for a
      // place that is going (1 launch of 60 in the real-agent soak, under load).
      const first = limitsOf(repository, kindOf(repository.flume, record.kind).stages[0], kindOf(repository.flume, record.kind));
      const result = await advance(repository, keyOf(record), { justReadied: true, onAction, lockTimeoutMs: first.startTimeoutMs + 2 * first.promptTimeoutMs + 60_000 });
      record = result.record ?? record;
      const stage = record.stage;
      if (stage?.agent) {
        nameAgent(stage.agent);
        if (stage.delivery === 'never-started') {
          if (!json) steps.fail(PROMPT_WORDS[stage.delivery]);
        } else say(PROMPT_WORDS[stage.delivery]);
        if (stage.waiting) say(`waiting: ${stage.waiting.needs}`);
      } else if (record.held && !json) steps.hold(`held: ${record.held.reason}`);
      // An agent that exited before it took input never will: the launch failed, and says why.
      if (stage?.delivery === 'never-started' && stage.waiting) {
        throw flumeError('AGENT_START_FAILED', { place: record.id, needs: stage.waiting.needs }, {
          details: { place: record.id, needs: stage.waiting.needs },
        });
      }
    }
    steps.done();
    if (args.watch !== false && args.start !== false) await ensureSupervisor(context);
    // With --wait, what the launch came to is the place as its first stage ends (or its caller is awaited).
    if (after !== undefined && !record.held) return waitAndReport(args, context, repository, record, after);
    if (json) printJson(io, { place: await statusPlace(context, repository, record.id) });
    // The place exists, but it did not get going: a distinct code, so a script need not read words.
    failed ||= Boolean(record.held);
    return failed ? LAUNCH_NOT_GOING : 0;
  },
};

/**
 * The exit code of a launch that made its place but did not get it going: a step failed (readying)
 * or the place is held. 1 stays "refused or failed, nothing made"; `flume status PLACE` says what now.
 */
export const LAUNCH_NOT_GOING = 3;

/** The prompt's delivery in words (status's `delivery` values are for programs). */
const PROMPT_WORDS: Record<DeliveryState, string> = {
  sending: 'prompt: sent, not confirmed yet',
  taken: 'prompt: taken',
  unknown: 'prompt: not confirmed (no transcript to read yet)',
  'never-started': 'prompt: never taken (the agent did not start)',
};

/**
 * On a terminal, an untrusted config is the user's to trust there and then, once: asked, never
 * assumed. Anywhere else (JSON, scripts, agents) the refusal stands, naming the command that trusts.
 */
async function askTrust<T>(error: unknown, json: boolean, retry: () => Promise<T>, io: CliContext['io']): Promise<T> {
  if (!(isFlumeError(error) && error.code === 'UNTRUSTED_CONFIG') || !canAsk(json)) throw error;
  const { root, file } = error.details as { root: string; file: string };
  io.stderr(`${error.message}\n${TRUST_MEANING}\n`);
  if (!(await askYesNo(`Trust ${file}? [y/N] `))) throw error;
  const record = await trustRepository(root);
  io.stderr(`trusted ${record.file} (sha256 ${record.digest})\n`);
  return retry();
}

/** An action as a person reads it in launch's progress: what happened, not the action's name. */
export function describe(action: Action): string {
  switch (action.type) {
    case 'start-stage':
      return `starting stage ${action.index + 1}${action.fixRound ? ' again, for a fix round' : ''}`;
    case 'send-again':
      return 'prompt not taken yet: sending it once more';
    case 'note-held':
      return 'prompt held queued by the agent, which sends it itself';
    case 'mark-taken':
      return 'prompt taken';
    case 'mark-delivery':
      return action.delivery === 'never-started' ? 'prompt never taken: the agent cannot take it now' : 'prompt not confirmed yet: no transcript to read';
    case 'mark-waiting':
      return `the stage waits on you: ${action.needs}`;
    case 'clear-waiting':
      return 'the agent is working again';
    case 'mark-stuck':
      return `the agent has been quiet since ${action.since}`;
    case 'mark-not-ready':
      return 'not started: the place is not ready';
    case 'mark-delivered':
      return `delivered: ${action.what}`;
    case 'stop-agent':
      return `stopping the agent: ${action.reason}`;
    case 'mark-over-budget':
      return `over budget: ${action.tokens} tokens of ${action.limit} (limits.tokens); the stage waits on you`;
    case 'stop-over-budget':
      return `stopping the agent: ${action.reason}`;
    case 'await-caller':
      return action.after
        ? `${action.after} delivered; ${action.gate ? 'its gate holds the place: `flume next` goes on' : 'the place waits for its caller to start a stage'}`
        : 'no stage started: its caller starts each one (`flume stage`, `flume next`)';
    case 'finish':
      return 'every stage delivered';
    case 'wait':
      return `nothing to do now: ${action.reason}`;
    default:
      return unreachable(action);
  }
}

/** A new action fails to compile here until it has words of its own. */
function unreachable(action: never): string {
  return (action as Action).type;
}

function indent(text: string): string {
  return text.split('\n').map((line) => `  ${line}`).join('\n');
}
