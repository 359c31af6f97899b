/**
 * Pre-seeds the keys Claude Code would otherwise ask for in dialogs (onboarding, folder trust, an API
 * key's approval) by merging them into its config file. Never rewrites it: every other key, and any
 * key Claude Code set itself, stays as it was. Pressing keys through a trust dialog is never done.
 *
 * The file can hold an API key or an OAuth account: the merged copy keeps the file's mode and owner
 * (the temp file is made with its mode before a byte is written, and given its owner when flume runs
 * as root), and a file flume creates is 600.
 *
 * Each folder-trust key flume sets (one that was not there) is recorded for the repository, and
 * `flume trust --revoke` takes exactly those back (core/state/trust-grants.ts).
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { linkOnTheWay, programFileLock, readNoFollow, recordTrustGrants, replaceFileKeepingMode, withLock } from '../../core/index.js';

/** What to seed. */
export interface PreseedOptions {
  /** Folders to trust (the main checkout's root: trust for a worktree is keyed on it; the place too). */
  trust: string[];
  /** The API key the agent uses, whose last 20 characters are approved. */
  apiKey?: string;
  /** True when CLAUDE_CONFIG_DIR is set: the file is `<configDir>/.claude.json`, else `~/.claude.json`. */
  explicit: boolean;
  /** The agent's HOME, whose `.claude.json` it reads without CLAUDE_CONFIG_DIR (a place in a container has its own); default this process's. */
  home?: string;
  /** The repository whose trust `trust` follows: each folder's key flume sets is recorded for it, for `flume trust --revoke`. */
  root?: string;
  /**
   * True when `home` is an agent's to write (a place's container's): no link in it is followed. A
   * `.claude.json` that is a link is taken as no file (the merged one replaces the link, not what it
   * names); a folder on the way that is a link is refused.
   */
  untrusted?: boolean;
}

/** The config file Claude Code reads for these keys. */
export function claudeJsonPath(configDir: string, explicit: boolean, home: string = homedir()): string {
  return explicit ? join(configDir, '.claude.json') : join(home, '.claude.json');
}

/** Merges the keys in; leaves the file untouched when they are all there already. */
export async function preseed(configDir: string, options: PreseedOptions): Promise<void> {
  const file = claudeJsonPath(configDir, options.explicit, options.home || undefined);
  if (options.untrusted && options.home) {
    const link = await linkOnTheWay(dirname(file), options.home);
    if (link) throw new Error(`the agent's home holds a link at ${link}: flume never follows a link in a container's home (remove it, then retry)`);
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // Launches at once each merge their keys: one at a time, or one's write loses another's.
  await withLock(programFileLock(file), () => merge(file, options), { what: `Claude Code's config ${file}` });
}

async function merge(file: string, options: PreseedOptions): Promise<void> {
  let text: string | undefined;
  let before: Awaited<ReturnType<typeof stat>> | undefined;
  if (options.untrusted) {
    const read = await readNoFollow(file);
    [text, before] = [read?.text, read?.stat];
  } else {
    before = await stat(file).catch(() => undefined);
    text = await readFile(file, 'utf8').catch(() => undefined);
  }
  let config: Record<string, unknown>;
  try {
    config = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return; // a file Claude Code is writing this moment, or not JSON: never overwrite it
  }
  const seen = JSON.stringify(config);
  config.hasCompletedOnboarding = true;
  const projects = (config.projects ??= {}) as Record<string, Record<string, unknown>>;
  // Only a key flume sets is flume's to take back: one the user's own answer set stays theirs.
  const granted: string[] = [];
  for (const folder of options.trust) {
    const project = (projects[folder] ??= {});
    if (project.hasTrustDialogAccepted !== true) granted.push(folder);
    project.hasTrustDialogAccepted = true;
  }
  if (options.apiKey) {
    const responses = (config.customApiKeyResponses ??= { approved: [], rejected: [] }) as { approved?: string[] };
    const tail = options.apiKey.slice(-20);
    responses.approved ??= [];
    if (!responses.approved.includes(tail)) responses.approved.push(tail);
  }
  if (JSON.stringify(config) === seen) return;
  await mkdir(dirname(file), { recursive: true });
  await replaceFileKeepingMode(file, JSON.stringify(config, null, 2), before);
  if (options.root) await recordTrustGrants(granted.map((folder) => ({ root: options.root!, file, path: ['projects', folder, 'hasTrustDialogAccepted'] })));
}
