/** The public helpers for a driver: reading a JSON-lines record, and waiting on a look. */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonl, waitFor } from '../../../core/index.js';
import { remove, tempDir } from '../../helpers/repo.js';

describe('readJsonl', () => {
  it('reads every complete line, none while the file is missing, and leaves out a line being written or not JSON', () => {
    const folder = tempDir('flume-jsonl-');
    try {
      const file = join(folder, 'record.jsonl');
      expect(readJsonl(file)).toEqual([]);
      // Its last line without its newline yet, though it already parses: it is still being written.
      writeFileSync(file, '{"type":"up"}\nnot json\n\n{"type":"prompt","text":"hi"}\n{"type":"done"}');
      expect(readJsonl(file)).toEqual([{ type: 'up' }, { type: 'prompt', text: 'hi' }]);
      appendFileSync(file, '\n');
      expect(readJsonl(file)).toEqual([{ type: 'up' }, { type: 'prompt', text: 'hi' }, { type: 'done' }]);
    } finally {
      remove(folder);
    }
  });
});

describe('waitFor', () => {
  it('asks once with a timeout of 0, and answers `otherwise` when nothing came', async () => {
    let asked = 0;
    expect(await waitFor(() => (asked++, undefined), 0, 'slow')).toBe('slow');
    expect(asked).toBe(1);
    expect(await waitFor(() => false, 0)).toBeUndefined();
  });

  it('asks again until it answers, and resolves to the answer', async () => {
    let asked = 0;
    expect(await waitFor(() => (++asked >= 3 ? 'ready' : false), 60_000, 'slow')).toBe('ready');
    expect(asked).toBe(3);
  });
});
