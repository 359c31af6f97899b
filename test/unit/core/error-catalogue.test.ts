/**
 * The error catalogue (core/api/error-catalogue.ts) and the source kept in step: every code flume raises
 * is in the catalogue, every code in it is raised somewhere, and every code matched on is one of them.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT } from '../../helpers/repo.js';
import { ERROR_CATALOGUE, catalogueMessage } from '../../../core/api/error-catalogue.js';
import { ERROR_CODES, FlumeError } from '../../../core/api/errors.js';

const FOLDERS = ['core', 'agents', 'deliverables', 'kinds', 'plugins', 'bin'];
const CATALOGUE_FILE = join('core', 'api', 'error-catalogue.ts');
const CODE = /'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g;

function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') && !name.includes('.generated.')) out.push({ file: relative(PROJECT, path), text: readFileSync(path, 'utf8') });
    }
  };
  for (const folder of FOLDERS) walk(join(PROJECT, folder));
  return out.filter((source) => source.file !== CATALOGUE_FILE);
}

/** Codes in the first argument of `new FlumeError(…)` (a literal, or a choice of literals), of MCP's `failure(…)`, and in reported `code: '…'` objects. */
function raised(text: string): string[] {
  const codes: string[] = [];
  for (const match of text.matchAll(/new FlumeError\(([^,]*),|failure\(([^,]*),|\bcode: ('[A-Z_]+')/g)) {
    for (const code of (match[1] ?? match[2] ?? match[3]).matchAll(CODE)) codes.push(code[1]);
  }
  return codes;
}

/** Node's own codes without the `ERR_` prefix (CommonJS's module resolution). */
const NODE_CODES = new Set(['MODULE_NOT_FOUND']);

/** Codes the source compares an error's code with (`error.code === 'PLACE_BUSY'`); Node's own (`ERR_…`) aside. */
function matched(text: string): string[] {
  return [...text.matchAll(/code\s*[!=]==\s*'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]).filter((code) => code.includes('_') && !code.startsWith('ERR_') && !NODE_CODES.has(code));
}

describe('the error catalogue', () => {
  const all = sources();
  const catalogue = new Set(Object.keys(ERROR_CATALOGUE));

  it('holds every code raised anywhere in the source', () => {
    const missing = all.flatMap(({ file, text }) => raised(text).filter((code) => !catalogue.has(code)).map((code) => `${code} (${file})`));
    expect(missing).toEqual([]);
  });

  it('holds no code that is never raised', () => {
    const used = new Set(all.flatMap(({ text }) => raised(text)));
    expect([...catalogue].filter((code) => !used.has(code))).toEqual([]);
  });

  it('holds every code the source matches on', () => {
    const missing = all.flatMap(({ file, text }) => matched(text).filter((code) => !catalogue.has(code)).map((code) => `${code} (${file})`));
    expect(missing).toEqual([]);
  });

  it('gives every code a message, a fix, and the exit code FlumeError maps it to', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
      expect(entry.message.length, code).toBeGreaterThan(10);
      expect(entry.fix.length, code).toBeGreaterThan(10);
      expect(new FlumeError(code as keyof typeof ERROR_CODES, 'x').exitCode).toBe(entry.exit);
    }
    expect(ERROR_CODES.BAD_USAGE).toBe(2);
    expect(catalogueMessage('UNKNOWN_KIND', { kind: '"unit"' })).toBe('There is no kind "unit".');
    expect(catalogueMessage('UNKNOWN_PLACE', { place: 'fix/x' })).toBe('There is no place fix/x in {repo}.');
  });
});
