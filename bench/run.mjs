// Runs every benchmark in this folder, one after another, each printing its own figures.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
for (const file of readdirSync(dir).filter((name) => name.endsWith('.bench.mjs') || name === 'transcript-state.mjs').sort()) {
  console.log(`\n== ${file}`);
  const result = spawnSync(process.execPath, [`${dir}/${file}`], { stdio: 'inherit' });
  if (result.status !== 0) process.exitCode = 1;
}
