// flume's own delay from the transcript recording a prompt to flume reporting it taken: awaitPrompt
// reads on file-system events. Measured over many prompts; each append happens at a random moment.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { PROJECT, median, temp, fmt } from './lib.mjs';

const { createFlume } = await import(join(PROJECT, 'dist/core/api/plugin.js'));
const { awaitPrompt } = await import(join(PROJECT, 'dist/core/engine/stage/deliver.js'));
const { agentPlugins } = await import(join(PROJECT, 'dist/agents/index.js'));
const { transcriptPath } = await import(join(PROJECT, 'dist/agents/claude-code/paths.js'));

const configDir = temp('flume-bench-claude-');
const cwd = temp('flume-bench-cwd-');
process.env.FLUME_STATE_DIR = temp('flume-bench-state-');
const flume = await createFlume({ plugins: agentPlugins(), config: { agents: { 'claude-code': { configDir } } } });
const rounds = Number(process.env.ROUNDS ?? 30);
const delays = [];
for (let i = 0; i < rounds; i++) {
  const sessionId = randomUUID();
  const path = transcriptPath(configDir, cwd, sessionId);
  mkdirSync(join(path, '..'), { recursive: true });
  if (i % 2) writeFileSync(path, JSON.stringify({ type: 'file-history-snapshot' }) + '\n');
  const handle = { driver: 'claude-code', sessionId, host: 'printed', transcriptPath: path, cwd, startedAt: new Date().toISOString(), data: { configDir } };
  const text = `prompt ${i} ${'x'.repeat(200)}`;
  let written = 0;
  const timer = setTimeout(() => {
    written = performance.now();
    appendFileSync(path, JSON.stringify({ type: 'user', uuid: randomUUID(), sessionId, timestamp: new Date().toISOString(), message: { role: 'user', content: text } }) + '\n');
  }, 50 + Math.random() * 200);
  const state = await awaitPrompt(flume, handle, text, undefined, 5000);
  const seen = performance.now();
  clearTimeout(timer);
  if (state !== 'taken') throw new Error(`round ${i}: ${state}`);
  delays.push(seen - written);
}
const sorted = [...delays].sort((a, b) => a - b);
console.log(`prompt recorded → reported taken, ${rounds} prompts: median ${fmt(median(delays))}, p90 ${fmt(sorted[Math.floor(rounds * 0.9)])}, max ${fmt(sorted[rounds - 1])} (limit: median 300 ms)`);
