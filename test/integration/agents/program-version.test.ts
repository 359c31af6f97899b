/**
 * An agent program's version (agents/program.ts `programVersion`), asked at each Codex, Gemini CLI and
 * OpenCode start and by doctor: read from the record of the npm package that holds the program, so
 * the program itself is not started (the Gemini CLI's `--version` costs 4 s of CPU, and outran
 * doctor's 15 s limit on a busy machine); `--version` only for a program no such package holds.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { programVersion } from '../../../agents/program.js';
import { remove, tempDir } from '../../helpers/repo.js';

describe('programVersion', () => {
  it("reads the version from the program's own package, without starting it; else asks --version", async () => {
    const root = tempDir('flume-version-');
    try {
      const started = join(root, 'started');
      const pkg = join(root, 'lib', 'node_modules', 'acme-agent');
      mkdirSync(join(pkg, 'bin'), { recursive: true });
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'acme-agent', version: '1.2.3' }));
      writeFileSync(join(pkg, 'bin', 'acme.js'), `#!/bin/sh\ntouch '${started}'\necho 'acme 9.9.9'\n`);
      chmodSync(join(pkg, 'bin', 'acme.js'), 0o755);
      mkdirSync(join(root, 'bin'));
      symlinkSync(join(pkg, 'bin', 'acme.js'), join(root, 'bin', 'acme'));
      const env = { PATH: `${join(root, 'bin')}:/usr/bin:/bin` };

      expect(await programVersion('acme', env, 'acme-agent')).toBe('1.2.3');
      expect(existsSync(started)).toBe(false);
      // Named by its path too.
      expect(await programVersion(join(root, 'bin', 'acme'), env, 'acme-agent')).toBe('1.2.3');
      expect(existsSync(started)).toBe(false);
      // A package of another name holds it: the program is asked.
      expect(await programVersion('acme', env, 'other-agent')).toBe('9.9.9');
      expect(existsSync(started)).toBe(true);
    } finally {
      remove(root);
    }
  });
});
