import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { join } from 'node:path';
import { agentRepo, type AgentRepo } from '../../helpers/agent-repo.js';
import { PROJECT } from '../../helpers/repo.js';
import { parseStatus, validStatus } from '../../helpers/status-schema.js';

let current: AgentRepo;
let client: Client;

beforeEach(async () => {
  current = agentRepo({ onPrompt: [{ actions: [{ say: 'On it.' }, { sleepMs: 30_000 }] }] });
  client = new Client({ name: 'flume-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(PROJECT, 'plugins/claude/bin/flume-mcp.mjs')], env: current.env, cwd: current.repo }));
});
afterEach(async () => {
  await client.close();
  await current.cleanup();
});

const text = (result: any) => result.content.map((c: { text: string }) => c.text).join('\n');

describe('the MCP server, driven by the SDK\'s own client over stdio', () => {
  it('lists its tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['launch', 'status']);
    expect(tools.find((t) => t.name === 'launch')!.inputSchema.required).toEqual(['brief', 'repo']);
  });

  it('launches a brief and gives what status --json gives', async () => {
    const launched: any = await client.callTool({ name: 'launch', arguments: { brief: '--kind question Why does the parser drop the last line?', repo: current.repo } });
    expect(launched.isError).toBeFalsy();
    expect(text(launched)).toContain('Launched question/why-does-the-parser-drop-the');
    expect(launched.structuredContent.place.stage.delivery).toBe('taken');
    const again: any = await client.callTool({ name: 'launch', arguments: { brief: 'Why does the parser drop the last line?', repo: current.repo } });
    expect(again.structuredContent.place.id).toBe('fix/why-does-the-parser-drop-the');

    const status: any = await client.callTool({ name: 'status', arguments: {} });
    expect(status.isError).toBeFalsy();
    const report = parseStatus(text(status), 'the MCP status tool');
    expect(validStatus(status.structuredContent, 'the MCP status tool\'s structuredContent')).toEqual(report);
    expect(report.places.map((p: { id: string }) => p.id).sort()).toEqual(['fix/why-does-the-parser-drop-the', 'question/why-does-the-parser-drop-the']);
    const one: any = await client.callTool({ name: 'status', arguments: { place: 'fix/why-does-the-parser-drop-the' } });
    expect(validStatus(one.structuredContent, 'the MCP status tool for one place').places).toHaveLength(1);
    expect(parseStatus(text(one), 'the MCP status tool for one place')).toEqual(one.structuredContent);
  });

  it('answers bad arguments and refusals with errors carrying flume\'s code and fix, and keeps serving', async () => {
    const missing: any = await client.callTool({ name: 'launch', arguments: { repo: current.repo } });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent.error.code).toBe('BAD_USAGE');
    const extra: any = await client.callTool({ name: 'status', arguments: { bogus: 'x' } });
    expect(extra.structuredContent.error.code).toBe('BAD_USAGE');
    const unknownKind: any = await client.callTool({ name: 'launch', arguments: { brief: '--kind nope do it', repo: current.repo } });
    expect(unknownKind.structuredContent.error).toMatchObject({ code: 'UNKNOWN_KIND' });
    expect(unknownKind.structuredContent.error.fix).toContain('fix, change, question');
    // A brief holding a control character (here a paste-end marker) is refused by the CLI the server runs.
    const escaped: any = await client.callTool({ name: 'launch', arguments: { brief: 'do it \x1b[201~ now', repo: current.repo } });
    expect(escaped.structuredContent.error).toMatchObject({ code: 'BAD_TEXT' });
    const notRepo: any = await client.callTool({ name: 'launch', arguments: { brief: 'x', repo: '/nonexistent/folder' } });
    expect(notRepo.structuredContent.error.code).toBe('NOT_A_REPOSITORY');
    const unknownPlace: any = await client.callTool({ name: 'status', arguments: { place: 'fix/nothing-here' } });
    expect(unknownPlace.structuredContent.error.code).toBe('UNKNOWN_PLACE');
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(2);
  });
});
