/**
 * flume's MCP server driven by the MCP SDK's own client over stdio (the server started as Claude Code
 * starts it, through plugins/claude/bin/flume-mcp.mjs), against a real repository, real tmux and the
 * scripted fake agent. Every tool is called; every answer is checked by the client against the tool's
 * outputSchema and here against the published `<name>.schema.json`; every refusal is an error result
 * carrying flume's code and fix, and the server answers on after it. Briefs, places, notes and text
 * that start with `-` reach flume as text, never as options.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { PROJECT } from '../../helpers/repo.js';
import { parseStatus, validStatus } from '../../helpers/status-schema.js';
import { validResult } from '../../helpers/result-schema.js';
import { readRecords, waitFor } from '../../helpers/fake-claude/index.js';
import { promptsOf, stageRepo } from '../stages/helpers.js';

let current: AgentRepo;
let client: Client;

beforeEach(async () => {
  // The agent asks at once and waits; an answer starting "--" is taken and thanked for.
  current = agentRepo({ onPrompt: [{ match: '^--', actions: [{ say: 'Thanks, blue it is.' }] }, { actions: [{ say: 'Which colour should it be?' }] }] });
  client = new Client({ name: 'flume-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(PROJECT, 'plugins/claude/bin/flume-mcp.mjs')], env: current.env, cwd: current.repo }));
});
afterEach(async () => {
  await client.close();
  await current.cleanup();
});

const TOOLS = ['doctor', 'drop', 'go-on', 'kinds', 'launch', 'next', 'plugins', 'retry', 'stage', 'status', 'stop', 'tell', 'tidy', 'version', 'wait'];
/** Which published schema each tool's answer has. */
const SCHEMA: Record<string, string> = { launch: 'launch', status: 'status', kinds: 'kinds', plugins: 'plugins', doctor: 'doctor', tell: 'tell', stop: 'stop', retry: 'stage', 'go-on': 'stage', stage: 'stage', next: 'stage', wait: 'wait', drop: 'drop', tidy: 'tidy', version: 'version' };
const text = (result: any): string => result.content.map((c: { text: string }) => c.text).join('\n');

