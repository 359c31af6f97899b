import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';

const folder = new URL('../../../deliverables/', import.meta.url);

describe('deliverables/ imports', () => {
  it('imports only the core and its own files, never kinds/, agents/ or plugins/', () => {
    const bad: string[] = [];
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
      const text = readFileSync(new URL(file, folder), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        const allowed = specifier.startsWith('../core/') || /^\.\/[a-z-]+\.js$/.test(specifier) || specifier.startsWith('node:');
        if (!allowed) bad.push(`${file}: ${specifier}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
