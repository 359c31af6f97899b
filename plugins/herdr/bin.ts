#!/usr/bin/env node
/**
 * The executable herdr-plugin.toml runs (`node ../../dist/plugins/herdr/bin.js …`, from the plugin's
 * folder): the plugin's actions, the popups that ask the operator for words, and the sidebar loop.
 * Like flume's own CLI it is the only part of the plugin that prints and exits.
 *
 *   bin.js action <open|tell|stop|retry|next|launch>   an action key: stop and retry run at once;
 *                                                      the others open their popup (`plugin pane
 *                                                      open`)
 *   bin.js popup <open|tell|next|launch>               inside the popup: ask, then run flume
 *   bin.js sidebar [--once] [--interval MS] [--all-hosts]
 *                                                      keep the sidebar rows in step with flume
 *                                                      status (the loop reads it again on each
 *                                                      repository's event stream); --all-hosts (or
 *                                                      FLUME_HERDR_ALL_HOSTS=1): every host's places
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostStateDir, run, type StatusReport } from '../../core/index.js';
import { ACTIONS, flumeCommand, invocationContext, isPrompted, placeOf, PROMPTED, type ActionId } from './actions.js';
import { herdrBinary, herdrCli, pick } from './herdr.js';
import { popup } from './popup.js';
import { awaitingNeeds, SIDEBAR_POLL_MS, SIDEBAR_TTL_MS, sidebarRefresher, sidebarRows, startedAwaiting, startedWaiting, watchSidebar, type SidebarMemory } from './sidebar.js';

/** flume's own executable, beside this file in dist/. */
const FLUME_BIN = fileURLToPath(new URL('../../bin/flume.js', import.meta.url));

const herdr = herdrCli(herdrBinary());
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs a flume command line (argv, never a shell) and returns what it left. */
async function flume(args: string[]) {
  return run(process.execPath, [FLUME_BIN, ...args], { timeoutMs: 10 * 60_000 });
}

/** `flume status --json`, read; with `allHosts`, `flume status --all-hosts --json` (every host's places, each with its host). */
async function readStatus(allHosts = false): Promise<StatusReport> {
  const result = await flume(['status', ...(allHosts ? ['--all-hosts'] : []), '--json']);
  if (result.exitCode !== 0) throw new Error(`flume status failed: ${(result.stderr || result.stdout).trim()}`);
  return JSON.parse(result.stdout) as StatusReport;
}

async function main(argv: string[]): Promise<number> {
  const [command, id] = argv;
  if (command === 'action' && isAction(id)) return action(id);
  if (command === 'popup' && id && isPrompted(id)) return popup(id, { flume, readStatus, herdr, say });
  if (command === 'sidebar') return sidebar(argv.slice(1));
  process.stderr.write(`usage: bin.js action <${ACTIONS.join('|')}> | popup <${PROMPTED.join('|')}> | sidebar [--once] [--interval MS] [--all-hosts]\n`);
  return 2;
}

/** An action key: a popup for those that ask for words, else the flume command for the focused place. */
async function action(id: ActionId): Promise<number> {
  if (isPrompted(id)) {
    const plugin = process.env.HERDR_PLUGIN_ID || 'flume';
    const opened = await herdr(['plugin', 'pane', 'open', '--plugin', plugin, '--entrypoint', id, '--placement', 'popup']);
    if (!opened.ok) process.stderr.write(`herdr could not open the ${id} popup: ${opened.message}\n`);
    return opened.ok ? 0 : 1;
  }
  const place = placeOf(await readStatus(), invocationContext());
  if (!place) return notify(`flume ${id}`, 'The focused pane is not the agent or a folder of a flume place.', 1);
  const result = await flume(flumeCommand(id, { place: place.id }));
  const words = (result.exitCode === 0 ? result.stdout : result.stderr || result.stdout).trim();
  return notify(`flume ${id} ${place.id}`, words, result.exitCode === 0 ? 0 : 1);
}

/** Says how an action went where the operator sees it (herdr's toast), and in the plugin's log. */
async function notify(title: string, body: string, code: number): Promise<number> {
  say(`${title}: ${body}`);
  await herdr(['notification', 'show', title, '--body', body.split('\n').slice(0, 2).join(' '), '--sound', code === 0 ? 'none' : 'request']);
  return code;
}

/**
 * The sidebar. `--once` (what herdr's startup and event hooks run): one refresh of every row with a
 * TTL, remembering in the plugin's state folder what it showed (to clear a place that left, and to
 * notify once when a place starts to wait, at a gate or for its caller too). Without it, a loop for a supervisor of its own: one per
 * herdr server (a pid file), ending when the server stops.
 */
async function sidebar(args: string[]): Promise<number> {
  const dir = process.env.HERDR_PLUGIN_STATE_DIR || join(hostStateDir(), 'herdr');
  await mkdir(dir, { recursive: true });
  const allHosts = args.includes('--all-hosts') || process.env.FLUME_HERDR_ALL_HOSTS === '1';
  if (args.includes('--once')) {
    const file = join(dir, 'sidebar.json');
    const memory = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as SidebarMemory;
    const refresher = sidebarRefresher({ herdr, ttlMs: SIDEBAR_TTL_MS, memory });
    const report = await readStatus(allHosts);
    for (const row of await refresher.refresh(report)) say(`${row.place ?? row.pane}: ${row.ok ? 'reported' : 'not reported'}`);
    for (const row of startedWaiting(memory, sidebarRows(report))) {
      const needs = row.tokens.flume_needs ?? row.tokens.flume_state ?? 'waiting';
      await herdr(['notification', 'show', `flume: ${row.place} waits`, '--body', needs, '--sound', 'request']);
      say(`${row.place}: notified (${needs})`);
    }
    await writeFile(file, JSON.stringify(refresher.memory()));
    const awaitingFile = join(dir, 'awaiting.json');
    const awaiting = startedAwaiting(JSON.parse(await readFile(awaitingFile, 'utf8').catch(() => '[]')) as string[], report);
    for (const place of awaiting.fresh) {
      const needs = awaitingNeeds(place.awaiting!);
      await herdr(['notification', 'show', `flume: ${place.id} waits`, '--body', needs, '--sound', 'request']);
      say(`${place.id}: notified (${needs})`);
    }
    await writeFile(awaitingFile, JSON.stringify(awaiting.now));
    return 0;
  }
  const refresher = sidebarRefresher({ herdr });
  const pidFile = join(dir, 'sidebar.pid');
  const holder = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (holder && holder !== process.pid && running(holder)) return 0;
  await writeFile(pidFile, String(process.pid));
  const interval = Number(args[args.indexOf('--interval') + 1]);
  const controller = new AbortController();
  process.once('SIGTERM', () => controller.abort());
  process.once('SIGINT', () => controller.abort());
  await watchSidebar({
    readStatus: () => readStatus(allHosts),
    refresher,
    intervalMs: args.includes('--interval') && interval > 0 ? interval : SIDEBAR_POLL_MS,
    signal: controller.signal,
    running: async () => pick((await herdr(['status', 'server', '--json'])).result, 'running') === true,
    onError: (error) => process.stderr.write(`${new Date().toISOString()} ${(error as Error).message}\n`),
  });
  return 0;
}

function isAction(id: string | undefined): id is ActionId {
  return (ACTIONS as readonly string[]).includes(id ?? '');
}

/**
 * Unlike core's processExists, another user's process (EPERM) is not running here: the pid file names
 * a sidebar of this user's, so a pid now held by someone else's process was reused.
 */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  // herdr keeps an action's output in its plugin log: one line saying what failed is what helps there.
  process.stderr.write(`flume's herdr plugin: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
