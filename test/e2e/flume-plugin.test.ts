/**
 * Issue "surfaces", end to end: the REAL Claude Code 2.1.332 loads flume's Claude Code plugin
 * (`--plugin-dir plugins/claude`: its MCP server and its launch command) and uses it against a real
 * repository, with the scripted Messages API on 127.0.0.1 playing the model.
 *
 * - An agent flume started (the plugin dir passed through the repository config's
 *   `agents['claude-code'].args`) calls flume's MCP `status` tool; the real transcript holds the
 *   tool's result, the status of the very place the agent works in.
 * - An operator's own Claude Code session in the repository types the plugin's launch command; the
 *   scripted reply calls the MCP `launch` tool with the brief and the repository, and the place is
 *   made, its agent started and its prompt confirmed (`flume status --json` lists it).
 *
 * Found in 2.1.332: the MCP tools are `mcp__plugin_flume_flume__status` and
 * `mcp__plugin_flume_flume__launch`, deferred (listed by name for ToolSearch, not in `tools`), and
 * callable directly; a plugin's command is `/flume:launch` — a bare `/launch` is "Unknown command".
 *
 * Run inside a loopback-only network namespace (root):
 *     unshare -n sh -c 'ip link set lo up && npx vitest run test/e2e/flume-plugin.test.ts'
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isReady, startClaudePane, stopClaudePane, submitPrompt, type ClaudePane } from '../helpers/claude-pane.js';
import { lastUserText, toolResults, toolUse, toolUseId, type MessagesRequest } from '../helpers/messages-api.js';
import { assertIsolated } from '../helpers/netns.js';
import { git, PROJECT } from '../helpers/repo.js';
import { parseStatus } from '../helpers/status-schema.js';
import { prompts, realRepo, toolResultsIn, toolUses, transcript, waitFor, type RealRepo } from './real-repo.js';

const PLUGIN = join(PROJECT, 'plugins', 'claude');
const STATUS_TOOL = 'mcp__plugin_flume_flume__status';
const LAUNCH_TOOL = 'mcp__plugin_flume_flume__launch';

/**
 * 2.1.250 answers a call to a tool of an MCP server still connecting with an error ("No such tool
 * available: … The MCP server … is still connecting. Call WaitForMcpServers …"; on a loaded machine
 * only "No such tool available"), where 2.1.300 and 2.1.332 wait for it: the scripted model then
 * calls the tool again a moment later, as a model told so would, at most RETRIES times.
 */
const STILL_CONNECTING = /is still connecting|No such tool available: mcp__plugin_flume/;
const RETRIES = 8;

/** The first call of `tool` in a transcript whose result is no error, with that result. */
function answeredCall(path: string, tool: string): { call: { id: string; name: string; input: unknown }; result: { tool_use_id: string; content: unknown; is_error?: boolean } } | undefined {
  const results = toolResultsIn(path);
  for (const call of toolUses(path).filter((u) => u.name === tool)) {
    const result = results.find((r) => r.tool_use_id === call.id);
    if (result && !(result.is_error && STILL_CONNECTING.test(resultText(result.content)))) return { call, result };
  }
  return undefined;
}

beforeAll(() => assertIsolated());

let current: RealRepo | undefined;
let operator: ClaudePane | undefined;
afterEach(async () => {
  if (operator) await stopClaudePane(operator);
  operator = undefined;
  await current?.cleanup();
  current = undefined;
});

