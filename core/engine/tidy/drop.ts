/** Dropping a launch: marks it so tidying takes its place (and keeps a branch with unlanded work). */
import { FlumeError, flumeError } from '../../api/errors.js';
import type { Repository } from '../../config/repository.js';
import { readRecord, recordWithEvent, withPlaceLock, writeRecord } from '../../state/store.js';
import type { PlaceRecord } from '../../api/record.js';

/** Marks the place `key` dropped; idempotent. */
export async function dropPlace(repository: Repository, key: string, reason?: string): Promise<PlaceRecord> {
  const { commonDir } = repository.info;
  // Refuse an unknown place before taking its lock: a refusal leaves no lock file or state folder.
  if (!(await readRecord(commonDir, key))) throw unknownPlace(repository, key);
  return withPlaceLock(commonDir, key, async () => {
    const record = await readRecord(commonDir, key);
    if (!record) throw unknownPlace(repository, key);
    if (record.dropped) return record;
    record.dropped = { at: new Date().toISOString(), ...(reason ? { reason } : {}) };
    await recordWithEvent(commonDir, record, { event: 'dropped', reason });
    return record;
  });
}

function unknownPlace(repository: Repository, key: string): FlumeError {
  return flumeError('UNKNOWN_PLACE', { place: key.replace('--', '/'), repo: repository.info.root }, {
    details: { place: key },
  });
}
