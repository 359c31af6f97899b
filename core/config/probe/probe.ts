/**
 * The config probe, run as its own process (`node probe.js <root> <file>`, the config's text on its
 * stdin) by the guard before a config is loaded in flume's own: it loads that text as the config
 * and applies its plugins, then prints one line saying how that went and which files the config
 * loaded besides itself: every module, by any loader (jiti's reads, node's own ES-module loader,
 * `require`), and every other file read with `readFileSync`, wherever it lies, flume's own files
 * aside. A config that never finishes never prints, and the guard kills it. Not part of the public API.
 */
import fs from 'node:fs';
import { register, syncBuiltinESMExports } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { PROBE_MARK, type ProbeAnswer } from './probe-answer.js';
import { cacheBase } from '../compile-cache.js';
import { sha256 } from '../find.js';

async function probe(root: string, file: string, text: string): Promise<ProbeAnswer> {
  const read = new Set<string>();
  // flume's own built code, package.json and dependencies (jiti among them), and its compile cache, are flume's, not the config's.
  const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
  const own = [join(packageRoot, 'dist') + sep, join(packageRoot, 'node_modules') + sep, cacheBase() + sep];
  const note = (name: string | undefined) => {
    if (name && name !== file && name !== join(packageRoot, 'package.json') && !own.some((prefix) => name.startsWith(prefix))) read.add(name);
  };
  const original = fs.readFileSync;
  // jiti reads every module it compiles through readFileSync, and so does node's `require`.
  (fs as { readFileSync: unknown }).readFileSync = function (path: fs.PathOrFileDescriptor, ...rest: unknown[]) {
    const content = (original as (...args: unknown[]) => unknown)(path, ...rest);
    note(typeof path === 'string' ? path : path instanceof URL ? fileURLToPath(path) : undefined);
    return content;
  };
  syncBuiltinESMExports();
  // What node's own ES-module loader loads (a `.mjs` the config imports, a plugin it names) is told by its hooks.
  const { port1, port2 } = new MessageChannel();
  const flushed = new Promise<void>((resolve) => {
    port1.on('message', (message: string) => (message === 'flushed' ? resolve() : note(fileURLToPath(message))));
  });
  register(pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'probe-hooks.js')).href, { data: { port: port2 }, transferList: [port2] });
  const files = async () => {
    port1.postMessage('flush');
    await flushed;
    port1.close();
    return [...read].sort();
  };
  try {
    const { loadConfig } = await import('../load.js');
    const { createFlume } = await import('../../api/plugin.js');
    const loaded = await loadConfig(root, { file, digest: sha256(text), text });
    // The plugins' own apply runs too (a plugin can hang there); an error there is reported by the
    // real load, which has flume's built-ins beside them.
    await createFlume({ plugins: loaded.plugins, config: loaded.config, root }).catch(() => undefined);
    return { ok: true, files: await files() };
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; fix?: unknown; details?: unknown };
    const code = typeof e?.code === 'string' && /^[A-Z_]+$/.test(e.code) ? e.code : 'BAD_CONFIG';
    const message = typeof e?.message === 'string' ? e.message : String(error);
    return { ok: false, files: await files(), error: { code, message, ...(typeof e.fix === 'string' ? { fix: e.fix } : {}), ...(e.details && typeof e.details === 'object' ? { details: e.details as Record<string, unknown> } : {}) } };
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [root, file] = process.argv.slice(2);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const answer = await probe(root, file, Buffer.concat(chunks).toString('utf8'));
  process.stdout.write(`\n${PROBE_MARK}${JSON.stringify(answer)}\n`, () => process.exit(0));
}
