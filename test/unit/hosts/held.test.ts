/**
 * Whether a held connection's note spares the handshake (core/hosts/held.ts): the same socket, the
 * same remote command, a version of this flume's minor; and the control socket's name, short.
 */
import { describe, expect, it } from 'vitest';
import { controlPath, heldVersion, type HandshakeNote } from '../../../core/hosts/held.js';
import { tempDir, remove } from '../../helpers/repo.js';

const socket = { dev: '2049', ino: '81234', birth: '1764760000123456789' };
const note: HandshakeNote = { remote: '0.1.3', command: 'flume', socket };
const host = { flume: 'flume' };

describe('the note of a held connection', () => {
  it("spares the handshake for the socket it names, the command that ran it, and this flume's minor version", () => {
    expect(heldVersion(note, { ...socket }, host, '0.1.0')).toBe('0.1.3');
  });

  it('spares nothing for another socket, no master, another command, another minor version, or no note', () => {
    expect(heldVersion(note, { ...socket, ino: '81235' }, host, '0.1.0')).toBeUndefined();
    expect(heldVersion(note, { ...socket, birth: '1764760000123456790' }, host, '0.1.0')).toBeUndefined();
    expect(heldVersion(note, { ...socket, dev: '2050' }, host, '0.1.0')).toBeUndefined();
    expect(heldVersion(note, undefined, host, '0.1.0')).toBeUndefined();
    expect(heldVersion(note, socket, { flume: '~/bin/flume' }, '0.1.0')).toBeUndefined();
    expect(heldVersion(note, socket, host, '0.2.0')).toBeUndefined();
    expect(heldVersion(undefined, socket, host, '0.1.0')).toBeUndefined();
  });

  it("names each target's socket by 24 hex digits of its hash, in flume's private ssh folder", async () => {
    const state = tempDir('flume-held-');
    try {
      const env = { FLUME_STATE_DIR: state } as NodeJS.ProcessEnv;
      const [a, b] = [await controlPath({ target: 'me@build-1' }, env), await controlPath({ target: 'build-1' }, env)];
      expect(a).toMatch(/\/ssh\/[0-9a-f]{24}$/);
      expect(a).not.toBe(b);
      expect(await controlPath({ target: 'me@build-1' }, env)).toBe(a);
    } finally {
      remove(state);
    }
  });
});
