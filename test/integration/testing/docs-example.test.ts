/**
 * docs/writing-a-plugin.md, "Testing your driver": the page's example compiles as a driver's author
 * compiles it, against flume's published types, `flume/testing` resolving through the package's
 * `exports` (with vitest's own types for the runner), `testHost` a real export of it, the author's
 * plugin and scripted model stubbed to the shapes the page gives them. The kit itself runs in conformance.test.ts and test/e2e/conformance.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT, remove, tempDir, write } from '../../helpers/repo.js';

const STUBS: Record<string, string> = {
  'src/plugin.ts': `import { definePlugin, type FlumePlugin } from 'flume';
export default (options: { baseUrl: string; args: string[] }): FlumePlugin => definePlugin({ name: 'you:agent:my-agent', apply: () => void options });
`,
  'test/helpers.ts': `import type { ConformanceScenario } from 'flume/testing';
export declare function scriptedModel(scenario: ConformanceScenario, root: string): Promise<{ url: string; prompts(): string[]; close(): Promise<void> }>;
`,
};

describe('the "Testing your driver" example', () => {
  it('compiles against the published flume/testing with vitest as its runner', () => {
    const page = readFileSync(join(PROJECT, 'docs', 'writing-a-plugin.md'), 'utf8');
    const [, file, code] = /<!-- test-file: (\S+) -->\n```ts\n([\s\S]*?)```/.exec(page) ?? [];
    expect(file).toBe('test/driver.conformance.test.ts');
    expect(code.split('\n').length).toBeLessThan(40);
    const dir = tempDir('flume-testing-docs-');
    try {
      for (const [path, text] of Object.entries({ ...STUBS, [file]: code })) write(dir, path, text);
      write(dir, 'package.json', JSON.stringify({ type: 'module', private: true }));
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(PROJECT, join(dir, 'node_modules', 'flume'), 'dir');
      symlinkSync(join(PROJECT, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'), 'dir');
      write(dir, 'tsconfig.json', JSON.stringify({
        compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(PROJECT, 'node_modules', '@types')] },
        include: ['src', 'test'],
      }));
      const tsc = spawnSync(process.execPath, [join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    } finally {
      remove(dir);
    }
  });
});