/** Calls a tool that must answer; checks its answer against the published schema and returns it. */
async function ok(name: string, args: Record<string, unknown>, on = client): Promise<any> {
  // The wait tool blocks: longer than the SDK's own minute.
  const result: any = await on.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
  expect(result.isError, `${name}: ${text(result)}`).toBeFalsy();
  if (name === 'status') validStatus(result.structuredContent, 'the MCP status tool');
  else validResult(SCHEMA[name], result.structuredContent, `the MCP ${name} tool`);
  if (name !== 'launch') expect(JSON.parse(text(result))).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** Calls a tool that must refuse: an error result `CODE message` + `fix: …`, as error.schema.json has it; returns the error. */
async function refused(name: string, args: unknown, on = client): Promise<{ code: string; message: string; fix: string }> {
  const result: any = await on.callTool({ name, arguments: args as Record<string, unknown> });
  expect(result.isError, `${name} ${JSON.stringify(args)} was not refused: ${text(result)}`).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const match = /^([A-Z_]+) ([\s\S]*?)\nfix: ([\s\S]+)$/.exec(text(result));
  expect(match, text(result)).not.toBeNull();
  return validResult('error', { error: { code: match![1], message: match![2], fix: match![3] } }).error;
}

describe("the MCP server, driven by the SDK's own client over stdio", () => {
  it('lists a tool for every command, each with annotations and the published schema of its answer', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      const { $id: _id, $schema: _draft, ...published } = JSON.parse(readFileSync(join(PROJECT, 'schemas', `${SCHEMA[tool.name]}.schema.json`), 'utf8'));
      expect(tool.outputSchema, tool.name).toEqual(published);
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), idempotentHint: expect.any(Boolean) });
    }
    const flagged = (hint: string) => tools.filter((t) => (t.annotations as Record<string, boolean>)[hint]).map((t) => t.name).sort();
    expect(flagged('readOnlyHint')).toEqual(['doctor', 'kinds', 'plugins', 'status', 'version', 'wait']);
    expect(flagged('destructiveHint')).toEqual(['drop', 'go-on', 'retry', 'stage', 'stop', 'tidy']);
    expect(tools.find((t) => t.name === 'launch')!.inputSchema.required).toEqual(['brief', 'repo']);
    // /flume:launch pre-allows launch and every read-only tool, and nothing that changes or ends work.
    const allowed = /^allowed-tools: (.*)$/m.exec(readFileSync(join(PROJECT, 'plugins/claude/commands/launch.md'), 'utf8'))![1].split(', ');
    expect(allowed.filter((a) => a.startsWith('mcp__plugin_flume_flume__')).map((a) => a.slice(25)).sort()).toEqual(['doctor', 'kinds', 'launch', 'plugins', 'status', 'version']);
  });

  it('runs every command as a tool, with user text starting with "-" taken as text', async () => {
    const repo = current.repo;
    // Listed first, so the SDK's client also checks every answer against the outputSchema advertised.
    await client.listTools();
    expect((await ok('kinds', { repo })).kinds.map((k: { name: string }) => k.name)).toEqual(expect.arrayContaining(['fix', 'change', 'question']));
    expect((await ok('plugins', { repo })).repository).toBe(repo);
    expect((await ok('doctor', { repo })).checks.length).toBeGreaterThan(0);
    expect((await ok('version', { repo })).programs.map((p: { name: string }) => p.name)).toContain('node');

    // The briefs: one a markdown bullet, one that an argument parser reads as a request for help.
    const bullet = (await ok('launch', { brief: '- fix the bullet list', repo })).place;
    expect(bullet).toMatchObject({ id: 'fix/fix-the-bullet-list', brief: '- fix the bullet list', stage: { name: 'code', delivery: 'taken' } });
    const help = (await ok('launch', { brief: '--kind question --help', repo, name: 'help' })).place;
    expect(help).toMatchObject({ id: 'question/help', brief: '--help' });
    // launch answers with the place exactly as status shows it (but for what moved since).
    const shown = (await ok('status', { place: 'fix/fix-the-bullet-list' })).places[0];
    expect({ ...bullet, stage: { ...bullet.stage, state: undefined, agent: { ...bullet.stage.agent, state: undefined } } }).toEqual({ ...shown, stage: { ...shown.stage, state: undefined, agent: { ...shown.stage.agent, state: undefined } } });

    await waitFor(async () => (await ok('status', { place: 'fix/fix-the-bullet-list' })).places[0].stage.agent.state === 'idle', 'the agent to ask and wait');
    expect(await ok('tell', { place: 'fix/fix-the-bullet-list', text: '--help: blue' })).toEqual({ place: 'fix/fix-the-bullet-list', taken: true, sends: 1 });
    const transcript = bullet.stage.agent.transcript ?? (await ok('status', { place: 'fix/fix-the-bullet-list' })).places[0].stage.agent.transcript;
    expect(readRecords(transcript).filter((r) => r.type === 'user' && typeof r.message?.content === 'string').map((r) => r.message.content)).toContain('--help: blue');

    expect(await ok('stop', { place: 'fix/fix-the-bullet-list', force: true })).toMatchObject({ place: 'fix/fix-the-bullet-list', state: 'exited' });
    expect((await ok('retry', { place: 'fix/fix-the-bullet-list' })).stage).toMatchObject({ name: 'code', attempt: 2, delivery: 'taken' });
    expect((await ok('stage', { place: 'fix/fix-the-bullet-list', stage: 'code' })).stage).toMatchObject({ name: 'code', attempt: 3 });
    expect((await ok('go-on', { place: 'question/help', note: '- and look at the flags' })).stage).toMatchObject({ attempt: 2 });
    expect(await refused('go-on', { place: 'fix/fix-the-bullet-list' })).toMatchObject({ code: 'CANNOT_GO_ON' });

    expect((await ok('tidy', { repo, dryRun: true })).outcomes).toContainEqual(expect.objectContaining({ id: 'question/help', action: 'skipped' }));
    expect((await ok('drop', { place: 'question/help', reason: '--not needed' })).dropped.reason).toBe('--not needed');
    await ok('stop', { place: 'question/help', force: true });
    // The supervisor the launches started tidies a dropped place too: whichever comes first removes it.
    await waitFor(async () => {
      const { outcomes } = await ok('tidy', { repo });
      return !outcomes.some((o: { id: string; action: string }) => o.id === 'question/help' && o.action !== 'removed');
    }, 'the dropped place to be tidied');
    expect((await ok('status', {})).places.map((p: { id: string }) => p.id)).toEqual(['fix/fix-the-bullet-list']);
    expect(parseStatus(text(await client.callTool({ name: 'status', arguments: { repo } })), 'the MCP status tool\'s text').places).toHaveLength(1);
  });

  it('refuses bad calls with flume\'s code and fix, changes nothing, and keeps serving', async () => {
    const repo = current.repo;
    expect(await refused('nope', {})).toMatchObject({ code: 'BAD_USAGE' });
    expect(await refused('launch', { repo })).toMatchObject({ code: 'BAD_USAGE' });
    expect(await refused('status', { bogus: 'x' })).toMatchObject({ code: 'BAD_USAGE' });
    expect(await refused('stop', { place: 'fix/x', force: 'yes' })).toMatchObject({ code: 'BAD_USAGE' });
    expect(await refused('launch', { brief: '--kind nope do it', repo })).toMatchObject({ code: 'UNKNOWN_KIND', fix: expect.stringContaining('fix, change, question') });
    expect(await refused('launch', { brief: '--kind question', repo })).toMatchObject({ code: 'BAD_USAGE' });
    // A brief holding a control character (here a paste-end marker) is refused as the CLI refuses it.
    expect(await refused('launch', { brief: 'do it \x1b[201~ now', repo })).toMatchObject({ code: 'BAD_TEXT' });
    expect(await refused('launch', { brief: 'x', repo: '/nonexistent/folder' })).toMatchObject({ code: 'NOT_A_REPOSITORY' });
    // Places that look like options are names of no place, never flags.
    for (const place of ['--help', '-x', '--force']) {
      expect(await refused('status', { place })).toMatchObject({ code: 'UNKNOWN_PLACE' });
      expect((await refused('drop', { place, repo })).code).toMatch(/^(UNKNOWN_PLACE|BAD_NAME)$/);
    }
    expect(await refused('tell', { place: 'fix/nothing-here', text: '--help' })).toMatchObject({ code: 'UNKNOWN_PLACE' });
    expect(await refused('stage', { place: 'fix/nothing-here', stage: '--help', repo })).toMatchObject({ code: 'UNKNOWN_PLACE' });
    expect((await ok('status', { repo })).places).toEqual([]);
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
  });

  it('waits for a stage to reach its gate, times out as the CLI does, and goes on from the gate with next and its note', async ({ onTestFinished }) => {
    const gated = { name: 'gated', stages: [{ name: 'code', prompt: 'Code: {brief}', deliverable: 'commit', advance: 'caller' }, { name: 'review', prompt: 'Review: {brief}', deliverable: 'commit' }] };
    const t = stageRepo({}, { kinds: [gated] });
    const own = new Client({ name: 'flume-test', version: '0.0.0' });
    onTestFinished(async () => {
      await own.close();
      await t.cleanup();
    });
    t.script({
      onPrompt: [
        { match: '^Code', actions: [{ run: [t.commit, 'code.txt', 'code'] }, { say: 'Coded.' }] },
        { match: 'Review:', actions: [{ run: [t.commit, 'review.txt', 'review'] }, { say: 'Reviewed.' }] },
      ],
    });
    await own.connect(new StdioClientTransport({ command: process.execPath, args: [join(PROJECT, 'plugins/claude/bin/flume-mcp.mjs')], env: t.env, cwd: t.repo }));
    await own.listTools();
    const id = 'gated/m';
    t.watch();
    await t.launch('gated', 'm', 'Gate it.');
    // next before the gate: refused as `flume next` refuses it.
    expect(await refused('next', { place: id }, own)).toMatchObject({ code: 'NOT_AWAITING' });
    // wait blocks until the stage comes to its gate; a shorter timeout than that gives up with the CLI's code.
    expect(await refused('wait', { place: id, for: 'stuck', timeout: '1s' }, own)).toMatchObject({ code: 'WAIT_TIMEOUT' });
    const waiting = ok('wait', { place: id, for: 'awaits-caller', timeout: '3m' }, own);
    t.open('code');
    const reached = await waiting;
    expect(reached).toMatchObject({ reached: 'awaits-caller', places: [{ id, awaits: 'caller', awaiting: { gate: true, after: 'code' }, stage: { name: 'code', state: 'delivered' } }] });

    const went = await ok('next', { place: id, note: '- mind the tests' }, own);
    expect(went).toMatchObject({ place: id, stage: { name: 'review', attempt: 1 } });
    const transcript = went.stage.agent.transcript as string;
    await waitFor(() => promptsOf(transcript).length > 0, 'the review prompt');
    expect(promptsOf(transcript)[0]).toMatch(/^Review: Gate it\.[\s\S]*- mind the tests/);
    expect(await refused('next', { place: id }, own)).toMatchObject({ code: 'NOT_AWAITING' });
    t.open('review');
  });
});
