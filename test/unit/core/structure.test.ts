import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { PROJECT } from '../../helpers/repo.js';
import { schemaFiles } from '../../../core/engine/schemas.js';
import { createFlume } from '../../../core/api/plugin.js';
import { defaultPreset } from '../../../plugins/defaults.js';

const PLUGIN_FOLDERS = ['kinds', 'deliverables', 'agents', 'plugins'];

/** The project's top level: its code folders, its tests, docs and tools, and the files that build it. */
const TOP_LEVEL = ['core', 'kinds', 'deliverables', 'agents', 'plugins', 'test', 'package.json', 'tsconfig.json', 'flume.config.ts', 'vitest.config.ts', 'docs', 'bench', 'scripts', 'bin', 'schemas'];

/** The published schemas no source writes: sluice's record, the shape of a file sluice writes and flume reads. */
const KEPT_BY_HAND = ['sluice-record.schema.json'];

function sources(folder: string): string[] {
  const root = join(PROJECT, folder);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
    }
  };
  walk(root);
  return out;
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

/**
 * What only a built-in knows, as it would appear in code: its keys as strings, its own files and
 * words. A capability the plugin declares stands in for each (DESIGN.md "One contract per extension point").
 */
const BUILT_IN_NAMES = [
  /['"`](printed|claude-code|herdr|tmux)['"`]/,
  /(type|deliverable):\s*['"`](commit|landing|openspec[\w-]*|report|conclusion)['"`]|(===?|\.get\(|\.for\()\s*['"`](commit|landing|openspec[\w-]*|report|conclusion)['"`]/,
  /\{change\}/,
  /['"`]fix['"`]/,
  /['"`]sessions['"`]|sessions\//,
];

/** Generated from a schema whose descriptions may name built-ins as examples. */
const GENERATED = [join('core', 'config', 'config-validator.generated.ts')];

/**
 * The lines of a source with its comments blanked (line numbers kept) and descriptions dropped: a
 * `description:` string is documentation for a person, which may name a built-in as an example.
 */
function codeLines(text: string): string[] {
  const blanked = text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '));
  return blanked.split('\n').map((line) => line.replace(/\/\/.*$/, '').replace(/\b(description|describe):\s*(['"`])(?:\\.|(?!\2).)*\2/g, ''));
}

describe('the layout', () => {
  it('keeps to its top level: no folder or source beside the prescribed ones', () => {
    // What git has at the root (tracked, or new and not ignored); files other than sources
    // (README.md, the lock file) may sit beside them.
    const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: PROJECT, encoding: 'utf8' });
    const names = new Set(listed.split('\n').filter(Boolean).map((path) => path.split('/')[0]));
    const extra = [...names].filter((name) => !TOP_LEVEL.includes(name) && !name.startsWith('.') && (statSync(join(PROJECT, name)).isDirectory() || /\.(ts|mts|js|mjs)$/.test(name)));
    expect(extra).toEqual([]);
  });

  it('keeps the published schemas in schemas/: none at the top level, each written by npm run schema or kept by hand, each exported', () => {
    expect(readdirSync(PROJECT).filter((name) => name.endsWith('.schema.json'))).toEqual([]);
    const inFolder = readdirSync(join(PROJECT, 'schemas')).sort();
    const written = Object.keys(schemaFiles()).filter((file) => file.endsWith('.schema.json'));
    expect(written.every((file) => file.startsWith('schemas/')), written.join(' ')).toBe(true);
    expect(inFolder).toEqual([...written.map((file) => file.slice('schemas/'.length)), ...KEPT_BY_HAND].sort());
    // The package exports each by its name alone (`flume/status.schema.json`), as it did when they sat at the top level.
    const { exports, files } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'));
    expect(Object.entries(exports).filter(([key]) => key.endsWith('.schema.json')).sort()).toEqual(inFolder.map((name) => [`./${name}`, `./schemas/${name}`]));
    expect(files).toContain('schemas');
  });

  it('core never imports a plugin folder', () => {
    for (const file of sources('core')) {
      for (const spec of imports(file)) expect(spec, relative(PROJECT, file)).not.toMatch(/^(\.\.\/)+(kinds|deliverables|agents|plugins)\//);
    }
  });

  it('the plugin folders import only core and themselves (plugins/defaults.ts alone joins them)', () => {
    for (const folder of PLUGIN_FOLDERS) {
      for (const file of sources(folder)) {
        if (relative(PROJECT, file) === join('plugins', 'defaults.ts')) continue;
        for (const spec of imports(file)) {
          const other = PLUGIN_FOLDERS.filter((f) => f !== folder && spec.match(new RegExp(`^(\\.\\./)+${f}/`)));
          expect(other, `${relative(PROJECT, file)} imports ${spec}`).toEqual([]);
        }
      }
    }
  });

  it('the plugin folders reach core only through its public entries, core/index.ts (and core/surface.ts, the commands; core/testing/index.ts, the kit)', () => {
    for (const folder of PLUGIN_FOLDERS) {
      for (const file of sources(folder)) {
        for (const spec of imports(file)) {
          const core = spec.match(/^(?:\.\.\/)+core\/(.+)$/);
          if (core) expect(core[1], `${relative(PROJECT, file)} imports ${spec}`).toMatch(/^(index|surface|testing\/index)\.js$/);
        }
      }
    }
  });

  it('core names no built-in kind, reader, driver or host outside its comments', () => {
    const found: string[] = [];
    for (const file of sources('core')) {
      if (GENERATED.includes(relative(PROJECT, file))) continue;
      codeLines(readFileSync(file, 'utf8')).forEach((line, index) => {
        for (const name of BUILT_IN_NAMES) if (name.test(line)) found.push(`${relative(PROJECT, file)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('core and the plugin folders reach an agent driver one way: through core/drivers/reach.ts, never the registry or the hooks directly', () => {
    // plugin.ts taps the hooks when a driver registers; repository.ts checks what is registered (the
    // config check); the conformance kit registers the driver under test again, observed.
    const allowed = [join('core', 'drivers', 'reach.ts'), join('core', 'api', 'plugin.ts'), join('core', 'config', 'repository.ts'), join('core', 'testing', 'bench.ts')];
    const found: string[] = [];
    for (const file of [...sources('core'), ...PLUGIN_FOLDERS.flatMap(sources), ...sources('bin')].filter((f) => !allowed.includes(relative(PROJECT, f)))) {
      codeLines(readFileSync(file, 'utf8')).forEach((line, index) => {
        if (/\.agents\.get\(|\.hooks\.(startAgent|planAgent|confirmPrompt)\b/.test(line)) found.push(`${relative(PROJECT, file)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('drivers never judge a host by its key: no source of agents/ compares a host\'s key with a string (the host declares canType)', () => {
    const found: string[] = [];
    for (const file of sources('agents')) {
      codeLines(readFileSync(file, 'utf8')).forEach((line, index) => {
        if (/\b(host\.key|\.host)\s*[!=]==?\s*['"`]|['"`]\s*[!=]==?\s*\S*(host\.key|\.host)\b/.test(line)) found.push(`${relative(PROJECT, file)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('extends each keyed hook one way: no source but core/api/plugin.ts (the registries) taps readDeliverable, startAgent, planAgent or confirmPrompt', () => {
    const found: string[] = [];
    for (const file of [...sources('core'), ...PLUGIN_FOLDERS.flatMap(sources), ...sources('bin')]) {
      if (relative(PROJECT, file) === join('core', 'api', 'plugin.ts')) continue;
      // Whole text, comments blanked: a tap may be written across lines.
      const code = codeLines(readFileSync(file, 'utf8')).join('\n');
      for (const match of code.matchAll(/\b(readDeliverable|startAgent|planAgent|confirmPrompt)\s*\.\s*(for|get)\s*\([^)]*\)\s*!?\s*\??\.\s*(tap|tapPromise|tapAsync)\b/g)) {
        found.push(`${relative(PROJECT, file)}:${code.slice(0, match.index).split('\n').length}: ${match[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('execa, simple-git and node\'s child_process are each imported in exactly one module', () => {
    const all = [...sources('core'), ...PLUGIN_FOLDERS.flatMap(sources), ...sources('bin')];
    const users = (name: string) => all.filter((file) => imports(file).includes(name)).map((file) => relative(PROJECT, file));
    expect(users('execa')).toEqual([join('core', 'support', 'exec.ts')]);
    expect(users('simple-git')).toEqual([join('core', 'support', 'git.ts')]);
    // exec.ts runs the short programs flume reads (git, tmux) on node's own child_process, and no other module does.
    expect(all.filter((file) => imports(file).some((s) => s === 'node:child_process' || s === 'child_process')).map((file) => relative(PROJECT, file))).toEqual([join('core', 'support', 'exec.ts')]);
  });

  it('every hook is declared once, in core/api/hooks.ts', () => {
    const hooks = readFileSync(join(PROJECT, 'core', 'api', 'hooks.ts'), 'utf8');
    for (const name of ['beforeReady', 'startAgent', 'confirmPrompt', 'readDeliverable', 'beforeTidy']) expect(hooks).toContain(`${name}: `);
    for (const file of sources('core').filter((f) => !f.endsWith('hooks.ts'))) {
      expect(readFileSync(file, 'utf8'), relative(PROJECT, file)).not.toMatch(/new (AsyncSeries|AsyncParallel|Sync)\w*Hook\(/);
    }
  });

  it('keeps the published schemas in step with their one source', async () => {
    // The published config schema carries the preset's drivers' option schemas (npm run schema hands them over).
    const drivers = (await createFlume({ plugins: await defaultPreset() })).agents.all();
    expect(JSON.parse(schemaFiles(drivers)['schemas/flume.schema.json']).properties.agents.properties['claude-code'].properties).toHaveProperty('configDir');
    for (const [file, content] of Object.entries(schemaFiles(drivers))) {
      expect(readFileSync(join(PROJECT, file), 'utf8'), `${file} is stale: run npm run build && npm run schema`).toBe(content);
    }
  });
});

/** Every relative import of a source, resolved to the file it names (type-only and dynamic imports too). */
function importedFiles(file: string): string[] {
  return imports(file)
    // A relative import always names its file (`./x.js`); words in a string that happen to follow "import" do not.
    .filter((spec) => spec.startsWith('.') && /\.(m?js|ts)$/.test(spec))
    .map((spec) => join(dirname(file), spec).replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts'))
    .filter((target) => existsSync(target));
}

/** The folders of core in layers: each may import its own layer and those below it, never one above. */
const LAYERS: Array<{ name: string; folders: string[] }> = [
  { name: 'support', folders: ['support'] },
  { name: 'api', folders: ['api'] },
  { name: 'state, config and drivers', folders: ['state', 'config', 'drivers'] },
  { name: 'engine', folders: ['engine'] },
  { name: 'hosts', folders: ['hosts'] },
  { name: 'cli', folders: ['cli'] },
];

function layerOf(file: string): number | undefined {
  const [top, folder] = relative(PROJECT, file).split(sep);
  if (top !== 'core' || folder === undefined || folder.endsWith('.ts')) return undefined;
  const index = LAYERS.findIndex((layer) => layer.folders.includes(folder));
  return index < 0 ? undefined : index;
}

describe('the rooms', () => {
  const all = [...sources('core'), ...PLUGIN_FOLDERS.flatMap(sources), ...sources('bin')];

  it('core is layered: support ← api ← state, config, drivers ← engine ← hosts ← cli; no module imports a layer above its own', () => {
    // support/ (git, processes, the environment) is what everything stands on; of api/ it knows the errors alone.
    const found: string[] = [];
    for (const file of sources('core')) {
      const mine = layerOf(file);
      if (mine === undefined) continue;
      for (const target of importedFiles(file)) {
        const theirs = layerOf(target);
        const errors = mine === 0 && relative(PROJECT, target).startsWith(join('core', 'api', 'error'));
        if (theirs !== undefined && theirs > mine && !errors) found.push(`${relative(PROJECT, file)} (${LAYERS[mine].name}) imports ${relative(PROJECT, target)} (${LAYERS[theirs].name})`);
      }
    }
    expect(found).toEqual([]);
  });

  it('core/api holds the contracts alone: it imports nothing of core but itself and support/', () => {
    const found = sources(join('core', 'api')).flatMap((file) =>
      importedFiles(file)
        .filter((target) => !relative(PROJECT, target).startsWith(join('core', 'api') + sep) && !relative(PROJECT, target).startsWith(join('core', 'support') + sep))
        .map((target) => `${relative(PROJECT, file)} imports ${relative(PROJECT, target)}`),
    );
    expect(found).toEqual([]);
  });

  it('has no import circle anywhere (type-only and dynamic imports counted)', () => {
    const edges = new Map(all.map((file) => [file, importedFiles(file)]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const walk = (file: string, path: string[]) => {
      state.set(file, 'open');
      for (const next of edges.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(PROJECT, f)).join(' → '));
        else if (!state.has(next)) walk(next, [...path, next]);
      }
      state.set(file, 'done');
    };
    for (const file of all) if (!state.has(file)) walk(file, [file]);
    expect(circles).toEqual([]);
  });

  it('keeps every folder of code small enough to read whole: at most 12 files', () => {
    const crowded: string[] = [];
    const walk = (dir: string) => {
      const names = readdirSync(dir);
      const files = names.filter((name) => statSync(join(dir, name)).isFile());
      if (files.length > 12) crowded.push(`${relative(PROJECT, dir)}: ${files.length} files`);
      for (const name of names) if (statSync(join(dir, name)).isDirectory() && name !== 'fixtures' && name !== 'node_modules') walk(join(dir, name));
    };
    for (const folder of ['core', ...PLUGIN_FOLDERS, 'bin']) walk(join(PROJECT, folder));
    expect(crowded).toEqual([]);
  });

  it('keeps what it keeps between readings in named caches (core/support/kept.ts), not in module-level maps', () => {
    // Compiled checks of a module's own schemas are code, not facts read from anything that changes.
    const allowed = [join('plugins', 'claude', 'mcp-server.ts')];
    const found: string[] = [];
    for (const file of all.filter((f) => !allowed.includes(relative(PROJECT, f)))) {
      codeLines(readFileSync(file, 'utf8')).forEach((line, index) => {
        if (/^(const|let)\s+\w+(\s*:[^=]+)?\s*=\s*new Map\b/.test(line)) found.push(`${relative(PROJECT, file)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});
