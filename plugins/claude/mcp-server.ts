/**
 * flume's MCP server (stdio) for Claude Code sessions: a tool for every flume command a session can
 * sensibly run (status, launch, tell, stop, retry, go-on, stage, next, wait, drop, tidy, kinds,
 * doctor, plugins), each answering with what `flume <command> --json` prints and naming that
 * output's published schema as its `outputSchema`. `wait` blocks until the place's stage ends or its
 * timeout passes. `watch` (it runs until stopped), `events` (a stream) and `trust` (trusting a config
 * is the user's act, never a model's) have none.
 *
 * Each call runs the CLI command's own `run` in this process with the arguments as values: user text
 * (a brief, a place, a note, a message) never passes through an argument parser, so a brief such as
 * `- fix the bullet list` or `--help` reaches flume as text. A call naming a `host` runs on that host's
 * flume the same way, its arguments as values in the relay's request (docs/hosts.md). Every refusal comes back as an MCP error
 * result carrying flume's code and fix, and never ends the server.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { FlumeError, flumeError, schemaCheck, type SchemaCheck } from '../../core/index.js';
import {
  asFlumeError,
  callOnHost,
  commands,
  doctorSchema,
  dropSchema,
  kindsSchema,
  launchSchema,
  pluginsSchema,
  stageResultSchema,
  statusSchema,
  stopSchema,
  tellSchema,
  tidySchema,
  versionSchema,
  waitSchema,
  type CliContext,
} from '../../core/surface.js';
import { defaultPreset } from '../defaults.js';
import { parseLaunchText } from './launch-text.js';

/** The flume executable: what a command that starts the supervisor in the background runs. */
const FLUME = fileURLToPath(new URL('../../bin/flume.js', import.meta.url));

type Json = Record<string, unknown>;
type Annotations = { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: false };

/** One tool: its MCP description, and how its input becomes the CLI command's arguments. */
interface ToolDef {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Json>; required?: string[]; additionalProperties: false };
  outputSchema: object;
  annotations: Annotations;
  /** The command's arguments as yargs would hand them to its `run` (with `json: true`). */
  args(input: Json): Json | FlumeError;
}

const text = (description: string) => ({ type: 'string', minLength: 1, description });
const place = text('The place: kind/name (e.g. fix/bump-parser), as status lists it.');
const repo = text('The repository (a folder); default the session\'s working directory. Needed only when a place name is in more than one repository.');
const hints = (title: string, readOnly: boolean, destructive: boolean, idempotent: boolean): Annotations => ({ title, readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: false });
/** Every tool's `host`: the call runs on that host's flume over ssh (docs/hosts.md). */
const host = text('The host whose flume runs it, as `flume hosts` names it (default: this host); its repositories and places are that host\'s.');
const object = (properties: Record<string, Json>, required: string[] = []): ToolDef['inputSchema'] => ({ type: 'object', properties: { ...properties, host }, ...(required.length ? { required } : {}), additionalProperties: false });
/** The output schema as MCP carries it: the published file's content without its $id and $schema (draft-07, which MCP clients assume). */
const output = ({ $id: _id, $schema: _draft, ...schema }: { $id?: string; $schema?: string } & Json) => schema;
const same = (input: Json): Json => ({ ...input });
/** How long the wait tool blocks unless told. */
const WAIT_TIMEOUT = '10m';

