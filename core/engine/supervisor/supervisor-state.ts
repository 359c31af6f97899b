/**
 * What the host knows of its supervisor without asking it: its lock (whose holder's pid says whether
 * it runs) and the note it writes after each pass (how many passes, when the last ended). Status
 * reads both; commands that change a place start a supervisor when none runs; tests wait on passes.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lockHolder } from '../../state/lock.js';
import { hostStateDir, WARM_SOCKET } from '../../state/host.js';
import { PRIVATE_FILE_MODE } from '../../state/private.js';


/** Whether the host's supervisor runs, and what it means when none does. */
export interface SupervisorStatus {
  running: boolean;
  pid?: number;
  /** When it last finished a pass over the host's places. */
  lastPassAt?: string;
  /** What its absence means for the places (only when none runs). */
  note?: string;
}

/** The supervisor's lock: one per host. */
export function supervisorLock(): string {
  return join(hostStateDir(), 'watch.lock');
}

/** The file the supervisor writes after each pass; its own watcher ignores it (see `isOwnNote`). */
export const PASS_NOTE = 'watch.json';

/** What the supervisor writes after a pass. */
export interface PassNote {
  pid: number;
  passes: number;
  /** How many times tidying judged a place whose work is over (a kept place judged again counts). */
  judged: number;
  /**
   * Steps under way as the pass ended (a pass starts them without waiting). A test that asserts
   * "nothing happened" waits for a pass that ends with none, so a wrong step cannot still be running.
   */
  steps: number;
  at: string;
}

/** Records a finished pass, atomically (a reader never sees half a note). */
export async function writePassNote(note: PassNote): Promise<void> {
  const file = join(hostStateDir(), PASS_NOTE);
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify(note) + '\n', { mode: PRIVATE_FILE_MODE });
  await rename(temp, file);
}

/** True for the name of the pass note, its temp file or the supervisor's socket: writing them must not wake the next pass. */
export function isOwnNote(filename: string | null | undefined): boolean {
  return Boolean(filename && (filename === PASS_NOTE || filename.startsWith(`${PASS_NOTE}.`) || filename === WARM_SOCKET));
}

/** The pass note, if a supervisor ever wrote one. */
export async function readPassNote(): Promise<PassNote | undefined> {
  const text = await readFile(join(hostStateDir(), PASS_NOTE), 'utf8').catch(() => undefined);
  try {
    return text ? (JSON.parse(text) as PassNote) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a supervisor runs on this host now, and what it means when none does. */
export async function supervisorState(): Promise<SupervisorStatus> {
  const holder = await lockHolder(supervisorLock());
  if (holder?.alive) {
    const note = await readPassNote();
    return { running: true, ...(holder.pid ? { pid: holder.pid } : {}), ...(note && note.pid === holder.pid ? { lastPassAt: note.at } : {}) };
  }
  return {
    running: false,
    note:
      'no supervisor runs on this host, so no stage ends on its deliverable, no next stage starts and nothing is tidied ' +
      'until one runs: any flume command that changes a place starts one (places launched with --no-watch excepted), or run `flume watch`',
  };
}
