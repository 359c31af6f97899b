#!/usr/bin/env node
// Starts flume's MCP server (stdio); .mcp.json names this file. The server is part of the flume
// package (dist/plugins/claude/mcp-server.js, with the package's own dependencies), not of this
// plugin folder: Claude Code copies only the folder into its plugin cache. So the server is found in
// the package this folder sits in (a checkout, an npm install), else in the package of the `flume`
// on PATH; with neither, one line on stderr says so and how to mend it, and the process exits 1.
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SERVER = join('dist', 'plugins', 'claude', 'mcp-server.js');

/** The server in the package this plugin folder belongs to, or in that of the `flume` on PATH. */
function findServer() {
  const own = fileURLToPath(new URL(`../../../${SERVER}`, import.meta.url));
  if (existsSync(own)) return own;
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const bin = join(dir, 'flume');
    if (!existsSync(bin)) continue;
    // npm links bin/flume to <package>/dist/bin/flume.js.
    const root = dirname(dirname(dirname(realpathSync(bin))));
    if (existsSync(join(root, SERVER))) return join(root, SERVER);
  }
  return undefined;
}

const server = findServer();
if (!server) {
  process.stderr.write('FLUME_NOT_FOUND flume\'s MCP server needs flume installed, and no `flume` is on PATH. fix: npm install -g flume (or put a flume checkout\'s built bin on PATH), then restart Claude Code.\n');
  process.exit(1);
}
const { serve } = await import(pathToFileURL(server).href);
await serve();
