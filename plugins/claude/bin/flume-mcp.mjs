#!/usr/bin/env node
// Starts flume's MCP server (stdio); .mcp.json names this file. The server itself is compiled from
// plugins/claude/mcp-server.ts into the package's dist/ folder.
import { fileURLToPath } from 'node:url';
const server = fileURLToPath(new URL('../../../dist/plugins/claude/mcp-server.js', import.meta.url));
const { serve } = await import(server);
await serve();