/** Every tool, in the order `flume --help` lists the commands. */
export const TOOLS: ToolDef[] = [
  {
    name: 'launch',
    description: 'Launch a brief in a place of its own (a worktree on <kind>/<name>) and start its first stage\'s agent; the calling session goes on with its own work. The kind is fix unless the brief starts with "--kind <kind>" or kind is given; the name is made from the brief unless given. Answers with the place as status shows it.',
    inputSchema: object(
      {
        brief: text('What the work is, as the user wrote it (it may start with "--kind <kind>").'),
        repo: text('The repository: the session\'s working directory.'),
        kind: text('The kind, when not given in the brief (default fix).'),
        name: text('The launch name; made from the brief when absent.'),
        from: text('Where the branch starts (default: the branch the main checkout is on).'),
      },
      ['brief', 'repo'],
    ),
    outputSchema: output(launchSchema),
    annotations: hints('Launch a brief', false, false, false),
    args(input) {
      const parsed = parseLaunchText(String(input.brief));
      if (typeof parsed === 'string') return flumeError('BAD_USAGE', { message: parsed }, { variant: 'launchText' });
      const { brief: _brief, kind, name, ...rest } = input;
      return { ...rest, kind: parsed.kind ?? kind ?? 'fix', brief: parsed.brief, ...(name === undefined ? { 'auto-name': true } : { name }) };
    },
  },
  {
    name: 'status',
    description: 'Where every place flume runs on this host stands (what `flume status --json` gives): kind, stage and its state, the agent, tasks ticked, what a waiting agent needs. Optionally one place, or one repository.',
    inputSchema: object({ place: { ...place, description: 'Only this place: kind/name.' }, repo: text('Only the places of this repository (a folder).') }),
    outputSchema: output(statusSchema),
    annotations: hints('Status of places', true, false, true),
    args: same,
  },
  {
    name: 'kinds',
    description: 'Every kind a launch can name (built-in and declared by the repository), with its stages and the deliverable that ends each.',
    inputSchema: object({ repo }),
    outputSchema: output(kindsSchema),
    annotations: hints('List kinds', true, false, true),
    args: same,
  },
  {
    name: 'plugins',
    description: 'What the repository has registered (kinds, deliverable readers, agent drivers, pane hosts, hook taps), by which plugin and from where.',
    inputSchema: object({ repo }),
    outputSchema: output(pluginsSchema),
    annotations: hints('List plugins', true, false, true),
    args: same,
  },
  {
    name: 'tell',
    description: 'Tell a place\'s agent more (an answer to what it asked, say): typed into its pane and confirmed in its transcript as a prompt, or refused with nothing typed.',
    inputSchema: object({ place, text: text('What to tell it, exactly as it should read it.'), repo }, ['place', 'text']),
    outputSchema: output(tellSchema),
    annotations: hints('Tell an agent', false, false, false),
    args: same,
  },
  {
    name: 'stop',
    description: 'End a place\'s agent. Refuses an agent that is working unless force is true (what it was doing is lost).',
    inputSchema: object({ place, force: { type: 'boolean', description: 'End it even while it works.' }, repo }, ['place']),
    outputSchema: output(stopSchema),
    annotations: hints('Stop an agent', false, true, true),
    args: same,
  },
  {
    name: 'retry',
    description: 'Start the place\'s current stage again with a fresh agent and its prompt (the old agent, if any, is ended).',
    inputSchema: object({ place, repo }, ['place']),
    outputSchema: output(stageResultSchema),
    annotations: hints('Retry a stage', false, true, false),
    args: same,
  },
  {
    name: 'go-on',
    description: 'Run a question\'s stage again in the same place with a fresh session; the note joins the question.',
    inputSchema: object({ place, note: text('The operator\'s notes for the next round.'), repo }, ['place']),
    outputSchema: output(stageResultSchema),
    annotations: hints('Go on with a question', false, true, false),
    args: same,
  },
  {
    name: 'stage',
    description: 'Start a named stage of the place\'s kind in a place flume made (the agent of the current stage, if any, is ended).',
    inputSchema: object({ place, stage: text('The stage name, as kinds lists it.'), repo }, ['place', 'stage']),
    outputSchema: output(stageResultSchema),
    annotations: hints('Start a stage', false, true, false),
    args: same,
  },
  {
    name: 'next',
    description: 'Go on from a place that waits at a gate (or for its caller): start the stage after the one that delivered. Refused (NOT_AWAITING) where the place waits for no one.',
    inputSchema: object({ place, note: text('Notes for the stage that starts: they join its brief.'), repo }, ['place']),
    outputSchema: output(stageResultSchema),
    annotations: hints('Go on from a gate', false, false, false),
    args: same,
  },
  {
    name: 'wait',
    description: `Block until the place's stage ends (delivered, stopped short, stuck, never started, over budget, awaiting its caller, or the place gone), then answer the place as status shows it and the outcome reached. Gives up after timeout (default ${WAIT_TIMEOUT}) with WAIT_TIMEOUT.`,
    inputSchema: object(
      {
        place,
        for: text('Only these outcomes, comma-separated: delivered, waiting, stuck, never-started, over-budget, awaits-caller, not-ready, dropped, gone (default any).'),
        timeout: text(`Give up after this long, e.g. 90s, 20m (default ${WAIT_TIMEOUT}).`),
        repo,
      },
      ['place'],
    ),
    outputSchema: output(waitSchema),
    annotations: hints('Wait for a stage to end', true, false, true),
    args: (input) => ({ timeout: WAIT_TIMEOUT, ...input }),
  },
  {
    name: 'drop',
    description: 'Mark a launch dropped: once its agent is stopped, tidying removes its place, keeping a branch with work its target lacks.',
    inputSchema: object({ place, reason: text('Why it was dropped (shown in status).'), repo }, ['place']),
    outputSchema: output(dropSchema),
    annotations: hints('Drop a launch', false, true, true),
    args: same,
  },
  {
    name: 'tidy',
    description: 'Remove the places whose work is over (landed or dropped), keeping any branch whose patches its target lacks; dryRun says what it would do and changes nothing.',
    inputSchema: object({ place: { ...place, description: 'Only this place; default every place of the repository.' }, repo, dryRun: { type: 'boolean', description: 'Say what would be removed and kept; change nothing.' } }),
    outputSchema: output(tidySchema),
    annotations: hints('Tidy places', false, true, true),
    args: ({ dryRun, ...rest }) => ({ ...rest, ...(dryRun === undefined ? {} : { 'dry-run': dryRun }) }),
  },
  {
    name: 'doctor',
    description: 'Check what flume needs here (node, git, tmux, the agent program, its login, trust, the supervisor), each check with its fix; ok is false when a launch would miss something.',
    inputSchema: object({ repo: text('The repository to check (default: the session\'s working directory, if it is one).') }),
    outputSchema: output(doctorSchema),
    annotations: hints('Check the setup', true, false, true),
    args: same,
  },
  {
    name: 'version',
    description: "flume's version and the versions of the programs it runs here (node, git, tmux, each agent's).",
    inputSchema: object({ repo: text('The repository whose agents to ask (default: the session\'s working directory, if it is one).') }),
    outputSchema: output(versionSchema),
    annotations: hints('Show versions', true, false, true),
    args: same,
  },
];

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean; structuredContent?: Json };

