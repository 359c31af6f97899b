/**
 * A config written as data (package.json's `flume` key, `.flumerc`, `.flumerc.json`, `.yaml`,
 * `.yml`): parsed from the text that was found and trusted, never read again, and never followed
 * anywhere else. cosmiconfig's `"$import"` (which loads another file, a module among them) is
 * refused rather than followed, so a data config runs nothing but the plugins it names.
 */
import { basename, extname } from 'node:path';
import { createRequire } from 'node:module';
import { flumeError } from '../api/errors.js';
import type { FoundConfig } from './find.js';

const requireCjs = createRequire(import.meta.url);

/** True for a config file written as data rather than as a module. */
export function isDataConfig(file: string): boolean {
  return basename(file) === 'package.json' || ['', '.json', '.yaml', '.yml'].includes(extname(file));
}

/**
 * The config a data file holds, parsed from `found.text` (undefined: it declares nothing). Throws
 * BAD_CONFIG for text that does not parse, and for a config that asks to `$import` another file.
 */
export function readDataConfig(root: string, found: FoundConfig): unknown {
  const { file, text } = found;
  const { defaultLoaders } = requireCjs('cosmiconfig') as typeof import('cosmiconfig');
  let value: unknown;
  try {
    // cosmiconfig's own parsers (JSON with its position, YAML), on the text already read.
    const ext = extname(file);
    const parse = ext === '.json' ? defaultLoaders['.json'] : ext === '' ? defaultLoaders.noExt : defaultLoaders['.yaml'];
    value = parse(file, text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw flumeError('BAD_CONFIG', { file, message: message.split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 2).join(' ') }, {
      variant: 'unreadable',
      details: { root, file, message },
    });
  }
  if (isPackage(file)) value = (value as { flume?: unknown } | null)?.flume ?? undefined;
  const imports = importsOf(value);
  if (imports.length) {
    throw flumeError('BAD_CONFIG', { file, imports: imports.map((i) => JSON.stringify(i)).join(', '), list: imports.join(', '), root: shellWord(root) }, {
      variant: isPackage(file) ? 'packageImport' : 'dataImport',
      details: { root, file, imports },
    });
  }
  return value;
}

/** A path as one shell word, quoted only when it needs it. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function isPackage(file: string): boolean {
  return basename(file) === 'package.json';
}

/** What a config's `$import` names (a string or a list of them), or none. */
function importsOf(value: unknown): string[] {
  if (!value || typeof value !== 'object' || !('$import' in value)) return [];
  const named = (value as { $import?: unknown }).$import;
  const list = Array.isArray(named) ? named : [named];
  return list.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
}
