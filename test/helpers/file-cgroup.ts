/**
 * With `FLUME_TEST_CPU` naming a cgroup v2 folder (scripts/flakes.mjs makes one), each test file's
 * worker moves itself into a cgroup of the file's own before the file runs, so every process the file
 * starts is counted there, the tmux servers, supervisors and agents that no one waits for included
 * (`test/helpers/outcome-reporter.ts` reads them at the end). Unset, this does nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { cgroupName } from './cgroup-name.mjs';

const dir = process.env.FLUME_TEST_CPU;
const testPath = expect.getState().testPath;
const project = process.env.VITEST_PROJECT_NAME ?? process.env.FLUME_TEST_PROJECT;
if (dir && testPath) {
  const group = join(dir, cgroupName(project ?? 'flume', relative(process.cwd(), testPath)));
  mkdirSync(group, { recursive: true });
  writeFileSync(join(group, 'cgroup.procs'), String(process.pid));
}
