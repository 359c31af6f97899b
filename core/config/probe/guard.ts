/**
 * The load-time guard: a config is first loaded in a child process with a time limit, so a config
 * that never finishes (or takes flume down) costs that child, not flume. What the child found is kept
 * in the host's `config-probes.json`, by the digest of the config and of every file of the repository
 * it read, so an unchanged config that loaded costs no second process, and one that hung is named at
 * once, not after another wait. A hung config is probed again when it, or its trust, changes, when
 * the limit was raised, and two minutes after it was found hung.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlumeError, flumeError, ERROR_CODES, type FlumeErrorCode } from '../../api/errors.js';
import { hostStateDir } from '../../state/host.js';
import { readJsonFile, updateJsonFile } from '../../state/json-file.js';
import { sha256, type FoundConfig } from '../find.js';
import { isDataConfig, readDataConfig } from '../data.js';
import { PROBE_MARK, type ProbeAnswer } from './probe-answer.js';
import { environmentMs } from '../../support/duration.js';

/** How long a config may take to load, ms: `FLUME_CONFIG_TIMEOUT_MS`, default 10 s. */
export function configTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return environmentMs(env, 'FLUME_CONFIG_TIMEOUT_MS');
}

/** What one probe of a config found. */
export interface ProbeRecord {
  file: string;
  digest: string;
  /** Each file the config loaded or read besides itself (in the repository or not), with its digest then. */
  files: Record<string, string>;
  /** `loading`: a probe in the background (process `pid`) has not finished yet. */
  outcome: 'ok' | 'hung' | 'threw' | 'loading';
  pid?: number;
  error?: ProbeAnswer['error'];
  timeoutMs?: number;
  at: string;
}

interface ProbeFile {
  version: 1;
  repositories: Record<string, ProbeRecord>;
}

const EMPTY: ProbeFile = { version: 1, repositories: {} };

/** How a caller waits for a probe: `waitMs` (status) waits that long at most, then leaves it to run in the background. */
export interface GuardOptions {
  waitMs?: number;
}

/**
 * Passes when the config at `root` loads within the limit; throws CONFIG_HUNG for one that did not
 * finish, and the config's own error (BAD_CONFIG …) for one that threw. Answers from the host's
 * record when nothing the config loaded has changed since. With `waitMs`, a probe that has not
 * answered by then goes on in the background and CONFIG_LOADING is thrown.
 */
export async function guardConfig(root: string, found: FoundConfig, options: GuardOptions = {}): Promise<ProbeRecord | undefined> {
  if (runsNoCode(root, found)) return undefined;
  const cached = (await readJsonFile<ProbeFile>(probeFile(), EMPTY)).repositories?.[root];
  let record: ProbeRecord;
  if (cached && cached.outcome !== 'loading' && stillHolds(cached, found)) {
    record = cached;
  } else if (options.waitMs !== undefined) {
    record = (await probeInBackground(root, found, cached, options.waitMs)) ?? loading(root, found);
  } else {
    record = await probeConfig(root, found);
    await updateJsonFile<ProbeFile>(probeFile(), EMPTY, (value) => ({ version: 1, repositories: { ...value.repositories, [root]: record } }));
  }
  if (record.outcome === 'hung') {
    const seconds = Math.round((record.timeoutMs ?? configTimeoutMs()) / 100) / 10;
    throw flumeError('CONFIG_HUNG', { file: found.file, seconds, root }, {
      details: { root, file: found.file, timeoutMs: record.timeoutMs, probedAt: record.at, ...(Object.keys(record.files ?? {}).length ? { loaded: Object.keys(record.files) } : {}) },
    });
  }
  if (record.outcome === 'threw') {
    const fallback = flumeError('BAD_CONFIG', { file: found.file }, { variant: 'probeFailed' });
    const error = record.error ?? { code: fallback.code, message: fallback.message };
    const code = (error.code in ERROR_CODES ? error.code : 'BAD_CONFIG') as FlumeErrorCode;
    throw FlumeError.fromJSON({
      code,
      message: error.message,
      fix: error.fix ?? fallback.fix,
      details: { ...(error.details ?? {}), root, file: found.file },
    });
  }
  return record;
}

/** The refusal of a caller that would not wait: the config is still being probed. */
function loading(root: string, found: FoundConfig): never {
  const seconds = Math.round(configTimeoutMs() / 100) / 10;
  throw flumeError('CONFIG_LOADING', { file: found.file, seconds, root }, {
    details: { root, file: found.file, digest: found.digest },
  });
}

