/**
 * The config probe, run as its own process (`node probe.js <root> <file>`) by the guard before a
 * config is loaded in flume's own: it loads the config and applies its plugins, then prints one line
 * saying how that went and which files of the repository it read. A config that never finishes
 * never prints, and the guard kills it. Not part of the public API.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROBE_MARK, type ProbeAnswer } from './probe-answer.js';

async function probe(root: string, file: string): Promise<ProbeAnswer> {
  const read = new Set<string>();
  const original = fs.readFileSync;
  // jiti reads every module it compiles through readFileSync: what the config pulls in shows here.
  (fs as { readFileSync: unknown }).readFileSync = function (path: fs.PathOrFileDescriptor, ...rest: unknown[]) {
    const content = (original as (...args: unknown[]) => unknown)(path, ...rest);
    const name = typeof path === 'string' ? path : path instanceof URL ? fileURLToPath(path) : undefined;
    if (name && name.startsWith(root + sep) && name !== file) read.add(name);
    return content;
  };
  syncBuiltinESMExports();
  try {
    const { loadConfig } = await import('./load.js');
    const { createFlume } = await import('../plugin.js');
    const loaded = await loadConfig(root, { file, digest: '' });
    // The plugins' own apply runs too (a plugin can hang there); an error there is reported by the
    // real load, which has flume's built-ins beside them.
    await createFlume({ plugins: loaded.plugins, config: loaded.config, root }).catch(() => undefined);
    return { ok: true, files: [...read].sort() };
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; fix?: unknown; details?: unknown };
    const code = typeof e?.code === 'string' && /^[A-Z_]+$/.test(e.code) ? e.code : 'BAD_CONFIG';
    const message = typeof e?.message === 'string' ? e.message : String(error);
    return { ok: false, files: [...read].sort(), error: { code, message, ...(typeof e.fix === 'string' ? { fix: e.fix } : {}), ...(e.details && typeof e.details === 'object' ? { details: e.details as Record<string, unknown> } : {}) } };
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [root, file] = process.argv.slice(2);
  const answer = await probe(root, file);
  process.stdout.write(`\n${PROBE_MARK}${JSON.stringify(answer)}\n`, () => process.exit(0));
}
