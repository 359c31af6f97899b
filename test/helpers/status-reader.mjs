#!/usr/bin/env node
// A long-lived `flume status --json` for tests that read status many times a second: the built
// flume's own status() (what the CLI prints with --json), behind one line of stdin per reading, so a
// reading costs what status does and not a node start, the CLI's modules and the config's transpile
// each time. Run with the environment a CLI run would get (FLUME_STATE_DIR above all).
// Request: a JSON line {"repo": "<path>"}. Answer: one JSON line, {"report": …} or {"error": "…"}.
import { createInterface } from 'node:readline';

const dist = new URL('../../dist/', import.meta.url);
const { status } = await import(new URL('core/engine/status/status.js', dist).href);
const { findRepository } = await import(new URL('core/support/git.js', dist).href);
const { defaultPreset } = await import(new URL('plugins/defaults.js', dist).href);

// One reading at a time, in the order asked: answers match requests line for line.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    let answer;
    try {
      const { repo } = JSON.parse(line);
      const root = repo === undefined ? undefined : (await findRepository(repo)).root;
      answer = { report: await status(defaultPreset, { repo: root }) };
    } catch (error) {
      answer = { error: `${error?.code ?? ''} ${error?.message ?? String(error)}`.trim() };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  });
});
