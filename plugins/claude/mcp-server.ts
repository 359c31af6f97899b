/**
 * flume's MCP server (stdio) for Claude Code sessions: a `status` tool giving what `flume status
 * --json` gives, and a `launch` tool. It is a thin adapter over the flume CLI, so it adds nothing the
 * CLI cannot do; a tool error comes back as an MCP error result with flume's code and fix, and never
 * ends the server.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { run } from '../../core/index.js';
import { parseLaunchText } from './launch-text.js';

/** The flume executable the tools run. */
const FLUME = fileURLToPath(new URL('../../bin/flume.js', import.meta.url));

/** The tools, with their input schemas. */
export const TOOLS = [
  {
    name: 'status',
    description: 'Where every place flume runs on this host stands (what `flume status --json` gives): kind, stage and its state, the agent, tasks ticked, what a waiting agent needs. Optionally one place, or one repository.',
    inputSchema: {
      type: 'object',
      properties: {
        place: { type: 'string', description: 'Only this place: kind/name (e.g. fix/bump-parser).' },
        repo: { type: 'string', description: 'Only the places of this repository (a folder).' },
      },
      additionalProperties: false,
    },
  },
  {
    name: 'launch',
    description: 'Launch a brief in a place of its own (a worktree on <kind>/<name>) and start its first stage\'s agent; the calling session goes on with its own work. The kind is fix unless the brief starts with "--kind <kind>"; the name is made from the brief unless given.',
    inputSchema: {
      type: 'object',
      properties: {
        brief: { type: 'string', description: 'What the work is; may start with "--kind change" (or another kind).' },
        repo: { type: 'string', description: 'The repository: the session\'s working directory.' },
        kind: { type: 'string', description: 'The kind, when not given in the brief (default fix).' },
        name: { type: 'string', description: 'The launch name; made from the brief when absent.' },
      },
      required: ['brief', 'repo'],
      additionalProperties: false,
    },
  },
] as const;

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };

/** Runs one tool call; bad arguments and flume's refusals come back as error results. */
export async function callTool(name: string, args: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = process.env): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) return failure('BAD_USAGE', `There is no tool ${JSON.stringify(name)}.`, `Use one of: ${TOOLS.map((t) => t.name).join(', ')}.`);
  const problem = checkArguments(tool.inputSchema, args);
  if (problem) return failure('BAD_USAGE', problem, 'Call the tool with the arguments its input schema names.');
  const argv = name === 'status' ? statusArgv(args) : launchArgv(args);
  if (typeof argv === 'string') return failure('BAD_USAGE', argv, 'Put the brief after "--kind <kind>".');
  const result = await run(process.execPath, [FLUME, ...argv, '--json'], { env: { ...env }, timeoutMs: 10 * 60_000 });
  let output: Record<string, unknown>;
  try {
    output = JSON.parse(result.stdout) as Record<string, unknown>;
  } catch {
    return failure('IO_FAILED', `flume ${argv[0]} printed no JSON (exit ${result.exitCode}): ${result.all.trim().slice(-400)}`, 'Run the same command in a terminal to see what failed.');
  }
  const error = output.error as { code: string; message: string; fix?: string } | undefined;
  if (error) return failure(error.code, error.message, error.fix);
  // Claude Code hands the model the structured content, not the text: the summary goes in both.
  if (name === 'launch') {
    const summary = launchSummary(output);
    return { content: [{ type: 'text', text: summary }], structuredContent: { summary, ...output } };
  }
  return { content: [{ type: 'text', text: JSON.stringify(output, null, 2) }], structuredContent: output };
}

/** Serves the tools over stdio until the client goes. */
export async function serve(): Promise<void> {
  const server = new Server({ name: 'flume', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map((t) => ({ ...t })) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return await callTool(request.params.name, request.params.arguments ?? {});
    } catch (error) {
      return failure('IO_FAILED', error instanceof Error ? error.message : String(error), 'Run the same command with the flume CLI to see what failed.');
    }
  });
  await server.connect(new StdioServerTransport());
}

function statusArgv(args: Record<string, unknown>): string[] {
  return ['status', ...(args.place ? [String(args.place)] : []), ...(args.repo ? ['--repo', String(args.repo)] : [])];
}

function launchArgv(args: Record<string, unknown>): string[] | string {
  const parsed = parseLaunchText(String(args.brief));
  if (typeof parsed === 'string') return parsed;
  const kind = parsed.kind ?? (args.kind ? String(args.kind) : 'fix');
  return ['launch', '--repo', String(args.repo), '--kind', kind, '--brief', parsed.brief, ...(args.name ? ['--name', String(args.name)] : ['--auto-name'])];
}

function launchSummary(output: Record<string, unknown>): string {
  const place = output.place as { id: string; path: string; branch: string; stage?: { delivery: string; agent?: { pane?: string; host: string } } };
  const agent = place.stage?.agent;
  return [
    `Launched ${place.id} at ${place.path} on ${place.branch}.`,
    place.stage ? `Its first stage's prompt: ${place.stage.delivery}${agent?.pane ? `; the agent runs in ${agent.host} pane ${agent.pane}` : ''}.` : 'No stage started.',
    `Follow it with \`flume status ${place.id}\` (or the status tool), and \`flume status --watch\` for a live view.`,
  ].join('\n');
}

function checkArguments(schema: (typeof TOOLS)[number]['inputSchema'], args: Record<string, unknown>): string | undefined {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return 'The arguments must be an object.';
  const properties = schema.properties as Record<string, { type: string }>;
  for (const key of Object.keys(args)) if (!(key in properties)) return `Unexpected argument "${key}". Expected: ${Object.keys(properties).join(', ')}.`;
  for (const key of ('required' in schema ? schema.required : []) as readonly string[]) if (args[key] === undefined) return `The argument "${key}" is required.`;
  for (const [key, value] of Object.entries(args)) if (typeof value !== 'string' || value === '') return `The argument "${key}" must be a non-empty string.`;
  return undefined;
}

function failure(code: string, message: string, fix?: string): ToolResult {
  return { content: [{ type: 'text', text: `${code} ${message}${fix ? `\nfix: ${fix}` : ''}` }], isError: true, structuredContent: { error: { code, message, ...(fix ? { fix } : {}) } } };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await serve();