/**
 * Starts a probe in a process of its own (unless one of this very config is under way), and waits
 * up to `waitMs` for its outcome; undefined when it has not answered by then. The process records
 * what it found whatever this one does meanwhile, and kills a hung config at the limit.
 */
async function probeInBackground(root: string, found: FoundConfig, cached: ProbeRecord | undefined, waitMs: number): Promise<ProbeRecord | undefined> {
  if (!(cached && cached.outcome === 'loading' && stillHolds(cached, found))) {
    const { startDetached } = await import('../../support/exec.js');
    const pid = startDetached(process.execPath, [backgroundScript(), root, found.file, found.digest], { cwd: root });
    // The probe is on record as loading from now, in its own pid: a command that comes before the
    // probe's node has started (seconds, on a loaded machine) starts no second one. The probe's own
    // record, or its outcome, already there is left as it is.
    if (pid) {
      const marker: ProbeRecord = { file: found.file, digest: found.digest, files: {}, outcome: 'loading', pid, timeoutMs: configTimeoutMs(), at: new Date().toISOString() };
      await updateJsonFile<ProbeFile>(probeFile(), EMPTY, (value) => {
        const now = value.repositories?.[root];
        if (now && stillHolds(now, found)) return undefined;
        return { version: 1, repositories: { ...value.repositories, [root]: marker } };
      });
    }
  }
  const until = Date.now() + waitMs;
  for (;;) {
    const now = (await readJsonFile<ProbeFile>(probeFile(), EMPTY)).repositories?.[root];
    if (now && now.outcome !== 'loading' && stillHolds(now, found)) return now;
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, until - Date.now())));
  }
}

/**
 * Probes the config `found` and records the outcome (the background probe's work): first a
 * `loading` record naming this process, so no second probe of it starts meanwhile. The outcome is
 * recorded only while the host's record is still of this config (a newer one is not undone).
 */
export async function probeAndRecord(root: string, found: FoundConfig): Promise<ProbeRecord> {
  const mine = (record: ProbeRecord | undefined) => !record || (record.file === found.file && record.digest === found.digest);
  const marker: ProbeRecord = { file: found.file, digest: found.digest, files: {}, outcome: 'loading', pid: process.pid, timeoutMs: configTimeoutMs(), at: new Date().toISOString() };
  await updateJsonFile<ProbeFile>(probeFile(), EMPTY, (value) => ({ version: 1, repositories: { ...value.repositories, [root]: marker } }));
  const record = await probeConfig(root, found);
  await updateJsonFile<ProbeFile>(probeFile(), EMPTY, (value) => (mine(value.repositories?.[root]) ? { version: 1, repositories: { ...value.repositories, [root]: record } } : undefined));
  return record;
}

/**
 * True for a config that is data alone: a JSON or YAML file (or package.json's `flume` key) naming
 * no plugin. Loading it parses the text that was found and runs nothing (no `$import` is followed),
 * so it cannot hang or take flume down, and no child process is spent on it. One that does not
 * parse, or asks to `$import`, runs nothing either: its load refuses it. A data config that names
 * plugins runs their modules: probed as any other.
 */
export function runsNoCode(root: string, found: FoundConfig): boolean {
  if (!isDataConfig(found.file)) return false;
  let config: unknown;
  try {
    config = readDataConfig(root, found);
  } catch {
    return true;
  }
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
  const { run } = await import('../../support/exec.js');
  // The text that was found and trusted goes to the probe: it never reads the file again.
  const result = await run(process.execPath, [script('probe.js'), root, found.file], { cwd: root, input: found.text, timeoutMs, killSignal: 'SIGKILL' });
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
  // A background probe holds while its process runs, within the limit it was given (and a moment).
  if (record.outcome === 'loading') return Boolean(record.pid && alive(record.pid)) && Date.now() - Date.parse(record.at) < (record.timeoutMs ?? configTimeoutMs()) + 5000;
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A built script of this folder (the probe, the background probe): beside this file, or (run from the TypeScript source, as tests do) in dist/. */
function script(name: string): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts') ? join(dirname(here), '..', '..', '..', 'dist', 'core', 'config', 'probe', name) : join(dirname(here), name);
}

function backgroundScript(): string {
  return script('probe-background.js');
}
