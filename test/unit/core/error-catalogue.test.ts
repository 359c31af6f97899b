/**
 * The error catalogue (core/api/error-catalogue.ts) and the source kept in step: every code flume raises
 * is in the catalogue, every code in it is raised somewhere, and every code matched on is one of them;
 * every error is worded by the catalogue, and docs/errors.md is the page written from it.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT } from '../../helpers/repo.js';
import { ERROR_CATALOGUE, catalogueMessage, catalogueWording, shapeWords, type CatalogueEntry } from '../../../core/api/error-catalogue.js';
import { ERROR_CODES, FlumeError, flumeError } from '../../../core/api/errors.js';
import { ERRORS_PAGE, errorsPage } from '../../../core/engine/schemas.js';

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

/** Codes in the first argument of `flumeError(…)` and `new FlumeError(…)` (a literal, or a choice of literals), of MCP's `failure(…)`, and in reported `code: '…'` objects. */
function raised(text: string): string[] {
  const codes: string[] = [];
  for (const match of text.matchAll(/(?:new FlumeError|flumeError)\(([^,]*),|failure\(([^,]*),|\bcode: ('[A-Z_]+')/g)) {
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
  it('words every error: no FlumeError is built outside core/api/errors.ts, and flumeError is never handed text', () => {
    const built = all.filter(({ file }) => file !== join('core', 'api', 'errors.ts')).flatMap(({ file, text }) => [...text.matchAll(/new FlumeError\(/g)].map(() => file));
    expect(built).toEqual([]);
    // The second argument is the values, an object: a string or a template there would be a message of the call site's own.
    const worded = all.flatMap(({ file, text }) => [...text.matchAll(/flumeError\(\s*[^,]+,\s*(['"`])/g)].map(() => file));
    expect(worded).toEqual([]);
  });

  it('gives each call site the values its wording names, and builds the message and the fix from them', () => {
    // Statically: each call's values object holds every {word} of the wording it names (the types do too; this reads the source).
    const wrong: string[] = [];
    let read = 0;
    for (const { file, text } of all) {
      const calls = flumeCalls(text);
      // Every call naming a code is read: one the reader missed would go unchecked.
      expect(calls.length, file).toBe([...text.matchAll(/flumeError\([^,]*'[A-Z_]+'[^,]*,/g)].length);
      read += calls.length;
      for (const call of calls) {
        for (const code of call.codes) {
          for (const variant of call.variants) {
            const { message, fix } = catalogueWording(code as keyof typeof ERROR_CATALOGUE, variant);
            for (const word of [...shapeWords(message), ...shapeWords(fix)]) if (!call.keys.includes(word)) wrong.push(`${file}: ${code}/${variant} has no value for {${word}}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(read).toBeGreaterThan(100);
    const error = flumeError('UNKNOWN_PLACE', { place: 'fix/x', repo: '/r' }, { details: { place: 'fix--x' } });
    expect(error).toMatchObject({ code: 'UNKNOWN_PLACE', message: 'There is no place fix/x in /r.', fix: ERROR_CATALOGUE.UNKNOWN_PLACE.fix, details: { place: 'fix--x' } });
    expect(flumeError('AGENT_NOT_UP', { place: 'fix/x' }, { variant: 'starting' }).fix).toBe(ERROR_CATALOGUE.AGENT_NOT_UP.variants.starting.fix);
    // A variant without a fix of its own has the entry's.
    expect(flumeError('UNKNOWN_PLACE', { place: 'fix/x', repo: '/r' }, { variant: 'default' }).fix).toBe(ERROR_CATALOGUE.UNKNOWN_PLACE.fix);
    const cause = new Error('x');
    expect(flumeError('PLUGIN_FAILED', { plugin: 'p', hook: 'h', message: 'm' }, { plugin: 'p', hook: 'h', cause })).toMatchObject({ plugin: 'p', hook: 'h', cause, message: '[p] h failed: m' });
  });

  it('throws on a wording whose value is missing, and on a variant the catalogue lacks', () => {
    expect(() => flumeError('UNKNOWN_PLACE', { place: 'fix/x' } as never)).toThrow(/UNKNOWN_PLACE: no value for \{repo\}/);
    expect(() => flumeError('UNKNOWN_PLACE', { place: 'fix/x', repo: '/r' }, { variant: 'nope' as never })).toThrow(/no wording "nope" of UNKNOWN_PLACE/);
  });

  it('gives every wording a message and a fix, each of whose words a test of the source can find', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE) as [string, CatalogueEntry][]) {
      for (const [name, variant] of Object.entries(entry.variants ?? {})) {
        expect(variant.message.length, `${code}/${name}`).toBeGreaterThan(5);
        if (variant.fix !== undefined) expect(variant.fix.length, `${code}/${name}`).toBeGreaterThan(10);
      }
    }
  });

  it('writes docs/errors.md from the catalogue, and the file is what it writes', () => {
    const page = errorsPage();
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(page).toContain(`## ${code}\n`);
    expect(readFileSync(join(PROJECT, ERRORS_PAGE), 'utf8'), `${ERRORS_PAGE} is stale: run npm run build && npm run schema`).toBe(page);
  });
});

/** Each `flumeError(…)` call: the codes its first argument may be, the wordings its options may name, and the keys of its values. */
function flumeCalls(text: string): { codes: string[]; variants: string[]; keys: string[] }[] {
  const calls: { codes: string[]; variants: string[]; keys: string[] }[] = [];
  for (const match of text.matchAll(/flumeError\(([^,]*),\s*\{/g)) {
    const start = match.index! + match[0].length - 1;
    const values = balanced(text, start);
    const rest = text.slice(start + values.length, start + values.length + 400);
    const options = rest.startsWith(', {') ? balanced(rest, 2) : '';
    const codes = [...match[1].matchAll(CODE)].map((m) => m[1]);
    if (codes.length === 0) continue; // a code handed on as a value (the definition's own signature)
    const named = options.match(/variant: ([^,\n]*(?:\?[^,\n]*)*)/)?.[1] ?? '';
    const variants = [...named.matchAll(/'(\w+)'/g)].map((m) => m[1]);
    // Keys at the values object's top level: `word: …` or the shorthand `word`.
    const keys = [...values.slice(1, -1).matchAll(/(?:^|,)\s*(\w+)\s*(?=:|,|$)/g)].map((m) => m[1]);
    calls.push({ codes, variants: variants.length ? variants : ['default'], keys });
  }
  return calls;
}

/** The bracketed text that opens at `start` (a `{`), to its matching close, strings and templates skipped roughly. */
function balanced(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      i = text.indexOf(c, i + 1);
      continue;
    }
    if (c === '`') {
      // A template may nest braces in its ${…}; skip to its closing backtick, counting them.
      let nest = 0;
      for (i++; i < text.length; i++) {
        if (text[i] === '$' && text[i + 1] === '{') nest++;
        else if (text[i] === '}' && nest) nest--;
        else if (text[i] === '`' && !nest) break;
      }
      continue;
    }
    if (c === '{' || c === '(' || c === '[') depth++;
    if (c === '}' || c === ')' || c === ']') depth--;
    if (depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}
