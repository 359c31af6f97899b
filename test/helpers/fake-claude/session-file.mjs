/**
 * The fake's state file, `<config dir>/sessions/<pid>.json`, in the shape Claude Code 2.1.332 writes
 * (test/fixtures/claude-2.1.332/sessions/): `status` idle | busy | waiting, and while waiting
 * `waitingFor` ("permission prompt" or "input needed" for a question). Like the real one it lags
 * the screen: every change lands `lagMs` late (2.1.332: busy about 250 ms after the prompt's line,
 * waiting about 200 ms after the dialog's tool_use), so a reader that trusts it alone is caught.
 * The first write (idle at start) is at once: the real file is there before the input box.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { VERSION } from './transcript.mjs';

/** What `waitingFor` says for each kind of dialog (2.1.332). */
const WAITING_FOR = { permission: 'permission prompt', question: 'input needed' };

/** Returns { update(status, dialogKind) } writing the state file at `path`. */
export function createSessionFile({ path, sessionId, cwd, startedAt, lagMs }) {
  const name = `${basename(cwd)}-${randomBytes(1).toString('hex')}`;
  let written = false;
  const write = (status, dialogKind) => {
    const now = Date.now();
    writeJson(path, {
      pid: process.pid,
      sessionId,
      cwd,
      startedAt,
      procStart: procStart(),
      version: VERSION,
      kind: 'interactive',
      entrypoint: 'cli',
      name,
      nameSource: 'derived',
      status,
      updatedAt: now,
      statusUpdatedAt: now,
      ...(status === 'waiting' ? { waitingFor: WAITING_FOR[dialogKind] ?? 'input needed' } : {}),
    });
  };
  return {
    update(status, dialogKind) {
      if (!written || lagMs <= 0) {
        written = true;
        return write(status, dialogKind);
      }
      setTimeout(() => write(status, dialogKind), lagMs);
    },
  };
}

/** The process's start time in clock ticks since boot, as the real file's `procStart` (Linux only). */
function procStart() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Writes JSON whole (to a temporary file, then renamed), as Claude Code's own files appear. */
export function writeJson(path, value) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.${process.pid}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${path}.${process.pid}.tmp`, path);
}
