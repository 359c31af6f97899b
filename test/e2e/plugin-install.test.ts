/**
 * flume's Claude Code plugin installed the Claude Code way, by the REAL Claude Code: `claude plugin
 * marketplace add` of this checkout (a local folder) and of a git repository holding it (served over
 * git's smart HTTP on 127.0.0.1),
 * then `claude plugin install flume@flume`; and the copy Claude Code puts in its plugin cache starts
 * its MCP server as `.mcp.json` says, which answers tool calls from there (finding flume on PATH), or,
 * with no flume on PATH, says so in one line with the fix. One config dir for it all.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeClaudeEnv, type ClaudeEnv } from '../helpers/claude-env.js';
import { assertIsolated } from '../helpers/netns.js';
import { git, PROJECT } from '../helpers/repo.js';
import { validStatus } from '../helpers/status-schema.js';
import { validResult } from '../helpers/result-schema.js';

let env: ClaudeEnv;
beforeAll(() => {
  assertIsolated();
  // The plugin commands never reach the API; the address is one nothing listens on.
  env = makeClaudeEnv({ baseUrl: 'http://127.0.0.1:9' });
});
afterAll(() => env?.cleanup());

/**
 * Runs `claude <args>` with the test's config dir; fails the test unless it exits 0. Asynchronous: the
 * git repository is served from this very process while Claude Code clones it.
 */
async function claude(...args: string[]): Promise<string> {
  const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(env.binary, args, { env: env.env, cwd: env.root, stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => resolve({ code, out }));
  });
  expect(result.code, `claude ${args.join(' ')}:\n${result.out}`).toBe(0);
  return result.out;
}

/** Where Claude Code installed flume@flume (its installed_plugins.json); that folder must be in its cache. */
function installPath(): string {
  const installed = JSON.parse(readFileSync(join(env.configDir, 'plugins', 'installed_plugins.json'), 'utf8'));
  const paths = JSON.stringify(installed).match(/"installPath":"([^"]+)"/g)?.map((m) => JSON.parse(m.slice(14)) as string) ?? [];
  expect(paths, JSON.stringify(installed)).toHaveLength(1);
  expect(paths[0].startsWith(join(env.configDir, 'plugins', 'cache'))).toBe(true);
  return paths[0];
}

/** The MCP server command of the installed copy, as its `.mcp.json` gives it to Claude Code. */
function serverCommand(root: string): { command: string; args: string[] } {
  const { mcpServers } = JSON.parse(readFileSync(join(root, '.mcp.json'), 'utf8'));
  const { command, args } = mcpServers.flume as { command: string; args: string[] };
  return { command: command === 'node' ? process.execPath : command, args: args.map((a) => a.replaceAll('${CLAUDE_PLUGIN_ROOT}', root)) };
}

/** The installed copy's server, with `flume` on PATH (a bin folder linking this checkout's build), answers status and kinds. */
async function answersFromCache(root: string): Promise<void> {
  const bin = join(env.root, 'bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    symlinkSync(join(PROJECT, 'dist', 'bin', 'flume.js'), join(bin, 'flume'));
  }
  const state = join(env.root, 'flume-state');
  const { command, args } = serverCommand(root);
  const client = new Client({ name: 'flume-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd: env.root, env: { ...env.env, PATH: `${bin}:${env.env.PATH}`, FLUME_STATE_DIR: state } }));
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('tell');
    const status: any = await client.callTool({ name: 'status', arguments: {} });
    expect(validStatus(status.structuredContent, 'status from the plugin cache').places).toEqual([]);
    const repo = join(env.root, 'repo');
    if (!existsSync(repo)) {
      mkdirSync(repo);
      git(repo, 'init', '-q');
    }
    const kinds: any = await client.callTool({ name: 'kinds', arguments: { repo } });
    expect(validResult('kinds', kinds.structuredContent, 'kinds from the plugin cache').kinds.map((k: { name: string }) => k.name)).toContain('fix');
  } finally {
    await client.close();
  }
}

/**
 * The repositories under `root` over git's smart HTTP on 127.0.0.1: each request is handed to
 * `git http-backend` as CGI (Claude Code clones shallow, which git's dumb HTTP cannot serve).
 */
async function serveGit(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const backend = spawn('git', ['http-backend'], {
      env: { ...process.env, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: url.pathname, QUERY_STRING: url.search.slice(1), REQUEST_METHOD: request.method ?? 'GET', CONTENT_TYPE: request.headers['content-type'] ?? '', REMOTE_ADDR: '127.0.0.1', GIT_PROTOCOL: String(request.headers['git-protocol'] ?? '') },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    request.pipe(backend.stdin);
    const chunks: Buffer[] = [];
    backend.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    backend.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const headers = all.subarray(0, end).toString().split('\r\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as const);
      const status = Number(headers.find(([k]) => k.toLowerCase() === 'status')?.[1].split(' ')[0] ?? 200);
      response.writeHead(status, Object.fromEntries(headers.filter(([k]) => k.toLowerCase() !== 'status')));
      response.end(all.subarray(end + 4));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("flume's plugin, installed with Claude Code's own commands", () => {
  it('installs from a local folder and from a git repository, and its server answers from the plugin cache', async () => {
    // A local folder: this checkout.
    expect(await claude('plugin', 'marketplace', 'add', PROJECT)).toMatch(/flume/);
    await claude('plugin', 'install', 'flume@flume');
    const fromFolder = installPath();
    for (const file of ['.mcp.json', 'bin/flume-mcp.mjs', 'commands/launch.md', '.claude-plugin/plugin.json']) expect(existsSync(join(fromFolder, file)), file).toBe(true);

    // With no flume on PATH, the cached server says so in one line with the fix, and exits 1.
    const { command, args } = serverCommand(fromFolder);
    const bare = spawnSync(command, args, { cwd: env.root, env: { ...env.env, PATH: '/usr/bin:/bin' }, encoding: 'utf8', input: '', timeout: 20_000 });
    expect(bare.status).toBe(1);
    expect(bare.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^FLUME_NOT_FOUND .* fix: .*PATH/)]);
    await answersFromCache(fromFolder);

    await claude('plugin', 'uninstall', 'flume@flume');
    await claude('plugin', 'marketplace', 'remove', 'flume');

    // A git repository holding the marketplace and the plugin (no build: the cache copy finds flume on PATH).
    const origin = join(env.root, 'origin');
    mkdirSync(origin);
    cpSync(join(PROJECT, '.claude-plugin'), join(origin, '.claude-plugin'), { recursive: true });
    cpSync(join(PROJECT, 'plugins', 'claude'), join(origin, 'plugins', 'claude'), { recursive: true, filter: (src) => !src.endsWith('.ts') });
    git(origin, 'init', '-q');
    git(origin, 'add', '-A');
    git(origin, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'the plugin');
    // Claude Code 2.1.332 takes a git source as user@host:path or an http(s) URL ending .git (`file://`
    // is "Invalid marketplace source format"): the repository is served over git's smart HTTP.
    git(env.root, 'clone', '-q', '--bare', origin, 'origin.git');
    const server = await serveGit(env.root);
    try {
      await claude('plugin', 'marketplace', 'add', `${server.url}/origin.git`);
      await claude('plugin', 'install', 'flume@flume');
    } finally {
      await server.close();
    }
    const fromGit = installPath();
    expect(existsSync(join(fromGit, 'bin', 'flume-mcp.mjs'))).toBe(true);
    expect(existsSync(join(fromGit, 'mcp-server.ts'))).toBe(false);
    await answersFromCache(fromGit);
  });
});