/** The text of a tool_result's content (a string, or text blocks). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? '').join('\n') : '';
}

describe("flume's Claude Code plugin in the real program", () => {
  it("gives an agent flume started its place's status through the MCP status tool", async () => {
    const brief = 'Say where the places stand, then stop.';
    const search = toolUseId();
    let retried = 0;
    // The model calls the status tool once flume has read the prompt in the transcript: flume confirms
    // it by reading the transcript, which on a loaded machine came after the model's first replies (the
    // tool then read the stage `sending`, as flume knew it then). What is pinned is the agent reading its
    // own place, not which of the two is quicker.
    const record = () => join(current!.repo, '.git', 'flume', 'places', 'fix--look.json');
    const statusCall = async (options?: { delayMs: number }) => {
      await waitFor(() => existsSync(record()) && JSON.parse(readFileSync(record(), 'utf8')).stage?.delivery === 'taken', "flume's record of the prompt taken");
      return toolUse(STATUS_TOOL, { place: 'fix/look' }, options);
    };
    const script = async (request: MessagesRequest) => {
      const results = toolResults(request.body);
      // As the real program tells the model: a tool of a server still connecting is loaded with ToolSearch.
      if (results[0]?.toolUseId === search) return statusCall();
      if (results[0] && STILL_CONNECTING.test(results[0].text) && retried++ < RETRIES) return statusCall({ delayMs: 1000 });
      if (results.length > 0) return 'The place is in its code stage.';
      // Any other turn is none the test expects: unscripted, so the API records it and the test fails.
      if (lastUserText(request.body) !== brief) return undefined;
      return JSON.stringify(request.body).includes(STATUS_TOOL) ? statusCall() : toolUse('ToolSearch', { query: `select:${STATUS_TOOL}` }, { id: search });
    };
    current = await realRepo({
      script,
      args: ['--plugin-dir', PLUGIN],
      // An MCP tool asks for permission in acceptEdits mode unless a rule allows it.
      settings: { permissions: { defaultMode: 'acceptEdits', allow: [STATUS_TOOL] } },
      config: { prompts: { 'fix.code': '{brief}' } },
    });
    const t = current;
    const place = await t.launch('fix', 'look', brief);
    expect(place.stage).toMatchObject({ delivery: 'taken', sends: 1 });
    const { transcriptPath, sessionId } = place.stage.agent;

    const { call, result } = await waitFor(() => answeredCall(transcriptPath, STATUS_TOOL), 'the status tool call and its result in the real transcript');
    expect(call).toMatchObject({ input: { place: 'fix/look' } });
    // The real program named the plugin's tools so (deferred: listed by name, or found by ToolSearch
    // when its MCP server was still connecting at the first prompt).
    const seen = t.api.requests.map((r) => JSON.stringify(r.body)).join('\n');
    expect(seen).toContain(STATUS_TOOL);
    console.log(`flume-plugin: the MCP server was ${JSON.stringify(t.api.requests[0]!.body).includes(STATUS_TOOL) ? 'connected' : 'still connecting'} at the first prompt`);
    expect(result.is_error, resultText(result.content)).not.toBe(true);
    const status = parseStatus(resultText(result.content), 'the MCP status tool, called by the real program');
    expect(status.version).toBe(1);
    expect(status.places).toHaveLength(1);
    // The agent reads its own place: its stage, its prompt taken, and itself as the agent.
    expect(status.places[0]).toMatchObject({ id: 'fix/look', repo: t.repo, path: place.path, stage: { name: 'code', delivery: 'taken', agent: { sessionId, driver: 'claude-code' } } });
    // The model got the same JSON back, and the turn went on to its end.
    const answered = await waitFor(() => t.api.requests.find((r) => toolResults(r.body)[0]?.toolUseId === call.id), 'the result sent to the model');
    expect(JSON.parse(toolResults(answered.body)[0]!.text).places[0].id).toBe('fix/look');
    await waitFor(() => transcript(transcriptPath).some((l) => l.type === 'system' && l.subtype === 'turn_duration'), 'the turn end');
  });

  it('launches a brief typed as the plugin\'s command in an operator\'s session into a place of its own', async () => {
    // A brief that starts with "-" (a markdown bullet) reaches flume as text, through the command and the tool.
    const brief = '- Fix the typo in README.md';
    let repo = '';
    const search = toolUseId();
    let retried = 0;
    const script = (request: MessagesRequest) => {
      const results = toolResults(request.body);
      if (results[0]?.toolUseId === search) return toolUse(LAUNCH_TOOL, { brief, repo });
      if (results[0] && STILL_CONNECTING.test(results[0].text) && retried++ < RETRIES) return toolUse(LAUNCH_TOOL, { brief, repo }, { delayMs: 1000 });
      if (results.length > 0) return 'Launched fix/fix-the-typo-in-readme-md; follow it with flume status.';
      // The operator's session: the command's text asks for one launch tool call with the brief and the
      // repo (loaded with ToolSearch first when the plugin's MCP server is still connecting).
      if (lastUserText(request.body).includes("Call flume's `launch` tool once")) {
        return JSON.stringify(request.body).includes(LAUNCH_TOOL) ? toolUse(LAUNCH_TOOL, { brief, repo }) : toolUse('ToolSearch', { query: `select:${LAUNCH_TOOL}` }, { id: search });
      }
      // The agent flume launched, reading its fix prompt.
      return 'On it.';
    };
    current = await realRepo({ script });
    const t = current;
    repo = t.repo;
    // The operator works in the main checkout with the plugin, against this test's flume state.
    Object.assign(t.claude.vars, { FLUME_STATE_DIR: t.state });
    t.claude.trust(t.repo);
    operator = await startClaudePane(t.claude, t.repo, { args: ['--plugin-dir', PLUGIN] });
    await operator.tmux.waitForScreen(isReady, 30_000);

    // 2.1.332 names a plugin's commands <plugin>:<command>; the bare name is not one.
    await submitPrompt(operator, `/launch ${brief}`);
    await operator.tmux.waitForScreen(/Unknown command: \/launch/, 10_000);
    expect(t.api.requests).toHaveLength(0);

    await submitPrompt(operator, `/flume:launch ${brief}`);
    const request = await t.api.waitForRequest(1, 20_000);
    const asked = lastUserText(request.body);
    expect(asked).toContain('<command-name>/flume:launch</command-name>');
    expect(asked).toContain(`Brief:\n${brief}\n`);

    // The tool ran flume launch: the place is made, its agent started and its prompt taken.
    const view = await t.until('fix/fix-the-typo-in-readme-md', (p) => p?.stage?.delivery === 'taken' && p, 'the launched place with its prompt taken', { timeoutMs: 60_000, intervalMs: 500 });
    expect(view).toMatchObject({ kind: 'fix', repo: t.repo, branch: 'fix/fix-the-typo-in-readme-md', brief, worktree: { present: true }, stage: { name: 'code', agent: { driver: 'claude-code', host: 'tmux' } } });
    expect(existsSync(view.path)).toBe(true);
    expect(git(t.repo, 'branch', '--list', 'fix/fix-the-typo-in-readme-md')).toContain('fix/fix-the-typo-in-readme-md');
    const launched = prompts(view.stage.agent.transcript);
    expect(launched).toHaveLength(1);
    expect(launched[0]).toContain(`The brief:\n${brief}`);

    // The operator's session holds the tool's result (no permission dialog: the command allows the tool).
    const operatorTranscript = t.claude.findTranscript(operator.sessionId)!;
    const { call, result } = await waitFor(() => answeredCall(operatorTranscript, LAUNCH_TOOL), "the launch tool call and its result in the operator's transcript");
    expect(call.input).toEqual({ brief, repo: t.repo });
    expect(result.is_error, resultText(result.content)).not.toBe(true);
    expect(JSON.parse(resultText(result.content)).place).toMatchObject({ id: 'fix/fix-the-typo-in-readme-md', path: view.path });
    await operator.tmux.waitForScreen(/Launched fix\/fix-the-typo-in-readme-md/, 15_000);
  });
});
