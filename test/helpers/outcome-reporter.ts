/**
 * A reporter that writes each file's outcome to `FLUME_TEST_OUTCOME` (a JSON file), for the scripts
 * that read a run afterwards: `scripts/ci-test.mjs` (which files failed, to run each once more alone)
 * and `scripts/flakes.mjs` (each test's failures over many runs). With `FLUME_TEST_CPU` naming a
 * cgroup folder (test/helpers/file-cgroup.ts), each file's CPU is read from its own cgroup too.
 */
import { readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import type { SerializedError } from '@vitest/utils';
import { cgroupName } from './cgroup-name.mjs';

/** One file's run, as the scripts read it. */
export interface FileOutcome {
  project: string;
  file: string;
  state: string;
  durationMs: number;
  /** The CPU of every process the file started (daemons included), in seconds, where it was counted. */
  cpuS?: number;
  tests: { name: string; state: string; errors: string[] }[];
  /** Errors of the file itself (a hook of its suite, its import). */
  errors: string[];
}

export interface RunOutcome {
  reason: string;
  files: FileOutcome[];
  unhandled: string[];
}

export default class OutcomeReporter implements Reporter {
  private root = process.cwd();

  onInit(ctx: { config: { root: string } }): void {
    this.root = ctx.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>, reason: string): void {
    const path = process.env.FLUME_TEST_OUTCOME;
    if (!path) return;
    const cpu = cpuOfFiles(process.env.FLUME_TEST_CPU);
    const files = modules.map((module): FileOutcome => {
      const file = relative(this.root, module.moduleId);
      const project = module.project.name;
      const seconds = cpu.get(cgroupName(project, file));
      return {
        project,
        file,
        state: module.state(),
        durationMs: Math.round(module.diagnostic().duration),
        ...(seconds === undefined ? {} : { cpuS: seconds }),
        tests: [...module.children.allTests()].map((test) => {
          const result = test.result();
          return { name: test.fullName, state: result.state, errors: (result.errors ?? []).map(describe) };
        }),
        errors: module.errors().map(describe),
      };
    });
    const outcome: RunOutcome = { reason, files, unhandled: unhandled.map(describe) };
    writeFileSync(path, JSON.stringify(outcome, null, 1));
  }
}

/** An error as a person reads it: its message and the first lines of its stack. */
function describe(error: SerializedError): string {
  const stack = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line) && !line.includes('/node_modules/')).slice(0, 6);
  return [`${error.name ?? 'Error'}: ${error.message}`, ...stack].join('\n');
}

/** Each file's cgroup's CPU in seconds (cgroup v2 `cpu.stat`), the cgroups then removed where empty. */
function cpuOfFiles(dir: string | undefined): Map<string, number> {
  const cpu = new Map<string, number>();
  if (!dir) return cpu;
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return cpu;
  }
  for (const name of names) {
    try {
      const usec = /usage_usec (\d+)/.exec(readFileSync(join(dir, name, 'cpu.stat'), 'utf8'))?.[1];
      if (usec) cpu.set(name, Math.round(Number(usec) / 1e4) / 100);
      rmdirSync(join(dir, name));
    } catch {
      // a process of the file still runs in it: the script that made the folder removes it later
    }
  }
  return cpu;
}
