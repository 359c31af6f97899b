/**
 * Trusting a repository's config: a decision the user takes once per repository and content, as
 * `direnv allow` does. flume runs a repository's config (and the ready steps it declares) only when
 * the host's `trust.json` names the repository with the digest of the config as it is now; an edit
 * undoes the decision until the user trusts again. A repository with no config needs no trust to
 * launch; trusting it anyway lets flume pre-trust its places in Claude Code.
 */
import { join } from 'node:path';
import { flumeError } from '../api/errors.js';
import { hostStateDir } from '../state/host.js';
import { readJsonFile, updateJsonFile } from '../state/json-file.js';
import { findConfigFile, type FoundConfig } from './find.js';
import { forgetProbe } from './probe/guard.js';

/** One repository's trust as recorded: the config file and digest trusted (null: no config then). */
export interface TrustRecord {
  file: string | null;
  digest: string | null;
  at: string;
}

/** Where a repository stands: no config (and whether trusted anyway), trusted, never trusted, changed since. */
export interface TrustState {
  state: 'trusted' | 'untrusted' | 'changed' | 'no-config';
  /** The config as it is now, when there is one. */
  config?: FoundConfig;
  /** What was trusted, when anything was. */
  record?: TrustRecord;
}

interface TrustFile {
  version: 1;
  repositories: Record<string, TrustRecord>;
}

const EMPTY: TrustFile = { version: 1, repositories: {} };

/** The host's file of trust decisions. */
export function trustFile(stateDir = hostStateDir()): string {
  return join(stateDir, 'trust.json');
}

/** Where the repository at `root` stands now (reads its config as text; runs nothing). */
export async function trustState(root: string, stateDir?: string): Promise<TrustState> {
  const config = findConfigFile(root);
  const record = (await readJsonFile<TrustFile>(trustFile(stateDir), EMPTY)).repositories?.[root];
  if (!config) return { state: 'no-config', ...(record ? { record } : {}) };
  if (!record) return { state: 'untrusted', config };
  return { state: record.file === config.file && record.digest === config.digest ? 'trusted' : 'changed', config, record };
}

/** True when the user trusted the repository as it is now (with or without a config). */
export async function isRepositoryTrusted(root: string, stateDir?: string): Promise<boolean> {
  const { state, record } = await trustState(root, stateDir);
  if (state === 'no-config') return Boolean(record && record.file === null);
  return state === 'trusted';
}

/** Records the user's trust in the repository's config as it is now; returns what was trusted. */
export async function trustRepository(root: string, stateDir?: string): Promise<TrustRecord> {
  const config = findConfigFile(root);
  const record: TrustRecord = { file: config?.file ?? null, digest: config?.digest ?? null, at: new Date().toISOString() };
  const last = (await readJsonFile<TrustFile>(trustFile(stateDir), EMPTY)).repositories?.[root];
  // Trusted as it is already: nothing to write (a hung config is probed again only once it changes).
  if (last && last.file === record.file && last.digest === record.digest) return last;
  await updateJsonFile<TrustFile>(trustFile(stateDir), EMPTY, (value) => {
    const last = value.repositories?.[root];
    if (last && last.file === record.file && last.digest === record.digest) return undefined;
    return { version: 1, repositories: { ...value.repositories, [root]: record } };
  });
  // A new decision: what was found of the config before is probed afresh.
  await forgetProbe(root, stateDir);
  return record;
}

/** Takes the trust back; returns false when there was none. */
export async function revokeTrust(root: string, stateDir?: string): Promise<boolean> {
  let had = false;
  await updateJsonFile<TrustFile>(trustFile(stateDir), EMPTY, (value) => {
    if (!value.repositories?.[root]) return undefined;
    had = true;
    const { [root]: _gone, ...rest } = value.repositories;
    return { version: 1, repositories: rest };
  });
  return had;
}

/**
 * Refuses a repository whose config the user has not trusted as it is now, with the command that
 * trusts it. Returns the config found (undefined: none, nothing to trust).
 */
export async function requireTrust(root: string): Promise<FoundConfig | undefined> {
  const trust = await trustState(root);
  if (trust.state === 'no-config' || trust.state === 'trusted') return trust.config;
  const file = trust.config!.file;
  const changed = trust.state === 'changed';
  throw flumeError('UNTRUSTED_CONFIG', { file, root: shellWord(root) }, {
    variant: changed ? 'changed' : 'default',
    details: { root, file, digest: trust.config!.digest, state: trust.state, ...(changed ? { trusted: trust.record!.digest } : {}) },
  });
}

/** A path as one shell word, quoted only when it needs it. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