const inputChecks = new Map<string, SchemaCheck>();
const preset = once(defaultPreset);

/** Runs one tool call; bad arguments and flume's refusals come back as error results. */
export async function callTool(name: string, input: unknown = {}): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) return failure(flumeError('BAD_USAGE', { tool: JSON.stringify(name), tools: TOOLS.map((t) => t.name).join(', ') }, { variant: 'noTool' }));
  if (!input || typeof input !== 'object' || Array.isArray(input)) return failure(flumeError('BAD_USAGE', {}, { variant: 'argumentsNotObject' }));
  if (!inputChecks.has(name)) inputChecks.set(name, schemaCheck(tool.inputSchema));
  const problems = await inputChecks.get(name)!(input);
  if (problems.length) return failure(flumeError('BAD_USAGE', { tool: name, problems: problems.join('; '), arguments: Object.keys(tool.inputSchema.properties).join(', ') }, { variant: 'argumentsMismatch' }));
  const { host: onHost, ...given } = input as Json;
  const args = tool.args(given);
  if (args instanceof FlumeError) return failure(args);
  if (typeof onHost === 'string') {
    // Run there by the remote flume's own command, its arguments as values; its answer is its own.
    let answer: { code: number; stdout: string };
    try {
      answer = await callOnHost(onHost, name, args);
    } catch (error) {
      return failure(asFlumeError(error));
    }
    let result: Json;
    try {
      result = JSON.parse(answer.stdout) as Json;
    } catch {
      return failure(flumeError('IO_FAILED', { message: `${onHost} answered ${name} with no JSON (exit ${answer.code}).` }, { variant: 'unexpected' }));
    }
    if (result.error) return failure(FlumeError.fromJSON(result.error as Parameters<typeof FlumeError.fromJSON>[0]));
    return { content: [{ type: 'text', text: name === 'launch' ? launchSummary(result) : JSON.stringify(result, null, 2) }], structuredContent: result };
  }
  const command = commands.find((c) => c.command.split(' ')[0] === name)!;
  let stdout = '';
  const context: CliContext = {
    // What the command prints is its --json answer; what it logs (warnings) is not the model's.
    io: { stdout: (chunk) => void (stdout += chunk), stderr: () => {}, isTTY: false },
    preset,
    self: FLUME,
  };
  try {
    await command.run({ ...args, json: true }, context);
  } catch (error) {
    return failure(asFlumeError(error));
  }
  const result = JSON.parse(stdout) as Json;
  if (name === 'launch') return { content: [{ type: 'text', text: launchSummary(result) }], structuredContent: result };
  return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
}

/** Serves the tools over stdio until the client goes. */
export async function serve(): Promise<void> {
  const server = new Server({ name: 'flume', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, description, inputSchema, outputSchema, annotations }) => ({ name, description, inputSchema, outputSchema: outputSchema as { type: 'object' }, annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return await callTool(request.params.name, request.params.arguments ?? {});
    } catch (error) {
      return failure(asFlumeError(error));
    }
  });
  await server.connect(new StdioServerTransport());
}

function launchSummary(output: Json): string {
  const place = output.place as { id: string; path: string; branch: string; stage: { delivery: string; agent?: { pane?: string; host: string } } | null };
  const agent = place.stage?.agent;
  return [
    `Launched ${place.id} at ${place.path} on ${place.branch}.`,
    place.stage ? `Its first stage's prompt: ${place.stage.delivery}${agent?.pane ? `; the agent runs in ${agent.host} pane ${agent.pane}` : ''}.` : 'No stage started.',
    `Follow it with \`flume status ${place.id}\` (or the status tool), and \`flume status --watch\` for a live view.`,
  ].join('\n');
}

/**
 * An error result: `CODE message` and its fix, as the CLI prints them. It carries no structured
 * content: the tool's outputSchema describes its answers, and MCP clients check only those.
 */
function failure(error: FlumeError): ToolResult {
  return { content: [{ type: 'text', text: `${error.code} ${error.message}${error.fix ? `\nfix: ${error.fix}` : ''}` }], isError: true };
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= load());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await serve();
