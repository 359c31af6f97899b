/**
 * Writes the published schemas from their one source: `flume.schema.json` (the config) and
 * `status.schema.json` (status --json). `npm run schema` runs it; a test keeps the files in step.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { configSchema } from './schema.js';
import { statusSchema } from '../engine/status-schema.js';

/** Each published schema file and its content. */
export function schemaFiles(): Record<string, string> {
  return {
    'flume.schema.json': JSON.stringify(configSchema, null, 2) + '\n',
    'status.schema.json': JSON.stringify(statusSchema, null, 2) + '\n',
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  for (const [file, content] of Object.entries(schemaFiles())) writeFileSync(join(root, file), content);
}
