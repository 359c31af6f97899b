/**
 * The load-time guard: a config is first loaded in a child process with a time limit, so a config
 * that never finishes (or takes flume down) costs that child, not flume. What the child found is kept
 * in the host's `config-probes.json`, by the digest of the config and of every file of the repository
 * it read, so an unchanged config that loaded costs no second process, and one that hung is named at
 * once, not after another wait. A hung config is probed again when it, or its trust, changes, when
 * the limit was raised, and two minutes after it was found hung.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlumeError, ERROR_CODES, type FlumeErrorCode } from '../errors.js';
import { hostStateDir } from '../state/host.js';
import { readJsonFile, updateJsonFile } from '../state/json-file.js';
import { sha256, type FoundConfig } from './find.js';
import { PROBE_MARK, type ProbeAnswer } from './probe-answer.js';

/** How long a config may take to load, ms: `FLUME_CONFIG_TIMEOUT_MS`, default 10 s. */
export function configTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.FLUME_CONFIG_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : 10_000;
}

/** What one probe of a config found. */
export interface ProbeRecord {
  file: string;
  digest: string;
  /** Each file of the repository the config read, with its digest then. */
  files: Record<string, string>;
  outcome: 'ok' | 'hung' | 'threw';
  error?: ProbeAnswer['error'];
  timeoutMs?: number;
  at: string;
}

interface ProbeFile {
  version: 1;
  repositories: Record<string, ProbeRecord>;
}

const EMPTY: ProbeFile = { version: 1, repositories: {} };

/**
 * Passes when the config at `root` loads within the limit; throws CONFIG_HUNG for one that did not
 * finish, and the config's own error (BAD_CONFIG …) for one that threw. Answers from the host's
 * record when nothing the config read has changed since.
 */
export async function guardConfig(root: string, found: FoundConfig): Promise<ProbeRecord | undefined> {
  if (runsNoCode(found)) return undefined;
  const cached = (await readJsonFile<ProbeFile>(probeFile(), EMPTY)).repositories?.[root];
  const record = cached && stillHolds(cached, found) ? cached : await probeConfig(root, found);
  if (record !== cached) await updateJsonFile<ProbeFile>(probeFile(), EMPTY, (value) => ({ version: 1, repositories: { ...value.repositories, [root]: record } }));
  if (record.outcome === 'hung') {
    const seconds = Math.round((record.timeoutMs ?? configTimeoutMs()) / 100) / 10;
    throw new FlumeError('CONFIG_HUNG', `${found.file} did not finish loading within ${seconds} s; flume skips this repository.`, {
      fix: `Make ${found.file} finish loading (a loop or a wait at its top level, or in a plugin it loads); flume tries it again once the file changes, or after \`flume trust --repo ${root}\`.`,
      details: { root, file: found.file, timeoutMs: record.timeoutMs, probedAt: record.at },
    });
  }
  if (record.outcome === 'threw') {
    const error = record.error ?? { code: 'BAD_CONFIG', message: `${found.file} could not be loaded.` };
    const code = (error.code in ERROR_CODES ? error.code : 'BAD_CONFIG') as FlumeErrorCode;
    throw new FlumeError(code, error.message, {
      fix: error.fix ?? `Correct ${found.file}; it must export the config as its default export.`,
      details: { ...(error.details ?? {}), root, file: found.file },
    });
  }
  return record;
}

/**
 * True for a config that is data alone: a JSON file (or package.json's `flume` key) naming no
 * plugin. Loading it parses JSON and runs nothing, so it cannot hang or take flume down, and no
 * child process is spent on it. A JSON config that names plugins runs their modules: probed as any
 * other. (YAML is probed too: telling it apart needs a YAML parser, for a form few configs take.)
 */
export function runsNoCode(found: FoundConfig): boolean {
  if (!found.file.endsWith('.json')) return false;
  let text: string;
  let data: unknown;
  try {
    text = readFileSync(found.file, 'utf8');
    data = JSON.parse(text);
  } catch {
    return false; // unreadable or not JSON: the probe and the load say what is wrong
  }
  const inPackage = basename(found.file) === 'package.json';
  const config = inPackage ? (data as { flume?: unknown } | null)?.flume : data;
  // What was trusted, and nothing else: a file changed since it was found is probed as any other.
  if ((inPackage ? sha256(JSON.stringify(config)) : sha256(text)) !== found.digest) return false;
  const plugins = (config as { plugins?: unknown } | null | undefined)?.plugins;
  return plugins === undefined || (Array.isArray(plugins) && plugins.length === 0);
}

/** Forgets what was found of a repository's config, so the next load probes it afresh. */
export async function forgetProbe(root: string, stateDir?: string): Promise<void> {
  await updateJsonFile<ProbeFile>(probeFile(stateDir), EMPTY, (value) => {
    if (!value.repositories?.[root]) return undefined;
    const { [root]: _gone, ...rest } = value.repositories;
    return { version: 1, repositories: rest };
  });
}

async function probeConfig(root: string, found: FoundConfig): Promise<ProbeRecord> {
  const timeoutMs = configTimeoutMs();
  const at = new Date().toISOString();
  // Loaded here, not at the top: a config whose probe is on record costs no process and no execa.
  const { run } = await import('../exec.js');
  const result = await run(process.execPath, [probeScript(), root, found.file], { cwd: root, timeoutMs, killSignal: 'SIGKILL' });
  const base = { file: found.file, digest: found.digest, at };
  if (result.timedOut) return { ...base, files: {}, outcome: 'hung', timeoutMs };
  const line = result.stdout.split('\n').reverse().find((l) => l.startsWith(PROBE_MARK));
  if (!line) {
    // The config ended the process itself (process.exit, a crash): it did not load.
    const tail = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-2).join(' ');
    return { ...base, files: {}, outcome: 'threw', error: { code: 'BAD_CONFIG', message: `${found.file} ended flume's process while loading (exit ${result.exitCode})${tail ? `: ${tail}` : ''}` } };
  }
  const answer = JSON.parse(line.slice(PROBE_MARK.length)) as ProbeAnswer;
  const files = Object.fromEntries(answer.files.map((file) => [file, digestOf(file)]));
  return { ...base, files, outcome: answer.ok ? 'ok' : 'threw', ...(answer.error ? { error: answer.error } : {}) };
}

/**
 * How long a hung outcome stands before the config is probed again: a machine busy for a moment
 * must not leave a good config named hung for good, and a config that truly hangs costs one wait
 * in this long, not one per command.
 */
const HUNG_HOLDS_MS = 2 * 60_000;

function stillHolds(record: ProbeRecord, found: FoundConfig): boolean {
  if (record.file !== found.file || record.digest !== found.digest) return false;
  if (record.outcome === 'hung' && (Date.now() - Date.parse(record.at) > HUNG_HOLDS_MS || (record.timeoutMs ?? 0) < configTimeoutMs())) return false;
  return Object.entries(record.files ?? {}).every(([file, digest]) => digestOf(file) === digest);
}

function digestOf(file: string): string {
  try {
    return sha256(readFileSync(file));
  } catch {
    return '-';
  }
}

function probeFile(stateDir = hostStateDir()): string {
  return join(stateDir, 'config-probes.json');
}

/** The built probe: beside this file, or (run from the TypeScript source, as tests do) in dist/. */
function probeScript(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? join(dirname(here), '..', '..', 'dist', 'core', 'config', 'probe.js') : join(dirname(here), 'probe.js');
}
