/**
 * One reading of several hosts (`flume status --all-hosts`, `--host A --host B`): this host's
 * status and each named host's own `status --json`, read at once with a time limit each, merged
 * into one document whose every place and repository carries its host. A host that does not answer
 * is listed with its error and the time of its last good reading, never dropped. Every claim about
 * a remote place is the remote flume's own.
 */
import { FlumeError, flumeError } from '../api/errors.js';
import { longTimeout, type LongTimer } from '../support/duration.js';
import type { PlaceStatus, RepositoryStatus, StatusReport } from '../engine/status/status.js';
import type { SupervisorStatus } from '../engine/supervisor/supervisor-state.js';
import { lastGoodReading, noteGoodReading, THIS_HOST, type NamedHost } from './list.js';
import { relay } from './relay.js';
import { environmentMs } from '../support/duration.js';

/** A host as a merged reading lists it. */
export interface HostReading {
  name: string;
  /** The ssh target (absent for this host). */
  target?: string;
  /** answered: its places are in the reading; unreachable: ssh did not reach its flume; failed: its flume answered with an error. */
  state: 'answered' | 'unreachable' | 'failed';
  error?: { code: string; message: string; fix?: string };
  /** When it last answered a reading (for one that did not answer now). */
  lastReadingAt?: string;
  supervisor?: SupervisorStatus;
}

/** The merged reading: status.schema.json's shape, with `host` on each place and repository and the hosts listed. */
export interface AllHostsReport extends Omit<StatusReport, 'places' | 'repositories'> {
  repositories: Array<RepositoryStatus & { host: string }>;
  places: Array<PlaceStatus & { host: string }>;
  hosts: HostReading[];
}

/** How long a merged reading waits for each host, ms (`FLUME_HOST_READ_MS`, default 10 s). */
export function hostReadMs(env: NodeJS.ProcessEnv): number {
  return environmentMs(env, 'FLUME_HOST_READ_MS');
}

/**
 * Reads this host (`here`, when asked) and every host in `hosts` at once; `argv` is the status
 * command line without its host options (`status [place] [--repo R]`), run on each host with `--json`.
 */
export async function readAllHosts(options: {
  here?: () => Promise<{ code: number; stdout: string }>;
  hosts: NamedHost[];
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  version: string;
}): Promise<AllHostsReport> {
  const { env } = options;
  const limit = hostReadMs(env);
  const asked = [...options.argv.filter((arg) => arg !== '--json' && arg !== '--json=true'), '--json'];
  const readings = await Promise.all([
    options.here ? options.here().then((answer) => parsed(THIS_HOST, undefined, answer)) : undefined,
    ...options.hosts.map((host) => readHost(host, asked, { cwd: options.cwd, env, version: options.version, limit })),
  ]);
  const report: AllHostsReport = { version: 1, generatedAt: new Date().toISOString(), repositories: [], places: [], hosts: [] };
  for (const reading of readings) {
    if (!reading) continue;
    report.hosts.push(reading.host);
    if (!reading.report) continue;
    const name = reading.host.name;
    report.repositories.push(...reading.report.repositories.map((r) => ({ ...r, host: name })));
    report.places.push(...reading.report.places.map((p) => ({ ...p, host: name })));
    if (name === THIS_HOST && reading.report.supervisor) report.supervisor = reading.report.supervisor;
  }
  return report;
}

interface Read {
  host: HostReading;
  report?: StatusReport;
}

async function readHost(host: NamedHost, argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv; version: string; limit: number }): Promise<Read> {
  let stdout = '';
  let code: number;
  try {
    code = await within(options.limit, host, relay(host, argv, { cwd: options.cwd, env: options.env, version: options.version, timeoutMs: options.limit, output: { stdout: (text) => void (stdout += text), stderr: () => undefined } }));
  } catch (error) {
    const failure = error instanceof FlumeError ? error : flumeError('IO_FAILED', { message: String(error) }, { variant: 'unexpected' });
    const lastReadingAt = await lastGoodReading(host.name, options.env);
    const unreachable = failure.code === 'HOST_UNREACHABLE';
    return { host: { name: host.name, target: host.target, state: unreachable ? 'unreachable' : 'failed', error: errorOf(failure), ...(lastReadingAt ? { lastReadingAt } : {}) } };
  }
  const read = parsed(host.name, host.target, { code, stdout });
  if (read.report) await noteGoodReading(host.name, read.report.generatedAt, options.env);
  else {
    const lastReadingAt = await lastGoodReading(host.name, options.env);
    if (lastReadingAt) read.host.lastReadingAt = lastReadingAt;
  }
  return read;
}

/** A host's `status --json` answer, read: its report, or the error it answered with. */
function parsed(name: string, target: string | undefined, answer: { code: number; stdout: string }): Read {
  const base = { name, ...(target ? { target } : {}) };
  let value: { error?: { code: string; message: string; fix?: string } } & Partial<StatusReport>;
  try {
    value = JSON.parse(answer.stdout);
  } catch {
    return { host: { ...base, state: 'failed', error: { code: 'IO_FAILED', message: `${name} answered status with no JSON (exit ${answer.code}).` } } };
  }
  if (answer.code !== 0 || value.error || !Array.isArray(value.places) || !Array.isArray(value.repositories)) {
    return { host: { ...base, state: 'failed', error: value.error ?? { code: 'IO_FAILED', message: `${name} answered status with exit ${answer.code}.` } } };
  }
  const report = value as StatusReport;
  return { host: { ...base, state: 'answered', ...(report.supervisor ? { supervisor: report.supervisor } : {}) }, report };
}

function errorOf(error: FlumeError): { code: string; message: string; fix?: string } {
  return { code: error.code, message: error.message, ...(error.fix ? { fix: error.fix } : {}) };
}

/** `work`, or HOST_UNREACHABLE once `ms` have passed (ssh is ended by its own time limit too). */
function within<T>(ms: number, host: NamedHost, work: Promise<T>): Promise<T> {
  let timer: LongTimer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = longTimeout(() => reject(flumeError('HOST_UNREACHABLE', { host: host.name, target: host.target, seconds: Math.round(ms / 1000) }, { variant: 'timedOut', details: { host: host.name, target: host.target } })), ms);
  });
  return Promise.race([work, late]).finally(() => timer?.clear());
}
